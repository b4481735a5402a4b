"""Request attributes from method, path and query, as upstream's RequestInfoFactory parses them."""

from __future__ import annotations

import pytest

from fakeapi.auth.attributes import request_attributes
from fakeapi.auth.users import UserInfo

USER = UserInfo("alice")

# (id, method, path, query, expected (verb, namespace, group, version, resource, subresource, name) or
# (verb, path) for non-resource requests)
CASES = [
    ("list-core", "GET", "/api/v1/namespaces/ns/pods", {}, ("list", "ns", "", "v1", "pods", "", "")),
    ("list-all-namespaces", "GET", "/api/v1/pods", {}, ("list", "", "", "v1", "pods", "", "")),
    ("get", "GET", "/api/v1/namespaces/ns/pods/p", {}, ("get", "ns", "", "v1", "pods", "", "p")),
    ("watch-param", "GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "ns", "", "v1", "pods", "", "")),
    ("watch-empty-param", "GET", "/api/v1/pods", {"watch": ""}, ("watch", "", "", "v1", "pods", "", "")),
    ("watch-false", "GET", "/api/v1/pods", {"watch": "0"}, ("list", "", "", "v1", "pods", "", "")),
    ("watch-prefix", "GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "ns", "", "v1", "pods", "", "")),
    ("watch-one-by-field-selector", "GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
     {"watch": "1", "fieldSelector": "metadata.name=leader"},
     ("watch", "ns", "coordination.k8s.io", "v1", "leases", "", "leader")),
    ("not-equals-selector-names-nothing", "GET", "/api/v1/pods", {"fieldSelector": "metadata.name!=x"},
     ("list", "", "", "v1", "pods", "", "")),
    ("create", "POST", "/apis/apps/v1/namespaces/ns/deployments", {},
     ("create", "ns", "apps", "v1", "deployments", "", "")),
    ("update-status", "PUT", "/api/v1/namespaces/ns/pods/p/status", {},
     ("update", "ns", "", "v1", "pods", "status", "p")),
    ("patch", "PATCH", "/api/v1/nodes/n1", {}, ("patch", "", "", "v1", "nodes", "", "n1")),
    ("delete", "DELETE", "/api/v1/namespaces/ns/configmaps/c", {}, ("delete", "ns", "", "v1", "configmaps", "", "c")),
    ("deletecollection", "DELETE", "/api/v1/namespaces/ns/configmaps", {},
     ("deletecollection", "ns", "", "v1", "configmaps", "", "")),
    ("binding", "POST", "/api/v1/namespaces/ns/pods/p/binding", {}, ("create", "ns", "", "v1", "pods", "binding", "p")),
    ("namespace-itself", "GET", "/api/v1/namespaces/ns", {}, ("get", "ns", "", "v1", "namespaces", "", "ns")),
    ("namespace-finalize", "PUT", "/api/v1/namespaces/ns/finalize", {},
     ("update", "ns", "", "v1", "namespaces", "finalize", "ns")),
    ("token", "POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", {},
     ("create", "ns", "", "v1", "serviceaccounts", "token", "sa")),
    ("review", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {},
     ("create", "", "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "", "")),
]
NON_RESOURCE = [
    ("healthz", "GET", "/healthz", ("get", "/healthz")),
    ("version", "GET", "/version/", ("get", "/version/")),
    ("api-root", "GET", "/api", ("get", "/api")),
    ("core-discovery", "GET", "/api/v1", ("get", "/api/v1")),
    ("group-discovery", "GET", "/apis/apps/v1", ("get", "/apis/apps/v1")),
    ("openapi", "GET", "/openapi/v3/apis/apps/v1", ("get", "/openapi/v3/apis/apps/v1")),
    ("post-elsewhere", "POST", "/logs", ("post", "/logs")),
]


@pytest.mark.parametrize(("method", "path", "query", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_resource_requests(method: str, path: str, query: dict[str, str], expected: tuple[str, ...]) -> None:
    attrs = request_attributes(USER, method, path, query)
    assert attrs.resource_request
    assert (attrs.verb, attrs.namespace, attrs.api_group, attrs.api_version, attrs.resource, attrs.subresource,
            attrs.name) == expected
    assert attrs.user is USER and attrs.path == path


@pytest.mark.parametrize(("method", "path", "expected"), [c[1:] for c in NON_RESOURCE],
                         ids=[c[0] for c in NON_RESOURCE])
def test_non_resource_requests(method: str, path: str, expected: tuple[str, str]) -> None:
    attrs = request_attributes(USER, method, path, {})
    assert not attrs.resource_request
    assert (attrs.verb, attrs.path) == expected
