"""Writes whose outcome may be unknown: which failures leave it open, and write_until_known."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.client import outcome_unknown
from fakeapi.scheduler.http import ProtocolError
from fakeapi.scheduler.writes import write_until_known

from fakeapi.errors import Conflict, Invalid, NotFound, StatusError, Timeout, TooManyRequests


@pytest.mark.parametrize(("exc", "unknown"), [
    (ConnectionResetError("the server closed the connection before its answer was complete"), True),
    (ProtocolError("a chunk does not end with CRLF"), True),
    (ConnectionResetError(104, "Connection reset by peer"), True),
    (TimeoutError(), True),
    (StatusError("internal error"), True),
    (Timeout("etcd took too long"), True),
    (Conflict("the object has been modified"), False),
    (NotFound("gone"), False),
    (Invalid("bad"), False),
    (TooManyRequests("slow down"), False),
    (ValueError("a bug"), False),
], ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v))
def test_outcome_unknown(exc: BaseException, unknown: bool) -> None:
    assert outcome_unknown(exc) is unknown


class Server:
    """One value on a fake server; ``write`` fails as scripted, before or after committing."""

    def __init__(self, script: list[str]) -> None:
        self.script = script      # per write: "ok", "lost" (committed, answer lost), "reset", "conflict"
        self.value: str | None = None
        self.writes = 0
        self.reads = 0
        self.read_failures = 0

    async def write(self) -> str:
        self.writes += 1
        step = self.script.pop(0) if self.script else "ok"
        if step == "reset":
            raise ConnectionResetError(104, "Connection reset by peer")
        if step == "conflict":
            raise Conflict("the object has been modified")
        self.value = "written"
        if step == "lost":
            raise ConnectionResetError("the server closed the connection before its answer was complete")
        return "written"

    async def landed(self) -> Any:
        self.reads += 1
        if self.read_failures:
            self.read_failures -= 1
            raise ConnectionResetError("the server closed the connection before its answer was complete")
        return self.value


async def test_a_lost_answer_is_found_by_the_re_read() -> None:
    server = Server(["lost"])
    assert await write_until_known(server.write, server.landed, what="w") == "written"
    assert (server.writes, server.reads) == (1, 1)


async def test_a_write_that_never_arrived_is_sent_again() -> None:
    server = Server(["reset", "reset"])
    assert await write_until_known(server.write, server.landed, what="w") == "written"
    assert (server.writes, server.reads) == (3, 2)


async def test_the_re_read_is_repeated_until_answered() -> None:
    server = Server(["lost"])
    server.read_failures = 2
    assert await write_until_known(server.write, server.landed, what="w") == "written"
    assert (server.writes, server.reads) == (1, 3)


async def test_a_conflict_from_our_own_resent_write_is_success() -> None:
    server = Server(["conflict"])
    server.value = "written"    # aiohttp resent a committed PUT: 409, yet the write is there
    assert await write_until_known(server.write, server.landed, what="w") == "written"
    assert server.writes == 1


async def test_other_conflicts_are_retried_then_raised() -> None:
    server = Server(["conflict"] * 10)
    with pytest.raises(Conflict):
        await write_until_known(server.write, server.landed, what="w", conflict_attempts=3)
    assert (server.writes, server.reads) == (3, 3)


async def test_definite_errors_are_raised_at_once() -> None:
    async def write() -> str:
        raise Invalid("spec.x: Invalid value")

    async def landed() -> str | None:
        raise AssertionError("a definite answer needs no re-read")
    with pytest.raises(Invalid):
        await write_until_known(write, landed, what="w")


async def test_the_re_read_may_say_the_write_cannot_apply() -> None:
    server = Server(["reset"])

    async def landed() -> str | None:
        raise NotFound("deleted meanwhile")
    with pytest.raises(NotFound):
        await write_until_known(server.write, landed, what="w")
