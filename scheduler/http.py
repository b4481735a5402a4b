"""HTTP/1.1 for :class:`~fakeapi.scheduler.client.ApiClient`: keep-alive connections on asyncio
protocols, one request at a time on each.

Why not aiohttp's client, which the control plane used before: for a GET or a POST of a ConfigMap
through ``FakeCluster``'s in-process pipe it spent 80-140 µs of CPU per request on its own
(cookies, tracing, redirects, proxies, yarl URLs, multidicts, a stream reader per response),
about half of the whole request's cost, and the control plane makes seven requests per DRA pod
and opens a watch per resource it follows. This client does what the Kubernetes wire protocol
needs and nothing else:

- requests with the server's path prefix, percent-encoded query, ``Host``, ``User-Agent``,
  ``Accept: application/json``, the bearer token if any, and a body with ``Content-Length``;
- responses with ``Content-Length``, ``Transfer-Encoding: chunked`` (a watch) or ending at EOF;
  interim ``1xx`` answers skipped; no compression, since none is asked for;
- TLS and client certificates through asyncio's ``ssl`` support, or a ``connect`` function that
  joins each new connection's protocol to the server in this event loop (``FakeCluster``'s pipes);
- a streamed body holds at most :data:`STREAM_HIGH_WATER` bytes unread before it stops reading
  the connection, so a slow reader holds the server back as a socket's reader does.

A connection that broke, or whose response was not read to its end, is closed and never reused.
A GET on a kept-alive connection that the server closed before answering is sent once more on a
new one (the server may close idle connections at any time); other methods are not, since their
effect may have happened (:func:`~fakeapi.scheduler.client.outcome_unknown`).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import cast
from urllib.parse import urlsplit

# Bounds on what the server may send: a head's size, a chunk-size line's.
MAX_HEAD = 64 * 1024
MAX_CHUNK_LINE = 1024
STREAM_HIGH_WATER = 256 * 1024
CONNECT_TIMEOUT = 10.0
# Connections in use at once (a watch holds one for its life), as aiohttp's connector's default:
# a burst of requests waits for a connection rather than opening hundreds.
CONNECTION_LIMIT = 100

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _UNTIL_EOF, _DONE = range(8)


class ProtocolError(ConnectionError):
    """The server's bytes are not an HTTP/1.1 response this client can read."""


