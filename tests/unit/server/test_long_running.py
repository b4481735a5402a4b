"""Which requests the request timeout leaves alone: upstream's LongRunningFunc over RequestInfo."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from fakeapi.server.connections import LONG_RUNNING_SUBRESOURCES, long_running, long_running_request


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/namespaces/default/pods", {"watch": "true"}, True),
    ("GET", "/api/v1/pods", {"watch": "1"}, True),
    ("GET", "/api/v1/namespaces/default/configmaps", {"watch": "TRUE"}, True),
    ("GET", "/api/v1/namespaces/default/configmaps", {"watch": "false"}, False),
    ("GET", "/api/v1/namespaces/default/configmaps", {}, False),
    ("POST", "/api/v1/namespaces/default/configmaps", {"watch": "true"}, False),
    ("GET", "/api/v1/namespaces/default/pods/p/log", {}, True),
    ("GET", "/api/v1/namespaces/default/pods/p/log", {"follow": "true"}, True),
    ("POST", "/api/v1/namespaces/default/pods/p/exec", {}, True),
    ("GET", "/api/v1/namespaces/default/pods/p/attach", {}, True),
    ("POST", "/api/v1/namespaces/default/pods/p/portforward", {}, True),
    ("GET", "/api/v1/nodes/n/proxy", {}, True),
    ("PUT", "/api/v1/namespaces/default/pods/p/status", {}, False),
    ("GET", "/api/v1/namespaces/default/pods/log", {}, False),
    ("GET", "/api/v1/namespaces/log/status", {}, False),
    ("PUT", "/api/v1/namespaces/n/finalize", {}, False),
    ("GET", "/api", {}, False),
], ids=["watch-true", "watch-1-cluster-wide", "watch-any-case", "watch-false", "list", "post-with-watch",
        "log", "log-follow", "exec", "attach", "portforward", "node-proxy", "status", "pod-named-log",
        "namespace-status", "namespace-finalize", "discovery"])
def test_long_running(method: str, path: str, query: dict[str, str], expected: bool) -> None:
    assert long_running(method, path, query) is expected


@pytest.mark.parametrize("subresource", sorted(LONG_RUNNING_SUBRESOURCES))
def test_every_long_running_subresource_passes_the_quick_check(subresource: str) -> None:
    # The quick check spells the words out: a subresource added to the set must be added there too.
    target = f"/api/v1/namespaces/default/pods/p/{subresource}"
    assert long_running_request(make_mocked_request("POST", target))
    assert not long_running_request(make_mocked_request("POST", "/api/v1/namespaces/default/pods/p/status"))


@pytest.mark.parametrize("target", [
    "/api/v1/pods?watch=true&resourceVersion=&allowWatchBookmarks=true&sendInitialEvents=true",
    "/apis/resource.k8s.io/v1/resourceclaims?resourceVersion=5&watch=1&timeoutSeconds=524",
    "/api/v1/namespaces/default/configmaps?watch=false",
    "/api/v1/namespaces/default/configmaps?watch=0&watch=true",
    "/api/v1/namespaces/default/configmaps?watch=true&watch=0",
    "/api/v1/namespaces/default/configmaps?watch",
    "/api/v1/namespaces/default/configmaps?watch=",
    "/api/v1/namespaces/default/configmaps?watchx=1",
    "/api/v1/namespaces/default/configmaps?labelSelector=watch",
    "/api/v1/namespaces/default/configmaps/watch?watch=true",
    "/api/v1/watch/namespaces/default/pods",
    "/api/v1/namespaces/watch/pods?watch=TRUE",
    "/api/v1/namespaces/default/pods/p/log?follow=true",
    "/api/v1/namespaces/default/pods/log",
    "/api/v1/namespaces/default/pods?wat%63h=1",
    "/api/v1/namespaces/default/pods?watch=tr+ue",
    "/api/v1/namespaces/default/pods?wat+ch=1",
    "/api/v1/namespaces/default/pods/./p/log",
    "/api/v1/namespaces/default/pods/../pods?watch=1",
    "/watch?watch=1",
], ids=lambda target: target.split("/", 3)[-1][:48])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_quick_answer_is_the_parsed_requests(method: str, target: str) -> None:
    # The quick path reads the target itself (and remembers answers by method, path and watch
    # value); it must agree with the attributes of the request as aiohttp parses it, twice over.
    for _ in range(2):
        request = make_mocked_request(method, target)
        assert long_running_request(request) is long_running(method, request.path, request.query)
