"""The watch stream's direct writer: HTTP chunk framing on asyncio's and uvloop's transports."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import uvloop

from fakeapi.server.watch_stream import chunk_sink

LOOPS = [asyncio.new_event_loop, uvloop.new_event_loop]


class Collector(asyncio.Protocol):
    def __init__(self) -> None:
        self.data = b""
        self.arrived = asyncio.Event()
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.arrived.set()


async def exchange() -> None:
    loop = asyncio.get_running_loop()
    collector = Collector()
    server = await loop.create_server(lambda: collector, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    try:
        sink = chunk_sink(transport)
        assert sink is not None  # uvloop's transports do not subclass asyncio's: duck typing
        assert sink([b'{"a":1}\n', b'{"b":2}\n'])
        expected = b'10\r\n{"a":1}\n{"b":2}\n\r\n'  # one chunk: hex length, lines, CRLF
        async with asyncio.timeout(10):
            while len(collector.data) < len(expected):
                collector.arrived.clear()
                await collector.arrived.wait()
        assert collector.data == expected
        transport.set_write_buffer_limits(high=0)  # a buffer at its high-water mark: the reader writes
        assert not sink([b"x\n"])
        transport.set_write_buffer_limits()
        transport.close()
        assert not sink([b"x\n"])  # nor onto a closing connection
    finally:
        transport.close()
        if collector.transport is not None:  # a server's close leaves its accepted connections open
            collector.transport.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("new_loop", LOOPS, ids=["asyncio", "uvloop"])
def test_chunk_sink_writes_one_chunk_and_refuses_full_or_closing_connections(
        new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    loop = new_loop()
    try:
        loop.run_until_complete(exchange())
    finally:
        loop.close()


def test_no_sink_without_a_transport() -> None:
    assert chunk_sink(None) is None


class _WritesOnly:
    def write(self, data: bytes) -> None: ...


class _Buffered(_WritesOnly):
    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (16384, 65536)


def test_a_sink_only_for_transports_with_its_methods_decided_per_class() -> None:
    for _ in range(2):  # the second time from what was decided for the class
        assert chunk_sink(_WritesOnly()) is None
        assert chunk_sink(_Buffered()) is not None
        assert chunk_sink(None) is None
