"""Watch fan-out: one queue per watcher, fed synchronously at commit time.

A committed event is offered to every watcher of its storage key in commit order, so all
watchers see one order.  Filtering (namespace, label and field selectors) happens at offer
time; selector transitions become ADDED/DELETED as upstream's watch cache does.  A watcher that
falls more than ``limit`` events behind is closed with 410 so its client re-lists, instead of
holding memory or slowing the writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from fakeapi.store.eventlog import ADDED, DELETED, Event

Filter = Callable[[dict[str, Any]], bool]
log = logging.getLogger("fakeapi.store")


@dataclass(frozen=True)
class WatchFilter:
    """What one watch wants: a namespace (None = all) and an object predicate."""

    namespace: str | None = None
    predicate: Filter | None = None
    # How objects read for this watch (a custom resource's version); None: as stored.
    view: Callable[[dict[str, Any]], dict[str, Any]] | None = None

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
        if flt.namespace is None and flt.predicate is None:
            return self._line(event)
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
        view = self.filter.view
        if view is None and not event_type:
            return event.line()
        obj = event.obj if obj is None else obj
        return orjson.dumps({"type": event_type or event.type, "object": obj if view is None else view(obj)}) + b"\n"

    def push_line(self, line: bytes) -> None:
        """Queue a line produced outside the event stream (initial state, bookmarks)."""
        self._lines.append(line)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_lines(self, timeout: float | None) -> list[bytes]:
        """Wait for lines; an empty list means the timeout passed or the watch is closed."""
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


class WatchHub:
    """Watchers per storage key."""

    def __init__(self) -> None:
        self._by_storage: dict[tuple[str, str], set[Watcher]] = {}

    def add(self, storage: tuple[str, str], watcher: Watcher) -> None:
        self._by_storage.setdefault(storage, set()).add(watcher)

    def remove(self, storage: tuple[str, str], watcher: Watcher) -> None:
        watchers = self._by_storage.get(storage)
        if watchers is not None:
            watchers.discard(watcher)

    def publish(self, event: Event) -> None:
        for watcher in tuple(self._by_storage.get(event.storage, ())):
            try:
                watcher.offer(event)
            except Exception:  # one watcher's failing filter must not keep the event from the others
                log.exception("watcher failed on event %s; closing it", event.rv)
                watcher.close()

    def watching(self, storage: tuple[str, str]) -> bool:
        """Whether any watcher is open on ``storage``."""
        return bool(self._by_storage.get(storage))

    def close_all(self) -> None:
        for watchers in self._by_storage.values():
            for watcher in watchers:
                watcher.close()
        self._by_storage.clear()

    def count(self) -> int:
        return sum(len(w) for w in self._by_storage.values())
