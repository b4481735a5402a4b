"""Write options from a request's query and User-Agent (shared between requests that agree)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from fakeapi.registry.writes import WriteOptions
from fakeapi.server.handlers import write_options

CASES = [
    ("", "kubectl/v1.37.0 (linux/amd64)", WriteOptions("kubectl", False, "Warn", False, "")),
    ("?fieldManager=me", "kubectl/v1.37.0", WriteOptions("me", False, "Warn", False, "")),
    ("?dryRun=All&fieldValidation=Strict", "client-go/1.37", WriteOptions("client-go", True, "Strict", False, "")),
    ("?force=true&fieldValidation=Ignore", "python", WriteOptions("python", False, "Ignore", True, "")),
]


@pytest.mark.parametrize("order", [1, -1], ids=["forward", "backward"])
def test_each_request_gets_its_own_options(order: int) -> None:
    # Twice over, in either order: options shared between requests never leak into another's.
    for query, agent, expected in CASES[::order] * 2:
        request = make_mocked_request("POST", f"/api/v1/namespaces/default/configmaps{query}",
                                      headers={"User-Agent": agent})
        assert write_options(request) == expected
    request = make_mocked_request("PUT", "/api/v1/namespaces/default/pods/p/status", headers={"User-Agent": "k"})
    assert write_options(request, "status") == WriteOptions("k", False, "Warn", False, "status")
