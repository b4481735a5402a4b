"""Connection hygiene for the API server: idle, header-read and request timeouts, a connection limit.

What aiohttp already gives is used as is: ``keepalive_timeout`` closes a connection that waits
for its next request (a request in progress, such as an open watch, is never idle); it is
:attr:`ServerOptions.idle_timeout`.  What neither aiohttp nor asyncio offers is added here:

- a header-read timeout (upstream's ``ReadHeaderTimeout``), in a :class:`web.RequestHandler`
  subclass: aiohttp's idle timer, which partial data does not restart, ends a request whose
  headers never complete only when the idle timeout since the previous response runs out; a
  timer from the request's first byte bounds it tighter without making idle connections as
  short-lived.
- a connection limit: at the limit a new connection displaces the one that has waited longest
  for a request (as nginx reuses idle keep-alive connections), or gets a 503 and is closed when
  every connection is busy.  Connections are accepted by hand, a small batch per wake-up:
  ``loop.create_server`` accepts up to ``backlog`` descriptors per wake-up before any protocol
  sees them, and once the process runs out of descriptors its accept loop (CPython 3.11) logs a
  traceback per pending connection, every second, while the server stops answering.
- a request timeout (kube-apiserver's ``--request-timeout``, :class:`RequestDeadlines`): a
  request that is not long-running gets a 504 ``Timeout`` Status when reading its body and
  handling it take longer, so a body that never arrives cannot keep a connection busy (and,
  enough of them, every new connection out with 503).
- one warning per condition and interval, never one per connection.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import math
import resource
import socket
import ssl
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from yarl import URL

from fakeapi.auth.attributes import request_attributes
from fakeapi.auth.users import INSECURE_SUPERUSER
from fakeapi.config import ServerOptions
from fakeapi.errors import ServiceUnavailable
from fakeapi.machinery.deadlines import DeadlineSweep, TaskDeadlines
from fakeapi.machinery.memo import Memo
from fakeapi.server.pipe import pipe

log = logging.getLogger("fakeapi")

# Descriptors kept for the process's own files, listening sockets and child pipes.
FD_RESERVE = 128
# Connections accepted per wake-up: bounds the descriptors beyond the limit, those accepted but
# not yet admitted (a loop iteration later) and those displaced but not yet closed (one more).
ACCEPT_BATCH = 16
# Seconds accepting pauses when the process is out of descriptors (asyncio's own choice).
ACCEPT_RETRY_DELAY = 1.0
# At most one warning per condition in this many seconds.
REPORT_INTERVAL = 10.0
_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
# What upstream's LongRunningFunc exempts from the request timeout (BasicLongRunningRequestCheck
# of the watch and proxy verbs and these subresources), and the subresources of a namespace,
# which its RequestInfo parser tells apart from a namespaced collection.
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "log", "portforward", "proxy"})
# Seconds the server keeps reading the rest of a body its handler answered without (aiohttp's
# lingering read, 10 s by default); past it the connection closes.
UNREAD_BODY_WAIT = 2.0
# kube-apiserver's timeout filter's message (k8s.io/apiserver/pkg/server/filters/timeout.go).
REQUEST_TIMEOUT_MESSAGE = "Timeout: request did not complete within the allotted timeout"


def connection_limit(configured: int | None) -> int:
    """The connection limit in force: ``configured``, else derived from ``RLIMIT_NOFILE``.

    Half of what the reserve leaves, because a client in the same process (``FakeCluster`` in a
    test) holds the other end of each connection in the same descriptor table.
    """
    if configured is not None:
        return configured
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 16
    return max(16, (soft - FD_RESERVE) // 2)


def long_running(method: str, path: str, query: Mapping[str, str]) -> bool:
    """Whether a request is exempt from the request timeout, as upstream's ``LongRunningFunc``
    decides over the request's RequestInfo: a watch, or a long-running subresource."""
    attrs = request_attributes(INSECURE_SUPERUSER, method, path, query)
    return attrs.verb == "watch" or (attrs.resource_request and attrs.subresource in LONG_RUNNING_SUBRESOURCES)


