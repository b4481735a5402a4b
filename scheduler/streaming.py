"""A GET whose body streams, on a TCP (or TLS) connection of its own: how the client reads watches.

A watch holds its connection for minutes, so it gains nothing from a connection pool; reading it
with asyncio's streams instead of an ``aiohttp.ClientSession`` request saves about an eighth of
``FakeCluster``'s enter + exit (23 informers open a watch each; BENCHMARKS.md, Latency).  Only what an
API server's answer to a GET needs: the status line, headers, and a body that is chunked,
``Content-Length``-delimited or read to the end.  A connection that breaks, or an answer that is
not HTTP/1.1, raises :class:`StreamBroken` (an ``OSError``, so one of the client's transport
errors).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

CONNECT_TIMEOUT = 10.0
_HEAD_LIMIT = 1 << 20  # status line and headers; chunk-size lines are tiny


class StreamBroken(ConnectionError):
    """The connection broke or the server's answer could not be read as HTTP/1.1."""


@dataclass(frozen=True)
class Head:
    """The status and the headers (names lower-cased) of an answer."""

    status: int
    headers: dict[str, str]


def request_bytes(method: str, target: str, headers: dict[str, str]) -> bytes:
    """An HTTP/1.1 request without a body."""
    lines = [f"{method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def parse_head(raw: bytes) -> Head:
    """The status line and headers up to the blank line; :class:`StreamBroken` if malformed."""
    status_line, *header_lines = raw.decode("latin-1").rstrip("\r\n").split("\r\n")
    version, _, rest = status_line.partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise StreamBroken(f"not an HTTP/1.1 answer: {status_line[:80]!r}")
    headers = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise StreamBroken(f"malformed header line: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    return Head(int(code), headers)


def chunk_size(line: bytes) -> int:
    """The size a chunk-size line announces (extensions after ``;`` ignored)."""
    text = line.split(b";", 1)[0].strip()
    try:
        return int(text, 16)
    except ValueError:
        raise StreamBroken(f"malformed chunk size: {line[:40]!r}") from None


async def body_chunks(reader: asyncio.StreamReader, head: Head) -> AsyncIterator[bytes]:
    """The body of an answer, as the pieces it arrives in."""
    try:
        if head.headers.get("transfer-encoding", "").lower() == "chunked":
            while size := chunk_size(await reader.readuntil(b"\r\n")):
                data = await reader.readexactly(size + 2)
                if data[-2:] != b"\r\n":
                    raise StreamBroken("chunk not followed by CRLF")
                yield data[:-2]
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, up to the blank line
                pass
        elif (length := head.headers.get("content-length")) is not None:
            if not length.isdigit():
                raise StreamBroken(f"malformed Content-Length: {length[:40]!r}")
            yield await reader.readexactly(int(length))
        else:
            while data := await reader.read(1 << 16):
                yield data
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        raise StreamBroken(f"the answer broke off: {exc}") from exc


@contextlib.asynccontextmanager
async def get_stream(url: str, path: str, params: dict[str, str] | None, headers: dict[str, str], *,
                     ssl_context: ssl.SSLContext | None = None
                     ) -> AsyncIterator[tuple[Head, AsyncIterator[bytes]]]:
    """GET ``path`` of the server at ``url`` on a connection of its own: the answer's head and its
    body's pieces; the connection closes with the block."""
    server = urlsplit(url)
    secure = server.scheme == "https"
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            reader, writer = await asyncio.open_connection(
                server.hostname, server.port or (443 if secure else 80), limit=_HEAD_LIMIT,
                ssl=(ssl_context or ssl.create_default_context()) if secure else None)
    except TimeoutError:
        raise StreamBroken(f"connecting to {server.netloc} timed out") from None
    try:
        target = path + ("?" + urlencode(params) if params else "")
        writer.write(request_bytes("GET", target, {"Host": server.netloc, **headers}))
        try:
            head = parse_head(await reader.readuntil(b"\r\n\r\n"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise StreamBroken(f"no answer from {server.netloc}: {exc}") from exc
        yield head, body_chunks(reader, head)
    finally:
        writer.close()
