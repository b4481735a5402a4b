"""ApiClient's wire helpers.  target: the request target is the server's path prefix, the
percent-encoded path and the query, with a name of dots kept a name (encoded) rather than a dot
segment.  complete_lines: a watch stream's buffer splits into the lines splitting on newlines
gives."""

from urllib.parse import parse_qsl, unquote, urlsplit

import orjson
import pytest
from fakeapi.scheduler.client import GVR, PODS, RESOURCE_SLICES, ApiClient, complete_lines

CLUSTER_ROLES = GVR("rbac.authorization.k8s.io", "v1", "clusterroles", False)

SERVERS = [("http://127.0.0.1:6443", ""), ("http://127.0.0.1:6443/", ""), ("https://[::1]:443", ""),
           ("http://localhost", ""), ("http://127.0.0.1:8080/prefix", "/prefix"),
           ("http://127.0.0.1:8080/a/b/", "/a/b")]

NAMES = [
    pytest.param(("default", "latency-5"), id="plain"),
    pytest.param(("default", "system:kube-scheduler"), id="colon"),
    pytest.param(("default", "a b%2F?#é/x"), id="needs-quoting"),
    pytest.param(("ns with space", "p"), id="quoted-namespace"),
    pytest.param(("default", ".."), id="dot-dot"),
    pytest.param(("default", "."), id="dot"),
    pytest.param(("default", ".hidden"), id="leading-dot"),
    pytest.param((".", "p"), id="dot-namespace"),
]


@pytest.mark.parametrize(("server", "prefix"), SERVERS)
@pytest.mark.parametrize("names", NAMES)
async def test_the_request_target_names_the_object(server: str, prefix: str, names: tuple[str, str]) -> None:
    namespace, name = names
    async with ApiClient(server) as api:
        target = api.http.prefix + api.target(PODS.path(namespace, name, "status"), {"fieldManager": "a b&c"})
    path, _, query = target.partition("?")
    segments = path.split("/")
    assert path.startswith(prefix + "/api/v1/namespaces/")
    assert [unquote(s) for s in segments[-4:]] == [namespace, "pods", name, "status"]
    assert all(s not in (".", "..") for s in segments)
    assert dict(parse_qsl(query)) == {"fieldManager": "a b&c"}


@pytest.mark.parametrize("gvr", [RESOURCE_SLICES, CLUSTER_ROLES])
def test_cluster_scoped_paths_have_no_namespace(gvr: GVR) -> None:
    assert gvr.path("ignored", "x:y") == f"/apis/{gvr.group}/{gvr.version}/{gvr.plural}/x%3Ay"


@pytest.mark.parametrize("path", ["/version", "/apis/a b", "/openapi/v3/apis/é"], ids=["plain", "space", "unicode"])
def test_a_raw_path_is_percent_encoded(path: str) -> None:
    target = ApiClient.target(path, encoded=False)
    assert target.isascii() and " " not in target
    assert unquote(urlsplit(target).path) == path


@pytest.mark.parametrize("buffer", [
    pytest.param(b'{"a":1}\n', id="one-line"),
    pytest.param(b'{"a":1}\n{"b":2}\n', id="two-lines"),
    pytest.param(b'{"a":1}\n{"b":', id="line-and-part"),
    pytest.param(b'{"a":', id="part"),
    pytest.param(b"\n", id="blank"),
    pytest.param(b' \t\r\n', id="whitespace-line"),
    pytest.param(b'{"a":1}\r\n', id="crlf"),
    pytest.param(b'\n{"a":1}\n', id="blank-first"),
    pytest.param(b'{"a":1}\n\n', id="blank-last"),
    pytest.param(b'{"a":"x\\ny"}\n', id="escaped-newline"),
])
def test_complete_lines_are_the_split_lines(buffer: bytes) -> None:
    *expected, expected_rest = buffer.split(b"\n")
    lines, rest = complete_lines(buffer)
    assert rest == expected_rest
    # Each line is what splitting gives, but perhaps with its newline; empty and blank lines are
    # told by the watch loop's test, the others decode alike.
    assert [line.rstrip(b"\n") for line in lines] == expected
    kept = [orjson.loads(line) for line in lines if line and not line.isspace()]
    assert kept == [orjson.loads(line) for line in expected if line.strip()]