def long_running_request(request: web.Request) -> bool:
    """Whether ``request`` is exempt from the request timeout (see :func:`long_running`)."""
    target = request.raw_path
    # Only a target that names "watch" or a long-running subresource can be long-running (a
    # percent-encoded one could hide either): nearly every request skips parsing its path and
    # query, which cost more than the rest of the deadline bookkeeping.  Spelled out, since a
    # regular expression or a loop over the words costs twice or three times as much.
    if not ("%" in target or "watch" in target or "log" in target or "exec" in target or "attach" in target
            or "proxy" in target or "portforward" in target):
        return False
    if "%" in target or "+" in target or "/." in target or "#" in target:  # what only aiohttp's parsing decodes
        return long_running(request.method, request.path, request.query)
    # Neither escaped nor dot segments: the path is the target's and the query its plain pairs, of
    # which only the first ``watch`` counts.  Remembered by method, path and that value: informers'
    # watches come back on every cluster.
    path, _, query = target.partition("?")
    watch = None
    for pair in query.split("&") if "watch" in query else ():
        name, _, value = pair.partition("=")
        if name == "watch":
            watch = value
            break
    key = (request.method, path, watch)
    decided = _LONG_RUNNING.get(key)
    if decided is None:
        decided = _LONG_RUNNING.keep(key, long_running(request.method, path, {} if watch is None else {"watch": watch}))
    return decided


_LONG_RUNNING: Memo[tuple[str, str, str | None], bool] = Memo(1024)


class RequestDeadlines(TaskDeadlines):
    """kube-apiserver's ``--request-timeout``: a request that is not long-running gets a 504
    ``Timeout`` Status when reading its body and handling it take longer than ``seconds``, so a
    body that never arrives cannot keep a connection busy (and, enough of them, every new
    connection out with 503).  Its response closes the connection, since the rest of an unread
    body would otherwise be taken for the next request.

    The requests in flight are swept by one timer (:class:`TaskDeadlines`): ``asyncio.timeout``
    per request cost about a seventh of a whole GET.  The server's middleware calls
    :meth:`start` before handling a request, :meth:`expired` when it is cancelled (then the
    client gets its 504) and :meth:`finish` when it ends.
    """

    def start(self, request: web.Request) -> asyncio.Task[Any] | None:
        """Give the current request its deadline: its task, or None when it is long-running."""
        return None if long_running_request(request) else self.begin()


class _Throttled:
    """A recurring condition, logged at most once per interval with how often it happened."""

    def __init__(self, message: str) -> None:
        self._message = message
        self._count = 0
        self._next = -math.inf

    def __call__(self, now: float, *args: object) -> None:
        self._count += 1
        if now < self._next:
            return
        log.warning(self._message + " (count since the last report: %d; at most one report per %.0f s)",
                    *args, self._count, REPORT_INTERVAL)
        self._count = 0
        self._next = now + REPORT_INTERVAL


class ConnectionGuard:
    """The connections of one site: admission at the limit, and the throttled reports."""

    def __init__(self, options: ServerOptions) -> None:
        self.limit = connection_limit(options.max_connections)
        self.header_read_timeout = options.header_read_timeout
        # The connections waiting for a request's headers, each with its deadline.
        self.header_deadlines: DeadlineSweep[_GuardedHandler] = DeadlineSweep(
            options.header_read_timeout, _GuardedHandler.header_deadline)
        self._open: dict[_GuardedHandler, None] = {}  # an insertion-ordered set
        self._pipes_drained: asyncio.Event | None = None  # set when the last piped connection closes
        self.closed = False  # the site stopped: connections accepted before arrive too late
        status = ServiceUnavailable(f"too many open connections (limit {self.limit}), all of them busy; retry")
        body = json.dumps(status.to_status()).encode()
        self.refusal = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                        b"Retry-After: 1\r\nConnection: close\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._displaced = _Throttled("connection limit %d reached: closed the connection idle longest "
                                     "to admit a new one")
        self._refused = _Throttled("connection limit %d reached with every connection busy: refused a "
                                   "new connection with 503")
        self.header_timeouts = _Throttled("closed a connection that sent no complete request headers "
                                          "within %.3g s")
        self.out_of_descriptors = _Throttled("accepting connections failed (%s): paused for %.0f s")

    def admit(self, handler: _GuardedHandler, now: float) -> bool:
        """Count ``handler`` in, making room by closing the longest-idle connection if needed."""
        if self.closed:
            return False
        if len(self._open) >= self.limit:
            idle = [h for h in self._open if h.waiting_for_request()]
            if not idle:
                self._refused(now, self.limit)
                return False
            victim = min(idle, key=lambda h: h.last_received)
            self.release(victim)
            victim.force_close()
            self._displaced(now, self.limit)
        self._open[handler] = None
        return True

    def close(self) -> None:
        """The site stopped: new connections are refused, and the header timer stops with the
        last open connection."""
        self.closed = True
        if not self._open:
            self.header_deadlines.close()

    def release(self, handler: _GuardedHandler) -> None:
        self._open.pop(handler, None)
        if self.closed and not self._open:
            self.header_deadlines.close()
        if handler.piped and self._pipes_drained is not None and not self._pipes_open():
            self._pipes_drained.set()

    def _pipes_open(self) -> bool:
        return any(h.piped for h in self._open)

    async def pipes_closed(self, timeout: float) -> None:
        """Return once no piped connection is open, or after ``timeout``."""
        if not self._pipes_open():
            return
        self._pipes_drained = drained = asyncio.Event()
        try:
            async with asyncio.timeout(timeout):
                await drained.wait()
        except TimeoutError:
            pass
        finally:
            self._pipes_drained = None


