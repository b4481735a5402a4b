"""Which requests the request timeout leaves alone: upstream's LongRunningFunc over RequestInfo."""

from __future__ import annotations

import pytest

from fakeapi.server.connections import long_running


@pytest.mark.parametrize(("method", "tail", "query", "expected"), [
    ("GET", "namespaces/default/pods", {"watch": "true"}, True),
    ("GET", "pods", {"watch": "1"}, True),
    ("GET", "namespaces/default/configmaps", {"watch": "TRUE"}, True),
    ("GET", "namespaces/default/configmaps", {"watch": "false"}, False),
    ("GET", "namespaces/default/configmaps", {}, False),
    ("POST", "namespaces/default/configmaps", {"watch": "true"}, False),
    ("GET", "namespaces/default/pods/p/log", {}, True),
    ("GET", "namespaces/default/pods/p/log", {"follow": "true"}, True),
    ("POST", "namespaces/default/pods/p/exec", {}, True),
    ("GET", "namespaces/default/pods/p/attach", {}, True),
    ("POST", "namespaces/default/pods/p/portforward", {}, True),
    ("GET", "nodes/n/proxy", {}, True),
    ("PUT", "namespaces/default/pods/p/status", {}, False),
    ("GET", "namespaces/default/pods/log", {}, False),
    ("GET", "namespaces/log/status", {}, False),
    ("PUT", "namespaces/n/finalize", {}, False),
    ("GET", None, {}, False),
], ids=["watch-true", "watch-1-cluster-wide", "watch-any-case", "watch-false", "list", "post-with-watch",
        "log", "log-follow", "exec", "attach", "portforward", "node-proxy", "status", "pod-named-log",
        "namespace-status", "namespace-finalize", "discovery"])
def test_long_running(method: str, tail: str | None, query: dict[str, str], expected: bool) -> None:
    assert long_running(method, tail, query) is expected
