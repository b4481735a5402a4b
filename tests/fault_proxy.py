"""A fault-injecting TCP proxy for tests: asyncio, loopback only, bounded.

It sits between a client (the control plane) and an HTTP/1.1 server (the API server) and copies
bytes both ways.  On the way in it reads each request's head (request line and
``Content-Length``), so faults can target requests by method and path:

- :meth:`FaultProxy.drop_response`: forward the Nth matching request, wait until the server starts
  to answer (it has handled the request, so a write is committed), then reset the client's
  connection instead of delivering the answer: a committed write whose response is lost.
- :meth:`FaultProxy.fail_request`: reset the client's connection instead of forwarding the Nth
  matching request: a write that never reached the server, failing the same way.
- :meth:`FaultProxy.hold_responses`: hold back the answers to matching requests (a watch stream,
  say) until released: an informer that lags behind.
- :meth:`FaultProxy.chaos`: from a seeded random generator, reset random connections at random
  intervals, drop the response of a fraction of the writes and delay watch events a little (so
  informers lag behind the writes, as they do on a busy server).

Only loopback addresses are accepted on either side; connections, request heads and the data
held per connection are bounded.  Requests with a chunked body are forwarded unparsed to the end
of their connection (the control plane's client always sends ``Content-Length``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import re
import socket
import struct
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_LOOPBACK_NAMES = ("localhost",)
_MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024
_KEPT_HEADS = 1000  # request heads kept for tests to read
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_WATCH = re.compile(r"[?&]watch=(true|1)(&|$)")


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class RequestRule:
    """Matches requests by method and a regular expression searched in the request target;
    fires on the ``nth`` match and the ``times - 1`` matches after it."""

    method: str
    target: re.Pattern[str]
    nth: int = 1
    times: int = 1
    seen: int = 0
    fired: asyncio.Event = field(default_factory=asyncio.Event)   # set once it fired ``times``
    request_lines: list[str] = field(default_factory=list)          # the requests it fired on

    def matches(self, method: str, target: str) -> bool:
        return method == self.method and self.target.search(target) is not None


@dataclass
class Hold:
    """Responses held back for matching requests until :meth:`release`."""

    rule: RequestRule
    released: asyncio.Event = field(default_factory=asyncio.Event)
    holding: asyncio.Event = field(default_factory=asyncio.Event)   # set once an answer is held back

    def release(self) -> None:
        self.released.set()


@dataclass(eq=False)   # identity: connections live in a set
class _Connection:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    request: tuple[str, str] = ("", "")    # method and target of the request being answered
    drop: bool = False                     # reset instead of delivering the current answer
    holds: list[Hold] = field(default_factory=list)


class FaultProxy:
    """``async with FaultProxy(server_url) as proxy``: point the client at ``proxy.url``."""

    def __init__(self, upstream_url: str, *, max_connections: int = 256) -> None:
        parts = urlsplit(upstream_url)
        if parts.scheme != "http" or not parts.hostname or not _is_loopback(parts.hostname):
            raise ValueError(f"the fault proxy only forwards to http on loopback, not {upstream_url!r}")
        self._upstream = (parts.hostname, parts.port or 80)
        self._max_connections = max_connections
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()          # chaos loops
        self._handlers: set[asyncio.Task[None]] = set()       # one per client connection
        self._drops: list[RequestRule] = []
        self._fails: list[RequestRule] = []
        self._holds: list[Hold] = []
        self._chaos_rng: random.Random | None = None
        self._drop_probability = 0.0
        self._max_delay = 0.0
        self.url = ""
        self.resets = 0
        self.dropped: list[str] = []          # request lines whose response was dropped
        self.heads: deque[bytes] = deque(maxlen=_KEPT_HEADS)   # the latest request heads, as sent

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Listen on an ephemeral loopback port; ``url`` is then set."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, limit=_MAX_HEAD)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Stop listening, reset every connection and wait for the copying tasks."""
        if self._server is not None:
            self._server.close()
        for hold in self._holds:
            hold.release()
        self.calm()
        for conn in list(self._connections):
            self._reset(conn)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # Reset and released, every connection handler ends by itself (cancelling one makes
        # asyncio's stream machinery log the CancelledError).
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=5.0)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # -- faults --------------------------------------------------------------------------------
    def drop_response(self, method: str, target: str, *, nth: int = 1, times: int = 1) -> RequestRule:
        """Lose the answers to ``times`` requests matching ``method`` and regex ``target``, from
        the ``nth`` on.  (aiohttp resends a PUT or DELETE once when its connection breaks.)"""
        rule = RequestRule(method, re.compile(target), nth, times)
        self._drops.append(rule)
        return rule

    def fail_request(self, method: str, target: str, *, nth: int = 1, times: int = 1) -> RequestRule:
        """Reset the connection instead of forwarding ``times`` matching requests from the ``nth`` on."""
        rule = RequestRule(method, re.compile(target), nth, times)
        self._fails.append(rule)
        return rule

    def hold_responses(self, method: str, target: str) -> Hold:
        """Hold back the answers to matching requests, in flight now or later, until released."""
        hold = Hold(RequestRule(method, re.compile(target)))
        self._holds.append(hold)
        for conn in self._connections:
            if hold.rule.matches(*conn.request):
                conn.holds.append(hold)
        return hold

    def chaos(self, rng: random.Random, *, interval: tuple[float, float] = (0.05, 0.25),
              reset_fraction: float = 0.5, drop_probability: float = 0.1, max_delay: float = 0.0) -> None:
        """Every ``interval`` seconds reset each connection with ``reset_fraction``; drop the
        answer to each write with ``drop_probability``; delay each piece of a watch stream by up
        to ``max_delay`` seconds.  Runs until :meth:`calm` or :meth:`stop`."""
        self._chaos_rng = rng
        self._drop_probability = drop_probability
        self._max_delay = max_delay
        self._spawn(self._chaos_loop(rng, interval, reset_fraction))

    def calm(self) -> None:
        """End :meth:`chaos`: no more random resets or dropped answers."""
        self._chaos_rng = None

    async def _chaos_loop(self, rng: random.Random, interval: tuple[float, float], fraction: float) -> None:
        while self._chaos_rng is rng:
            await asyncio.sleep(rng.uniform(*interval))
            if self._chaos_rng is not rng:
                return
            for conn in list(self._connections):
                if rng.random() < fraction:
                    self._reset(conn)

    # -- plumbing ------------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= self._max_connections:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream, limit=_MAX_HEAD)
        except OSError:
            writer.close()
            return
        conn = _Connection(writer, up_writer)
        self._connections.add(conn)
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._requests(conn, reader))
                tg.create_task(self._responses(conn, up_reader))
        except* (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass   # a reset (ours or a peer's) or a malformed head ends the connection
        finally:
            self._handlers.discard(task)
            self._connections.discard(conn)
            for w in (writer, up_writer):
                w.close()

    async def _requests(self, conn: _Connection, reader: asyncio.StreamReader) -> None:
        """Client to server: one request head at a time, then its body."""
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                conn.upstream.close()   # client went away
                return
            method, target, length, chunked = _parse_head(head)
            self.heads.append(head)
            conn.request = (method, target)
            conn.holds = [h for h in self._holds if not h.released.is_set() and h.rule.matches(method, target)]
            if _fire(self._fails, method, target):
                self._reset(conn)
                return
            conn.drop = _fire(self._drops, method, target) or (
                self._chaos_rng is not None and method in _WRITE_METHODS
                and self._chaos_rng.random() < self._drop_probability)
            if conn.drop:
                self.dropped.append(f"{method} {target}")
            conn.upstream.write(head)
            if chunked:
                async for chunk in _chunks(reader):
                    conn.upstream.write(chunk)
                    await conn.upstream.drain()
                return
            remaining = length
            while remaining:
                chunk = await reader.read(min(_CHUNK, remaining))
                if not chunk:
                    raise ConnectionResetError("client closed mid-body")
                remaining -= len(chunk)
                conn.upstream.write(chunk)
            await conn.upstream.drain()

    async def _responses(self, conn: _Connection, reader: asyncio.StreamReader) -> None:
        """Server to client: copied as it comes, unless the answer is dropped or held."""
        async for chunk in _chunks(reader):
            if conn.drop:
                # The server has answered, so it has handled the request: lose the answer.
                self._reset(conn)
                return
            for hold in conn.holds:
                if not hold.released.is_set():
                    hold.holding.set()
                    await hold.released.wait()
            rng = self._chaos_rng
            if rng is not None and self._max_delay and _WATCH.search(conn.request[1]):
                await asyncio.sleep(rng.uniform(0, self._max_delay))
            conn.client.write(chunk)
            await conn.client.drain()
        conn.client.close()

    def _reset(self, conn: _Connection) -> None:
        """Abort both sides; the client gets a TCP reset (SO_LINGER 0), not an orderly close."""
        if conn not in self._connections:
            return
        self._connections.discard(conn)
        self.resets += 1
        for writer in (conn.client, conn.upstream):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()


def _fire(rules: list[RequestRule], method: str, target: str) -> bool:
    """Count the request against each rule; True when it is one a rule fires on."""
    fired = False
    for rule in rules:
        if not rule.fired.is_set() and rule.matches(method, target):
            rule.seen += 1
            if rule.seen >= rule.nth:
                rule.request_lines.append(f"{method} {target}")
                if len(rule.request_lines) == rule.times:
                    rule.fired.set()
                fired = True
    return fired


def _parse_head(head: bytes) -> tuple[str, str, int, bool]:
    """(method, target, Content-Length, chunked) of an HTTP/1.1 request head."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    length, chunked = 0, False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    return method, target, length, chunked


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while chunk := await reader.read(_CHUNK):
        yield chunk
