"""Write options from a request's query and User-Agent (shared between requests that agree)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from fakeapi.errors import StatusError
from fakeapi.registry.writes import WriteOptions
from fakeapi.server import handlers
from fakeapi.server.handlers import write_options

CASES = [
    ("", "kubectl/v1.37.0 (linux/amd64)", WriteOptions("kubectl", False, "Warn", False, "")),
    ("?fieldManager=me", "kubectl/v1.37.0", WriteOptions("me", False, "Warn", False, "",
                                                         sent=(("fieldManager", "me"),))),
    ("?dryRun=All&fieldValidation=Strict", "client-go/1.37",
     WriteOptions("client-go", True, "Strict", False, "", sent=(("fieldValidation", "Strict"),))),
    ("?force=true&fieldValidation=Ignore", "python",
     WriteOptions("python", False, "Ignore", True, "", sent=(("fieldValidation", "Ignore"),))),
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


AGENTS = [
    # (id, query, headers, apply, expected manager): the same query with or without a User-Agent,
    # and as an apply patch (which takes only the query's manager), must each get their own.
    ("agent", "", {"User-Agent": "kubectl/v1.37.0"}, False, "kubectl"),
    ("no-agent", "", {}, False, "unknown"),
    ("empty-agent", "", {"User-Agent": ""}, False, ""),
    ("apply-without-manager", "", {"User-Agent": "kubectl/v1.37.0"}, True, ""),
    ("apply-with-manager", "?fieldManager=me", {"User-Agent": "kubectl/v1.37.0"}, True, "me"),
    ("query-manager", "?fieldManager=me", {}, False, "me"),
]


def test_the_user_agent_and_apply_tell_options_apart() -> None:
    for _ in range(2):
        for _id, query, headers, apply, manager in AGENTS:
            request = make_mocked_request("PATCH", f"/api/v1/namespaces/default/configmaps/c{query}", headers=headers)
            assert write_options(request, apply=apply).manager == manager, _id


@pytest.mark.parametrize("query", ["?dryRun=Some", "?fieldValidation=Loose", "?fieldManager=" + "m" * 129])
def test_a_refused_query_is_refused_every_time(query: str) -> None:
    for _ in range(2):
        request = make_mocked_request("POST", f"/api/v1/namespaces/default/configmaps{query}")
        with pytest.raises(StatusError):
            write_options(request)


def test_options_stay_right_past_the_memo_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # More distinct queries than are remembered: the memo starts again, answers stay right.
    monkeypatch.setattr(handlers._options_seen, "limit", 3)
    for n in [*range(8), *range(8)]:
        request = make_mocked_request("POST", f"/api/v1/namespaces/default/configmaps?fieldManager=m{n}")
        assert write_options(request).manager == f"m{n}"
