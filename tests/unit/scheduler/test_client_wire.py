"""ApiClient's wire helpers.  url: a percent-encoded path joins the server's origin exactly as
aiohttp would parse the string ``base_url + path`` (what the client sent before), so requests reach
the same URL.  complete_lines: a watch stream's buffer splits into the lines splitting on newlines
gives."""

import orjson
import pytest
from fakeapi.scheduler.client import GVR, PODS, RESOURCE_SLICES, ApiClient, complete_lines
from yarl import URL

CLUSTER_ROLES = GVR("rbac.authorization.k8s.io", "v1", "clusterroles", False)

SERVERS = ["http://127.0.0.1:6443", "http://127.0.0.1:6443/", "https://[::1]:443", "http://localhost",
           "http://127.0.0.1:8080/prefix", "http://127.0.0.1:8080/a/b/", "http://h:1/?x=1", "http://h:1/#f"]

PATHS = [
    pytest.param(PODS.path("default", "latency-5", "status"), id="pod-status"),
    pytest.param(PODS.path(None), id="all-namespaces"),
    pytest.param(RESOURCE_SLICES.path(None, "node-1-slice"), id="cluster-scoped"),
    pytest.param(CLUSTER_ROLES.path(None, "system:kube-scheduler"), id="colon"),
    pytest.param(CLUSTER_ROLES.path(None, "a b%2F?#é/x"), id="needs-quoting"),
    pytest.param(PODS.path("ns with space", "p"), id="quoted-namespace"),
    pytest.param(PODS.path("default", ".."), id="dot-dot"),
    pytest.param(PODS.path("default", "."), id="dot"),
    pytest.param(PODS.path("default", ".hidden", "status"), id="leading-dot"),
    pytest.param(PODS.path(".", "p"), id="dot-namespace"),
]


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("path", PATHS)
def test_encoded_path_is_the_url_the_string_makes(server: str, path: str) -> None:
    client = ApiClient(server)
    expected = URL(client.base_url + path)
    url = URL(client.url(path))
    assert (str(url), url.raw_path, url.raw_query_string) == (str(expected), expected.raw_path,
                                                               expected.raw_query_string)


@pytest.mark.parametrize("path", ["/version", "/apis/a b", "/openapi/v3/apis/é"], ids=["plain", "space", "unicode"])
def test_a_raw_path_is_joined_as_a_string(path: str) -> None:
    client = ApiClient("http://127.0.0.1:6443")
    assert client.url(path, encoded=False) == "http://127.0.0.1:6443" + path


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
