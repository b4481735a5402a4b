"""ApiClient.url: a percent-encoded path joins the server's origin exactly as aiohttp would parse
the string ``base_url + path`` (what the client sent before), so requests reach the same URL."""

import pytest
from fakeapi.scheduler.client import GVR, PODS, RESOURCE_SLICES, ApiClient
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