class _GuardedHandler(web.RequestHandler):
    """aiohttp's HTTP/1.1 protocol plus the guard's limit and a header-read timer."""

    __slots__ = ("_admitted", "_guard", "_header_due", "_received", "_tls", "last_received", "piped")

    def __init__(self, guard: ConnectionGuard, manager: web.Server, *, piped: bool = False, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._guard = guard
        self.piped = piped  # made by GuardedSite.connect, not accepted on a socket
        self._header_due = False  # in the guard's header_deadlines
        self._admitted = False
        self._received = False
        self._tls = False
        self.last_received = 0.0

    def waiting_for_request(self) -> bool:
        """No request in progress: silent, kept alive between requests, or part of the headers in.

        aiohttp has no public idle state; ``_waiter`` is the future its handler loop awaits the
        next request's headers on (aiohttp 3.10-3.14; the connection tests pin the behaviour).
        Before that loop first runs, a connection is idle if nothing has arrived yet.
        """
        if self._waiter is None:
            return not self._received
        return self._waiter.cancelled() or not self._waiter.done()  # cancelled: being closed

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        self.last_received = loop.time()
        if not self._guard.admit(self, self.last_received):
            assert isinstance(transport, asyncio.Transport)
            if not self._guard.closed:
                transport.write(self._guard.refusal)
            transport.close()
            return
        self._admitted = True
        self._tls = transport.get_extra_info("ssl_object") is not None
        super().connection_made(transport)
        # Like upstream, the first request's headers are due within the header timeout of accept.
        self._guard.header_deadlines.add(self, loop)
        self._header_due = True

    def data_received(self, data: bytes) -> None:
        if not self._admitted:
            return
        super().data_received(data)
        if not data:  # aiohttp resuming its parser as a handler reads the body: nothing arrived
            return
        self._received = True
        self.last_received = self._loop.time()
        if not self.waiting_for_request():  # the headers are complete: the request runs
            if self._header_due:
                self._header_due = False
                self._guard.header_deadlines.discard(self)
        elif not self._header_due:  # the first bytes of a request after an idle gap
            self._header_due = True
            self._guard.header_deadlines.add(self, self._loop)

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self._admitted:
            return
        if self._header_due:
            self._guard.header_deadlines.discard(self)
        task = self._task_handler
        super().connection_lost(exc)  # cancels the request being handled; aiohttp forgets it once done
        if self.piped and task is not None and not task.done():
            # Counted open until its handler has ended, so that a shutdown after pipes_closed()
            # finds nothing left to end (23 handlers shut down one by one: ~0.2 ms of a stop).
            task.add_done_callback(lambda _: self._guard.release(self))
        else:
            self._guard.release(self)

    def resume_reading(self, resume_parser: bool = True) -> None:
        # aiohttp's StreamReader calls this whenever a read leaves its body below the low-water
        # mark, paused or not.  Not paused (nearly always: a body comes whole with its headers),
        # aiohttp's would feed its parser nothing and resume a transport that is reading: ~6k
        # instructions of every create, update and patch.  Every pause sets the flag
        # (BaseProtocol.pause_reading); a paused message queue is resumed by aiohttp's start().
        if self._reading_paused:
            super().resume_reading(resume_parser)

    async def shutdown(self, timeout: float | None = 15.0) -> None:
        """aiohttp's, then a TLS connection's socket is closed at once, as Go's server closes it
        after sending its close_notify: asyncio would wait up to 30 s for the client's, which a
        pooled idle client never sends, and a stopped server would leave that socket open."""
        transport = self.transport
        await super().shutdown(timeout)
        if transport is not None and self._tls:
            transport.abort()

    def header_deadline(self) -> None:
        """The header-read timeout since accept or a request's first byte ran out."""
        self._header_due = False
        if self.waiting_for_request():
            self._guard.header_timeouts(self._loop.time(), self._guard.header_read_timeout)
            self.force_close()


async def _listen(host: str, port: int, backlog: int) -> list[socket.socket]:
    """Bound, listening, non-blocking sockets for every address of ``host``, as
    ``loop.create_server`` makes them (``SO_REUSEADDR``; IPv6 sockets are IPv6-only)."""
    try:  # an address needs no lookup: resolved here rather than by a round trip to a worker thread
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE | socket.AI_NUMERICHOST)
    except socket.gaierror:  # a name: the resolver may block
        infos = await asyncio.get_running_loop().getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class _Listener(asyncio.AbstractServer):
    """Listening sockets accepted by hand, a batch per wake-up (see the module)."""

    def __init__(self, sockets: list[socket.socket], guard: ConnectionGuard,
                 protocol: Any, ssl_context: ssl.SSLContext | None) -> None:
        self._loop = asyncio.get_running_loop()
        self._sockets = sockets
        self._guard = guard
        self._protocol = protocol
        self._ssl_context = ssl_context
        self._connecting: set[asyncio.Task[Any]] = set()
        for sock in sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return tuple(self._sockets)

    def close(self) -> None:
        self._guard.close()
        for sock in self._sockets:
            self._loop.remove_reader(sock.fileno())
            sock.close()
        self._sockets = []

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as exc:
                if exc.errno not in _OUT_OF_RESOURCES:
                    raise
                self._guard.out_of_descriptors(self._loop.time(), exc.strerror, ACCEPT_RETRY_DELAY)
                self._loop.remove_reader(sock.fileno())
                self._loop.call_later(ACCEPT_RETRY_DELAY, self._resume, sock)
                return
            conn.setblocking(False)
            task = self._loop.create_task(self._loop.connect_accepted_socket(self._protocol, conn,
                                                                               ssl=self._ssl_context))
            self._connecting.add(task)
            task.add_done_callback(self._connected)

    def _connected(self, task: asyncio.Task[Any]) -> None:
        self._connecting.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("setting up an accepted connection failed: %s", task.exception())

    def _resume(self, sock: socket.socket) -> None:
        if sock in self._sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)