class Response:
    """One response, read off its connection as bytes arrive."""

    def __init__(self, connection: HTTPConnection, no_body: bool, streamed: bool) -> None:
        self.status = 0
        self.keep_alive = True
        self._connection = connection
        self._no_body = no_body  # a HEAD request's answer has none
        self._state = _HEAD
        self._remaining = 0  # of the body (Content-Length) or of the current chunk
        self._body = bytearray()
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._streamed = streamed  # read in pieces: bounded by pausing the connection
        self.received = False  # any byte of it arrived

    @property
    def done(self) -> bool:
        return self._state == _DONE

    async def head(self) -> None:
        """Wait for the status line and headers."""
        while self._state == _HEAD:
            await self._wait()

    async def read(self) -> bytes:
        """The whole body (a streamed one's rest, read without bound)."""
        self._streamed = False
        self._connection.resume_reading()
        while self._state != _DONE:
            await self._wait()
        body = bytes(self._body)
        self._body.clear()
        return body

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives, in pieces, until its end."""
        while True:
            if self._body:
                piece = bytes(self._body)
                self._body.clear()
                self._connection.resume_reading()
                yield piece
            elif self._state == _DONE:
                return
            else:
                await self._wait()

    async def _wait(self) -> None:
        """Until more of the response arrived (the caller looks again), or raise its failure."""
        error = self._error
        if error is not None:
            try:
                raise error
            finally:  # its traceback holds this frame: the frame must not hold it (nor self, which does)
                error = self = None  # type: ignore[assignment]
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def fail(self, error: BaseException) -> None:
        """The connection ended: the end of a body read until EOF, else ``error``."""
        if self._state == _UNTIL_EOF:
            self._state = _DONE
        elif self._state != _DONE and self._error is None:
            self._error = error
        self._wake()

    def feed(self, data: bytearray) -> None:
        """Take what ``data`` (the connection's unread bytes) holds of this response."""
        self.received = True
        try:
            self._parse(data)
        except (ValueError, IndexError, ProtocolError) as err:
            self._error = err if isinstance(err, ProtocolError) else ProtocolError(f"bad HTTP response: {err}")
            self._connection.close()
        if self._streamed and len(self._body) > STREAM_HIGH_WATER:
            self._connection.pause_reading()
        self._wake()

    def _parse(self, data: bytearray) -> None:
        while data or self._state == _HEAD:
            state = self._state
            if state == _HEAD:
                if not self._parse_head(data):
                    return
            elif state == _LENGTH or state == _CHUNK_DATA:
                take = min(self._remaining, len(data))
                self._body += data[:take] if take < len(data) else data
                del data[:take]
                self._remaining -= take
                if self._remaining:
                    return
                self._state = _DONE if state == _LENGTH else _CHUNK_END
            elif state == _CHUNK_SIZE:
                line = _take_line(data, MAX_CHUNK_LINE, "a chunk-size line")
                if line is None:
                    return
                self._remaining = int(line.split(b";", 1)[0], 16)
                self._state = _CHUNK_DATA if self._remaining else _TRAILERS
            elif state == _CHUNK_END:
                if len(data) < 2:
                    return
                if data[:2] != b"\r\n":
                    raise ProtocolError("a chunk does not end with CRLF")
                del data[:2]
                self._state = _CHUNK_SIZE
            elif state == _TRAILERS:
                line = _take_line(data, MAX_HEAD, "a trailer")
                if line is None:
                    return
                if not line:
                    self._state = _DONE
            elif state == _UNTIL_EOF:
                self._body += data
                data.clear()
            else:  # _DONE: bytes the server sent beyond its answer
                raise ProtocolError("bytes after the end of a response")

    def _parse_head(self, data: bytearray) -> bool:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            if len(data) > MAX_HEAD:
                raise ProtocolError("the response head is too long")
            return False
        lines = bytes(data[:end]).split(b"\r\n")
        del data[:end + 4]
        version, _, rest = lines[0].partition(b" ")
        if not version.startswith(b"HTTP/1."):
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(rest[:3])
        if 100 <= status < 200:
            return True  # an interim answer: the real one follows
        self.status = status
        self.keep_alive = version != b"HTTP/1.0"
        length: int | None = None
        chunked = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                token = value.strip().lower()
                self.keep_alive = token == b"keep-alive" or (self.keep_alive and token != b"close")
        if self._no_body or status in (204, 304):
            self._state = _DONE
        elif chunked:
            self._state = _CHUNK_SIZE
        elif length is not None:
            self._remaining = length
            self._state = _LENGTH if length else _DONE
        else:
            self._state = _UNTIL_EOF
            self.keep_alive = False
        return True


def _take_line(data: bytearray, limit: int, what: str) -> bytes | None:
    """The first line of ``data`` without its CRLF, taken off ``data``; None while incomplete."""
    end = data.find(b"\r\n")
    if end < 0:
        if len(data) > limit:
            raise ProtocolError(f"{what} is too long")
        return None
    line = bytes(data[:end])
    del data[:end + 2]
    return line


class HTTPConnection(asyncio.Protocol):
    """One HTTP/1.1 connection; :meth:`send` starts a request, whose :class:`Response` reads the
    answer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.broken = False  # ended, or left in the middle of an answer: never reused
        self._data = bytearray()
        self._response: Response | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport's subclasses

    def data_received(self, data: bytes) -> None:
        self._data += data
        if self._response is not None:
            self._response.feed(self._data)
        else:  # nothing was asked: a server's goodbye (an error page before closing)
            self.close()

    def eof_received(self) -> bool:
        self.broken = True
        return False  # close our end as well

    def connection_lost(self, exc: Exception | None) -> None:
        self.broken = True
        # The transport and the response in flight hold this protocol: no cycle outlives the connection.
        self.transport = None
        response, self._response = self._response, None
        if response is not None:
            response.fail(ConnectionResetError(
                f"the server closed the connection before its answer was complete{f': {exc}' if exc else ''}"))

    def send(self, head: bytes, body: bytes | None, *, no_body: bool = False, streamed: bool = False) -> Response:
        """Write one request (``head`` ends with the blank line) and return its response."""
        assert self.transport is not None and not self.broken
        self._response = response = Response(self, no_body, streamed)
        self.transport.write(head + body if body else head)
        return response

    def finished(self, response: Response) -> bool:
        """``response`` was read to its end: whether the connection can carry another request."""
        self._response = None
        return response.done and response.keep_alive and not self.broken and not self._data

    def pause_reading(self) -> None:
        if not self._paused and self.transport is not None and not self.broken:
            self._paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self._paused and self.transport is not None and not self.broken:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        self.broken = True
        if self.transport is not None:
            self.transport.close()


class HTTPClient:
    """Keep-alive HTTP/1.1 connections to one server (``url``'s scheme, host, port and path
    prefix); ``headers`` go with every request; ``connect``: see
    :attr:`fakeapi.scheduler.connection.Connection.connect`."""

    def __init__(self, url: str, headers: dict[str, str], *, ssl_context: ssl.SSLContext | None = None,
                 connect: Callable[[asyncio.Protocol], asyncio.Transport] | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) server URL: {url!r}")
        self.prefix = parts.path.rstrip("/")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = ssl_context if parts.scheme == "https" else None
        if parts.scheme == "https" and self._ssl is None:
            self._ssl = ssl.create_default_context()
        self._connect = connect
        host = f"[{self._host}]" if ":" in self._host else self._host
        default_port = (parts.scheme == "https" and self._port == 443) or (parts.scheme == "http" and self._port == 80)
        fields = {"Host": host if default_port else f"{host}:{self._port}", **headers}
        self._headers = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
        self._idle: list[HTTPConnection] = []
        self._open: set[HTTPConnection] = set()
        self._in_use = asyncio.Semaphore(CONNECTION_LIMIT)
        self._closed = False

    async def request(self, method: str, target: str, body: bytes | None = None,
                      content_type: str | None = None) -> tuple[int, bytes]:
        """Send one request (``target``: the path after the server's prefix, with its query) and
        return the answer's status and body."""
        head = self._head(method, target, body, content_type)
        async with self._in_use:
            while True:
                connection, reused = await self._connection()
                response = connection.send(head, body, no_body=method == "HEAD")
                try:
                    data = await response.read()
                except ConnectionResetError:
                    self._discard(connection)
                    if reused and method == "GET" and not response.received:
                        continue  # the server had closed the idle connection: ask again on a new one
                    raise
                except BaseException:
                    self._discard(connection)
                    raise
                self._release(connection, response)
                return response.status, data

    @asynccontextmanager
    async def stream(self, method: str, target: str) -> AsyncIterator[Response]:
        """A request whose answer is read as it comes (a watch): the response once its head is in."""
        head = self._head(method, target, None, None)
        async with self._in_use:
            connection, _ = await self._connection()
            response = connection.send(head, None, streamed=True)
            try:
                await response.head()
                yield response
            except BaseException:
                self._discard(connection)
                raise
            if response.done:
                self._release(connection, response)
            else:  # left before its end: the rest of the answer would still come on it
                self._discard(connection)

    async def close(self) -> None:
        """Close every connection; requests in flight fail."""
        self._closed = True
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()

    def _head(self, method: str, target: str, body: bytes | None, content_type: str | None) -> bytes:
        head = f"{method} {self.prefix}{target} HTTP/1.1\r\n{self._headers}"
        if body is not None:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        elif method in ("POST", "PUT", "PATCH"):
            head += "Content-Length: 0\r\n"
        return (head + "\r\n").encode("latin-1")

    async def _connection(self) -> tuple[HTTPConnection, bool]:
        """An idle connection (True), else a new one (False)."""
        if self._closed:
            raise ConnectionAbortedError("the client is closed")
        while self._idle:
            connection = self._idle.pop()
            if not connection.broken:
                return connection, True
            self._open.discard(connection)
        connection = HTTPConnection()
        if self._connect is not None:
            self._connect(connection)
        else:
            loop = asyncio.get_running_loop()
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await loop.create_connection(lambda: connection, self._host, self._port, ssl=self._ssl,
                                             server_hostname=self._host if self._ssl is not None else None)
        self._open.add(connection)
        return connection, False

    def _release(self, connection: HTTPConnection, response: Response) -> None:
        if connection.finished(response) and not self._closed:
            self._idle.append(connection)
        else:
            self._discard(connection)

    def _discard(self, connection: HTTPConnection) -> None:
        connection.close()
        self._open.discard(connection)
