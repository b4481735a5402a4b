"""The connection limit in force when ServerOptions leaves it to the open-file limit."""

from __future__ import annotations

import resource

import pytest

from fakeapi.server import connections
from fakeapi.server.connections import connection_limit


def test_a_configured_limit_is_used_as_is() -> None:
    assert connection_limit(7) == 7


@pytest.mark.parametrize(("soft", "limit"), [(1024, 448), (256, 64), (100, 16), (resource.RLIM_INFINITY, 32704)])
def test_the_default_leaves_room_for_the_process_and_in_process_clients(monkeypatch: pytest.MonkeyPatch, soft: int,
                                                                       limit: int) -> None:
    monkeypatch.setattr(connections.resource, "getrlimit", lambda _: (soft, resource.RLIM_INFINITY))
    assert connection_limit(None) == limit
