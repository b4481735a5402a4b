"""Watch fan-out: one queue per watcher, fed synchronously at commit time.

Delivery: a reader parked in :meth:`Watcher.next_lines` is woken per event, unless its server
installed a *sink* (a direct, synchronous writer to its connection).  Then the watchers that got
lines in one loop iteration are flushed by one callback, each sink writing its lines at once:
waking one task per watcher per event dominated the cost of fan-out to many watchers.  A sink
that cannot take the lines (its connection's buffer is full) wakes the reader instead, whose
writes wait for the client; the backlog limit below then applies as before.

A committed event is offered to every watcher of its storage key in commit order, so all
watchers see one order; the hub files them by the namespace and the name they are limited to, so
a namespaced or single-object watch is offered only its own objects' events.  Selectors (label,
field) are applied at offer time; their transitions become ADDED/DELETED as upstream's watch cache
makes them.  A watcher that falls more than ``limit`` events behind is closed with 410 so its
client re-lists, instead of holding memory or slowing the writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from fakeapi.machinery.managedfields import without_managed_fields
from fakeapi.store.eventlog import ADDED, DELETED, Event, encoded_without_managed_fields, line_around

Filter = Callable[[dict[str, Any]], bool]
# Writes lines to a watch's connection now, returning False when it cannot take them.
Sink = Callable[[list[bytes]], bool]
log = logging.getLogger("fakeapi.store")


@dataclass(frozen=True)
class WatchFilter:
    """What one watch wants: a namespace (None = all) and an object predicate."""

    namespace: str | None = None
    predicate: Filter | None = None
    # How objects read for this watch (a custom resource's version); None: as stored.
    view: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # The one name the field selector allows (``metadata.name=``), if it fixes one: where the hub
    # files the watch.  The predicate still checks it.
    name: str | None = None
    # Objects written without managedFields (fakeapi's extension header).
    omit_managed_fields: bool = False

    def matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj.get("metadata", {}).get("namespace", "") != self.namespace:
            return False
        # Selectors look at the object as this watch reads it, as lists do.
        return self.predicate is None or self.predicate(obj if self.view is None else self.view(obj))


def _with_rv(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    meta = dict(obj.get("metadata") or {})
    meta["resourceVersion"] = str(rv)
    return {**obj, "metadata": meta}


class Watcher:
    """One open watch.  The HTTP layer drains :meth:`next_lines`; the store calls :meth:`offer`."""

    def __init__(self, flt: WatchFilter, limit: int) -> None:
        self.filter = flt
        self.limit = limit
        self._lines: deque[bytes] = deque()
        # The reader's pending wait, if it is waiting.  A bare future (not asyncio.Event plus
        # wait_for, which wraps every wait in a task) keeps a wake-up per event and watcher cheap.
        self._waiter: asyncio.Future[None] | None = None
        self._sink: Sink | None = None
        self._flush_pending = False
        self._delivered = False  # lines the sink wrote while the reader was parked
        self.closed = False
        self.expired = False

    def offer(self, event: Event) -> None:
        """Called at commit time; never blocks."""
        if self.closed:
            return
        line = self.translate(event)
        if line is None:
            return
        if len(self._lines) >= self.limit:
            # A slow reader: drop its backlog and end the watch with 410, as the apiserver's
            # watch cache does when a watcher cannot keep up.
            self._lines.clear()
            self.expired = True
            self.closed = True
        else:
            self._lines.append(line)
        self._wake()

    def translate(self, event: Event) -> bytes | None:
        """The line this watcher should see for ``event``, or None."""
        flt = self.filter
        if flt.predicate is None:
            # A namespace alone: objects never change namespace, so no selector transitions.
            return self._line(event) if flt.namespace is None or flt.namespace == event.key[0] else None
        if event.type == DELETED:
            return self._line(event) if flt.matches(event.obj) else None
        now = flt.matches(event.obj)
        before = flt.matches(event.prev)
        if now and (before or event.type == ADDED):
            return self._line(event)
        if now:
            return self._line(event, ADDED, event.obj)
        if before and event.prev is not None:
            return self._line(event, DELETED, _with_rv(event.prev, event.rv))
        return None

    def _line(self, event: Event, event_type: str = "", obj: dict[str, Any] | None = None) -> bytes:
        """The event's shared line, unless the type changes or this watch reads objects its own way."""
        flt = self.filter
        view = flt.view
        if view is None and not event_type:
            if flt.omit_managed_fields:
                return line_around(event.type, encoded_without_managed_fields(event.obj))
            return event.line()
        obj = event.obj if obj is None else obj
        if view is not None:
            obj = view(obj)
        if flt.omit_managed_fields:
            obj = without_managed_fields(obj)
        return orjson.dumps({"type": event_type or event.type, "object": obj}) + b"\n"

    def push_line(self, line: bytes) -> None:
        """Queue a line produced outside the event stream (initial state, bookmarks)."""
        self._lines.append(line)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def use_sink(self, sink: Sink | None) -> None:
        """Let ``sink`` write this watch's lines while its reader is parked (None: stop)."""
        self._sink = sink

    def interrupt(self) -> None:
        """Wake a parked reader without lines, as its timeout would (a bookmark is due)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take_delivered(self) -> bool:
        """Whether the sink wrote lines since the last call."""
        delivered, self._delivered = self._delivered, False
        return delivered

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._sink is None or self.closed:
            waiter.set_result(None)
        elif not self._flush_pending:
            self._flush_pending = True
            _schedule_flush(self, waiter.get_loop())

    def _flush(self) -> None:
        self._flush_pending = False
        waiter = self._waiter
        if waiter is None or waiter.done() or not self._lines:
            return  # the reader is running, or already took the lines
        if self.closed or self._sink is None or not self._sink(list(self._lines)):
            waiter.set_result(None)
            return
        self._lines.clear()
        self._delivered = True

    async def next_lines(self, timeout: float | None) -> list[bytes]:
        """Wait for lines; an empty list means the timeout passed or the watch is closed (or,
        with a sink, that it wrote the lines itself: :meth:`take_delivered`)."""
        if not self._lines and not self.closed:
            if timeout is not None and timeout <= 0:
                return []
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if not self._lines:
                return []
        lines = list(self._lines)
        self._lines.clear()
        return lines


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# Watchers with lines for their sinks, flushed together by one callback per loop iteration; per
# loop, as clusters on other threads' loops publish too.
_pending: dict[asyncio.AbstractEventLoop, list[Watcher]] = {}


def _schedule_flush(watcher: Watcher, loop: asyncio.AbstractEventLoop) -> None:
    batch = _pending.get(loop)
    if batch is None:
        # A loop closed before its flush ran (a cluster torn down mid-write) must not keep its
        # watchers and their connections alive here.
        for closed in [other for other in _pending if other.is_closed()]:
            del _pending[closed]
        batch = _pending[loop] = []
        loop.call_soon(_flush_batch, loop)
    batch.append(watcher)


def _flush_batch(loop: asyncio.AbstractEventLoop) -> None:
    for watcher in _pending.pop(loop, []):
        try:
            watcher._flush()
        except Exception:  # one broken connection must not keep lines from the others
            log.exception("watch sink failed; waking its reader")
            watcher.use_sink(None)
            watcher._wake()


# Where the hub files a watch: the namespace and the name it is limited to (None: any).
Scope = tuple[str | None, str | None]


def _scope(watcher: Watcher) -> Scope:
    return watcher.filter.namespace, watcher.filter.name


class WatchHub:
    """Watchers per storage key and scope, so that an event is offered only to the watches that
    can see it: those of its namespace, of its name, of both, and the unscoped ones, as upstream's
    watch cache indexes them."""

    def __init__(self) -> None:
        self._by_storage: dict[tuple[str, str], dict[Scope, set[Watcher]]] = {}

    def add(self, storage: tuple[str, str], watcher: Watcher) -> None:
        self._by_storage.setdefault(storage, {}).setdefault(_scope(watcher), set()).add(watcher)

    def remove(self, storage: tuple[str, str], watcher: Watcher) -> None:
        groups = self._by_storage.get(storage)
        scope = _scope(watcher)
        watchers = groups.get(scope) if groups is not None else None
        if watchers is None:
            return
        watchers.discard(watcher)
        if not watchers:
            del groups[scope]
            if not groups:
                del self._by_storage[storage]

    def publish(self, event: Event) -> None:
        groups = self._by_storage.get(event.storage)
        if not groups:
            return
        namespace, name = event.key
        watchers: tuple[Watcher, ...] = ()
        for scope in ((None, None), (namespace, None), (None, name), (namespace, name)):
            group = groups.get(scope)
            if group:
                watchers += tuple(group)
        for watcher in watchers:
            try:
                watcher.offer(event)
            except Exception:  # one watcher's failing filter must not keep the event from the others
                log.exception("watcher failed on event %s; closing it", event.rv)
                watcher.close()

    def watching(self, storage: tuple[str, str]) -> bool:
        """Whether any watcher is open on ``storage``."""
        return storage in self._by_storage

    def close_all(self) -> None:
        for groups in self._by_storage.values():
            for watchers in groups.values():
                for watcher in watchers:
                    watcher.close()
        self._by_storage.clear()

    def count(self) -> int:
        return sum(len(w) for groups in self._by_storage.values() for w in groups.values())
