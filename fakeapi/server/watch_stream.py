"""Streaming a watch: newline-delimited JSON events over a chunked HTTP response."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from fakeapi.errors import Expired, StatusError
from fakeapi.machinery.deadlines import DeadlineSweep
from fakeapi.registry import listing
from fakeapi.registry.reads import Watcher
from fakeapi.registry.rest import Registry
from fakeapi.server import tables
from fakeapi.server.routes import Target

# When each watch with bookmarks has its next one due: one timer per server for all of them, as
# upstream's watch cache dispatches bookmarks from one timer (a timer per watch cost ~19k instructions).
BOOKMARKS = web.AppKey("bookmarks", DeadlineSweep[Watcher])


def bookmark_sweep(interval: float) -> DeadlineSweep[Watcher]:
    """The server's :data:`BOOKMARKS`: wakes each registered watch's reader ``interval`` after
    its registration (holding no reference to the server, only to the watches it waits for)."""
    return DeadlineSweep(interval, Watcher.interrupt)


def _error_line(err: StatusError) -> bytes:
    return orjson.dumps({"type": "ERROR", "object": err.to_status()}) + b"\n"


_SINK_METHODS = ("write", "is_closing", "get_write_buffer_size", "get_write_buffer_limits")
# Transport classes by whether they have the methods above, decided once per class.
_SINKABLE: dict[type, bool] = {}


def chunk_sink(transport: Any) -> Callable[[list[bytes]], bool] | None:
    """Writes lines to the connection as one HTTP chunk, as the response's own writer frames
    them, while the connection's buffer is below its high-water mark (else the reader writes,
    waiting for the client)."""
    # Duck-typed: uvloop's transports have these methods without subclassing asyncio's.
    kind = type(transport)
    sinkable = _SINKABLE.get(kind)
    if sinkable is None:
        sinkable = _SINKABLE[kind] = transport is not None and all(hasattr(kind, m) for m in _SINK_METHODS)
    if not sinkable:
        return None

    def sink(lines: list[bytes]) -> bool:
        if transport.is_closing() or transport.get_write_buffer_size() >= transport.get_write_buffer_limits()[1]:
            return False
        data = b"".join(lines)
        transport.write(b"%x\r\n%b\r\n" % (len(data), data))
        return True

    return sink


def _as_table_line(target: Target, line: bytes, first: bool) -> bytes:
    """Table watches (``kubectl get -w``) carry a one-row Table per event."""
    event = orjson.loads(line)
    obj = event["object"]
    if event["type"] in ("ERROR", "BOOKMARK"):
        return line
    table = tables.to_table(target.resource, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                            with_columns=first)
    return orjson.dumps({"type": event["type"], "object": table}) + b"\n"


def table_lines(target: Target) -> Callable[[bytes, bool], bytes]:
    """What :func:`stream_watch` renders each event line with for a Table watch."""
    return lambda line, first: _as_table_line(target, line, first)


async def stream_watch(request: web.Request, registry: Registry, target: Target, opts: listing.ListOptions,
                       render: Callable[[bytes, bool], bytes] | None = None) -> web.StreamResponse:
    """Serve a watch; ``render`` shows each event line another way (a Table row, metadata alone),
    given the line and whether it is the stream's first."""
    rt = target.resource
    reads = registry.reads
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    try:
        watcher = await reads.watch(rt, target.namespace, opts)
    except Expired as exc:
        # Upstream answers 200 and reports the expired resourceVersion inside the stream.
        await response.prepare(request)
        await response.write(_error_line(exc))
        await response.write_eof()
        return response
    await response.prepare(request)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + opts.timeout_seconds if opts.timeout_seconds else None
    sweep = request.app[BOOKMARKS]
    bookmarks = sweep if opts.allow_bookmarks else None
    interval = sweep.seconds
    next_bookmark = loop.time() + interval
    if bookmarks is not None:
        bookmarks.add(watcher, loop)  # due when next_bookmark is, or a hair later
    first = True
    # A StreamResponse sends its headers in prepare(), so raw chunks may follow at once.  Lines
    # rendered another way are rendered per watch, by the reader.
    sink = None if render else chunk_sink(request.transport)
    watcher.use_sink(sink)
    try:
        while True:
            now = loop.time()
            # The sweep wakes the reader for its bookmark; its own timer only for a deadline
            # before that, and none while a due bookmark waits for a quiet moment.
            wait = 0.0 if bookmarks is not None and now >= next_bookmark else None
            if deadline is not None and (bookmarks is None or deadline < next_bookmark):
                wait = deadline - now if wait is None else min(wait, deadline - now)
            lines = await watcher.next_lines(max(wait, 0) if wait is not None else None)
            if lines:
                if render:
                    lines = [render(line, first and i == 0) for i, line in enumerate(lines)]
                    first = False
                # The sink takes what the connection can (the initial events, nearly always: they
                # wait in the watcher since set-up); else the response's writer waits for the client.
                if sink is None or not sink(lines):
                    await response.write(b"".join(lines))
            if watcher.expired:
                await response.write(_error_line(Expired(
                    "too old resource version: the watch fell too far behind; re-list")))
                break
            if watcher.closed:
                break
            now = loop.time()
            if deadline is not None and now >= deadline:
                break
            if bookmarks is not None and now >= next_bookmark and not lines and not watcher.take_delivered():
                line = orjson.dumps(reads.bookmark(rt)) + b"\n"
                await response.write(render(line, False) if render else line)
                next_bookmark = loop.time() + interval
                bookmarks.add(watcher, loop)
        await response.write_eof()
    except ConnectionResetError:
        pass  # the client went away: an ordinary end of a watch
    finally:
        if bookmarks is not None:
            bookmarks.discard(watcher)
        watcher.use_sink(None)
        reads.close_watch(rt, watcher)
    return response

