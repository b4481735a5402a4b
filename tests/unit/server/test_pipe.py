"""The in-memory pipe behaves towards its two protocols as a connected stream socket does:
order, delivery in a later iteration, flow control both ways, close, half-close and abort."""

from __future__ import annotations

import asyncio

import pytest

from fakeapi.server.pipe import HIGH_WATER, PipeTransport, pipe


class Recorder(asyncio.Protocol):
    """Everything a protocol is told, in order."""

    def __init__(self, keep_half_open: bool = False) -> None:
        self.calls: list[tuple[str, object]] = []
        self.transport: PipeTransport | None = None
        self.keep_half_open = keep_half_open

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, PipeTransport)
        self.transport = transport
        self.calls.append(("made", None))

    def data_received(self, data: bytes) -> None:
        self.calls.append(("data", data))

    def eof_received(self) -> bool:
        self.calls.append(("eof", None))
        return self.keep_half_open

    def connection_lost(self, exc: Exception | None) -> None:
        self.calls.append(("lost", type(exc).__name__ if exc else None))

    def pause_writing(self) -> None:
        self.calls.append(("pause_writing", None))

    def resume_writing(self) -> None:
        self.calls.append(("resume_writing", None))

    def received(self) -> bytes:
        return b"".join(arg for name, arg in self.calls if name == "data")  # type: ignore[misc]

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


async def settle() -> None:
    """Let every callback already scheduled (and those they schedule) run."""
    for _ in range(5):
        await asyncio.sleep(0)


def connected(keep_half_open: bool = False) -> tuple[Recorder, Recorder, PipeTransport, PipeTransport]:
    server, client = Recorder(keep_half_open), Recorder()
    a, b = pipe(asyncio.get_running_loop(), server, client)
    return server, client, a, b


async def test_the_first_protocol_is_connected_first_and_bytes_arrive_later_in_order() -> None:
    server, client, a, b = connected()
    assert server.names() == ["made"] and client.names() == ["made"]
    b.write(b"GET / HTTP/1.1\r\n")
    b.writelines([b"Host: x\r\n", b"\r\n"])
    assert server.received() == b""  # not within write(): a later loop iteration
    await settle()
    assert server.received() == b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    assert server.names() == ["made", "data"]  # what arrived together, in one call
    a.write(b"HTTP/1.1 200 OK\r\n")
    await settle()
    assert client.received() == b"HTTP/1.1 200 OK\r\n"


async def test_a_reader_that_pauses_holds_the_writer_back_above_the_high_water_mark() -> None:
    server, client, a, b = connected()
    b.pause_reading()
    assert not b.is_reading()
    chunk = b"x" * (HIGH_WATER // 2)
    a.write(chunk)
    a.write(chunk)
    assert a.get_write_buffer_size() == HIGH_WATER
    assert "pause_writing" not in server.names()  # at the mark, not above it
    a.write(b"y")
    assert server.names().count("pause_writing") == 1
    a.write(b"z")  # told once
    assert server.names().count("pause_writing") == 1
    await settle()
    assert client.received() == b""  # nothing while paused
    b.resume_reading()
    await settle()
    assert client.received() == chunk + chunk + b"yz"
    assert a.get_write_buffer_size() == 0
    assert server.names()[-1] == "resume_writing"


async def test_write_buffer_limits() -> None:
    _, _, a, _ = connected()
    assert a.get_write_buffer_limits() == (HIGH_WATER // 4, HIGH_WATER)
    a.set_write_buffer_limits(high=100)
    assert a.get_write_buffer_limits() == (25, 100)
    with pytest.raises(ValueError, match="must be >= low"):
        a.set_write_buffer_limits(high=10, low=20)


async def test_close_delivers_what_was_written_then_the_end_of_data() -> None:
    server, client, _a, b = connected()
    b.write(b"last words")
    b.close()
    assert b.is_closing()
    b.write(b"dropped")  # after close, as a socket transport drops it
    await settle()
    assert server.received() == b"last words"
    assert server.names() == ["made", "data", "eof", "lost"]  # eof_received() was falsy: closed
    assert client.names() == ["made", "lost"]
    b.close()
    await settle()
    assert client.names().count("lost") == 1


async def test_a_protocol_may_keep_the_half_open_connection() -> None:
    server, client, a, b = connected(keep_half_open=True)
    b.close()
    await settle()
    assert server.names() == ["made", "eof"]
    assert not a.is_closing()
    a.close()
    await settle()
    assert server.names() == ["made", "eof", "lost"]
    assert client.names() == ["made", "lost"]


async def test_abort_drops_the_bytes_in_flight_and_resets_the_other_end() -> None:
    server, client, _a, b = connected()
    b.write(b"never delivered")
    b.abort()
    await settle()
    assert server.received() == b""
    assert server.calls[-1] == ("lost", "ConnectionResetError")
    assert client.calls[-1] == ("lost", None)


async def test_a_writer_paused_for_a_reader_that_goes_away_is_resumed() -> None:
    server, _client, a, b = connected()
    b.pause_reading()
    a.write(b"x" * (HIGH_WATER + 1))
    assert server.names()[-1] == "pause_writing"
    b.close()
    await settle()
    assert "resume_writing" in server.names()
    assert a.get_write_buffer_size() == 0


async def test_a_protocol_that_fails_on_its_data_loses_the_connection(caplog: pytest.LogCaptureFixture) -> None:
    class Failing(Recorder):
        def data_received(self, data: bytes) -> None:
            raise RuntimeError("parser bug")

    server, client = Failing(), Recorder()
    _, b = pipe(asyncio.get_running_loop(), server, client)
    b.write(b"x")
    await settle()
    assert "a pipe's protocol failed" in caplog.text
    assert server.names()[-1] == "lost"
    assert client.calls[-1] == ("lost", "ConnectionResetError")
