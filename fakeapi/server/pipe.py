"""An in-memory byte stream between two asyncio protocols of one event loop.

``FakeCluster``'s in-process control plane reaches its server through these: its HTTP client's
protocol (``fakeapi.scheduler.http``) at one end writes the same HTTP/1.1 bytes it would write to
a socket, and the server's protocol at the other parses them as it parses a socket's, without
the socket's system calls, selector registrations and file descriptors (23 streaming watches set
up and torn down: ~5.2 ms of CPU over a Unix socket, ~3.5 ms through a pipe, both sides bare
aiohttp, when this was measured).

It behaves as a connected stream socket does towards the protocols:

- what one end writes reaches the other end's ``data_received`` in a later loop iteration, in
  order, as few calls as the reader's pace allows (everything that arrived, joined);
- flow control: a reader that pauses reading leaves the bytes in the pipe; its writer's write
  buffer (``get_write_buffer_size``) is the bytes it wrote that the reader has not received, and
  its protocol is told ``pause_writing`` above the high-water mark and ``resume_writing`` once the
  reader took them down to the low-water mark (asyncio's defaults, 64 KiB and a quarter of it);
- ``close`` lets the other end receive what was written, then ``eof_received`` (and a close,
  unless its protocol keeps the half-open connection); ``abort`` drops the bytes in flight and the
  other end loses the connection with ``ConnectionResetError``; each end's protocol gets
  ``connection_lost`` once, in a later iteration.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("fakeapi")

HIGH_WATER = 64 * 1024  # asyncio's default write-buffer limits for its socket transports
_deliveries = 0  # data handed to a protocol, by every pipe of the process


def deliveries() -> int:
    """How many times pipes of this process handed data to their reader so far: a count that
    moves while anything talks through them (``FakeCluster.settle`` on a loop whose ready
    callbacks it cannot see)."""
    return _deliveries


class PipeTransport(asyncio.Transport):
    """One end of a :func:`pipe`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol: asyncio.Protocol,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__(extra)
        self._loop = loop
        self._protocol = protocol
        self._peer: PipeTransport | None = None
        self._inbox: list[bytes] = []  # written by the peer, not yet given to this end's protocol
        self._inbox_size = 0
        self._delivery: asyncio.Handle | None = None
        self._reading = True
        self._eof = False  # the peer closed: after the inbox, this end's protocol sees the end of data
        self._closing = False
        self._lost = False
        self._writing_paused = False
        self._high, self._low = HIGH_WATER, HIGH_WATER // 4

    # -- asyncio.BaseTransport

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        self._protocol = protocol

    def is_closing(self) -> bool:
        return self._closing or self._lost

    def close(self) -> None:
        """The other end gets what was written, then the end of data; this end's protocol loses
        the connection in a later iteration."""
        if self._closing or self._lost:
            return
        self._closing = True
        peer = self._peer
        if peer is not None and not peer._lost:
            peer._eof = True
            peer._schedule()
        self._loop.call_soon(self._connection_lost, None)

    # -- asyncio.ReadTransport

    def is_reading(self) -> bool:
        return self._reading and not self.is_closing()

    def pause_reading(self) -> None:
        self._reading = False

    def resume_reading(self) -> None:
        if not self._reading:
            self._reading = True
            self._schedule()

    # -- asyncio.WriteTransport

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        high = HIGH_WATER if high is None else high
        low = high // 4 if low is None else low
        if not 0 <= low <= high:
            raise ValueError(f"high ({high!r}) must be >= low ({low!r}) must be >= 0")
        self._high, self._low = high, low
        self._pause_if_full()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._low, self._high

    def get_write_buffer_size(self) -> int:
        """Bytes this end wrote that the other end's protocol has not received yet."""
        peer = self._peer
        return peer._inbox_size if peer is not None and not peer._lost else 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data or self._closing or self._lost:
            return  # as a socket transport drops writes after close
        peer = self._peer
        if peer is None or peer._lost:
            return
        chunk = bytes(data)  # a copy, as a socket's buffer holds (len(memoryview) counts items)
        peer._inbox.append(chunk)
        peer._inbox_size += len(chunk)
        peer._schedule()
        self._pause_if_full()

    def can_write_eof(self) -> bool:
        return False

    def abort(self) -> None:
        """Close at once: the bytes in flight are dropped both ways, and the other end loses the
        connection with ``ConnectionResetError``."""
        if self._lost:
            return
        self._closing = True
        self._inbox.clear()
        self._inbox_size = 0
        peer = self._peer
        if peer is not None and not peer._lost:
            peer._closing = True
            peer._inbox.clear()
            peer._inbox_size = 0
            self._loop.call_soon(peer._connection_lost, ConnectionResetError("connection reset by peer"))
        self._loop.call_soon(self._connection_lost, None)

    # -- the pipe

    def _schedule(self) -> None:
        if self._delivery is None and self._reading and not self._lost and (self._inbox or self._eof):
            self._delivery = self._loop.call_soon(self._deliver)

    def _deliver(self) -> None:
        global _deliveries
        self._delivery = None
        if self._lost or not self._reading:
            return
        if self._inbox:
            inbox = self._inbox
            data = inbox[0] if len(inbox) == 1 else b"".join(inbox)
            self._inbox = []
            self._inbox_size = 0
            _deliveries += 1
            try:
                self._protocol.data_received(data)
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:  # as asyncio's socket transports: report, and drop the connection
                log.exception("a pipe's protocol failed on the data it received; closing the connection")
                self.abort()
                return
            if self._peer is not None:
                self._peer._resume_if_drained()
            self._schedule()  # the end of data, or what was written meanwhile
            return
        if self._eof:
            self._eof = False
            if not self._protocol.eof_received():  # True keeps the half-open connection
                self.close()

    def _pause_if_full(self) -> None:
        if not self._writing_paused and self.get_write_buffer_size() > self._high:
            self._writing_paused = True
            self._protocol.pause_writing()

    def _resume_if_drained(self) -> None:
        if self._writing_paused and self.get_write_buffer_size() <= self._low:
            self._writing_paused = False
            self._protocol.resume_writing()

    def _connection_lost(self, exc: BaseException | None) -> None:
        if self._lost:
            return
        self._lost = self._closing = True
        if self._delivery is not None:
            self._delivery.cancel()
            self._delivery = None
        self._inbox.clear()
        self._inbox_size = 0
        try:
            self._protocol.connection_lost(exc)
        finally:
            peer, self._peer = self._peer, None  # the ends held each other: let them go with their users
            if peer is not None:  # a writer paused for this end's sake would wait forever
                peer._resume_if_drained()


def pipe(loop: asyncio.AbstractEventLoop, first: asyncio.Protocol, second: asyncio.Protocol,
         extra: dict[str, Any] | None = None) -> tuple[PipeTransport, PipeTransport]:
    """Connect two protocols: ``first`` is told ``connection_made`` before ``second`` (the server
    first, so that it may refuse the connection); their transports, in the same order."""
    a, b = PipeTransport(loop, first, extra), PipeTransport(loop, second, extra)
    a._peer, b._peer = b, a
    first.connection_made(a)
    second.connection_made(b)
    return a, b