class GuardedSite(web.BaseSite):
    """A TCP site whose connections follow the options' timeouts and connection limit.

    It builds the protocol objects itself, so the handlers' options are set here; the runner
    keeps the server-wide ones (``handler_cancellation``).  :meth:`connect` opens a connection
    without a socket for a client in the same event loop (``FakeCluster``'s control plane): the
    same guard, handlers and HTTP through an in-memory :func:`~fakeapi.server.pipe.pipe`.
    """

    __slots__ = ("_guard", "_handler_args", "_host", "_port")

    def __init__(self, runner: web.BaseRunner, options: ServerOptions,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(runner, ssl_context=ssl_context)
        self._host = options.host
        self._port = options.port
        self._guard = ConnectionGuard(options)
        # What is left of a body its handler did not read (an error answered before the body
        # arrived) is read and dropped for up to UNREAD_BODY_WAIT, so the client's next request
        # finds the connection open, as Go's server discards an unread body; a request that
        # timed out closes its connection at once instead (app.timed_out: aiohttp would linger
        # after an answer's Connection: close too).
        self._handler_args: dict[str, Any] = {"keepalive_timeout": options.idle_timeout, "access_log": None,
                                              "lingering_time": UNREAD_BODY_WAIT}

    @property
    def name(self) -> str:
        return str(URL.build(scheme="https" if self._ssl_context else "http", host=self._host, port=self._port))

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        sockets = await _listen(self._host, self._port, self._backlog)
        self._server = _Listener(sockets, self._guard,
                                 lambda: _GuardedHandler(self._guard, server, loop=loop, **self._handler_args),
                                 self._ssl_context)

    def connect(self, protocol: asyncio.Protocol) -> asyncio.Transport:
        """Connect the client ``protocol`` (of this event loop) to the server through a pipe, as if
        it had connected to the TCP address (plain HTTP, admitted by the same guard, refused once
        the site stopped); the client's end of the pipe."""
        server = self._runner.server
        assert server is not None, "the site is not started"
        loop = asyncio.get_running_loop()
        handler = _GuardedHandler(self._guard, server, piped=True, loop=loop, **self._handler_args)
        _, client_end = pipe(loop, handler, protocol)
        return client_end

    async def pipes_closed(self, timeout: float) -> None:
        """Return once no connection made by :meth:`connect` is open, or after ``timeout`` seconds:
        a client in this process that closed its connections lets the server end their requests
        before a shutdown would (ending a watch at shutdown costs more than its client going away)."""
        await self._guard.pipes_closed(timeout)
