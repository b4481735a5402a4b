"""The ordered, bounded log of committed changes (the etcd revision history of fakeapi).

Every committed write gets the next value of one global resourceVersion and appends one
:class:`Event` here.  Watches resume from the log and paginated lists rebuild the state at an
older revision from it; anything older than the retained window answers 410 Expired, exactly
like a compacted etcd.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.errors import Expired

# Watch event types, as the wire spells them.
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

StorageKey = tuple[str, str]
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped


@dataclass(eq=False)
class Event:
    """One committed change.  ``obj`` is the stored object after the change (for DELETED, the
    last state with the deletion resourceVersion); ``prev`` is the state before (None on ADDED)."""

    rv: int
    type: str
    storage: StorageKey
    key: ObjectKey
    obj: dict[str, Any]
    prev: dict[str, Any] | None
    _line: bytes | None = field(default=None, repr=False)

    def line(self) -> bytes:
        """The watch line for this event, serialized once for every watcher."""
        if self._line is None:
            self._line = orjson.dumps({"type": self.type, "object": self.obj}) + b"\n"
        return self._line


class EventLog:
    """A bounded window of events in resourceVersion order."""

    def __init__(self, window: int) -> None:
        self._events: deque[Event] = deque(maxlen=window)
        # The oldest revision a client may still resume from; bumped as events fall out.
        self.compacted_rv = 0

    def append(self, event: Event) -> None:
        if len(self._events) == self._events.maxlen and self._events:
            self.compacted_rv = self._events[0].rv
        self._events.append(event)

    def compact(self, rv: int) -> None:
        """Forget everything up to and including ``rv`` (tests use it to provoke 410)."""
        while self._events and self._events[0].rv <= rv:
            self._events.popleft()
        self.compacted_rv = max(self.compacted_rv, rv)

    def check(self, rv: int) -> None:
        """Raise 410 if resuming after ``rv`` would miss compacted events."""
        if rv < self.compacted_rv:
            raise Expired(f"too old resource version: {rv} ({self.compacted_rv + 1})")

    def since(self, rv: int, storage: StorageKey | None = None) -> Iterator[Event]:
        """Events after ``rv`` (optionally for one storage key), oldest first."""
        events = self._events
        if not events or events[-1].rv <= rv:
            return
        # Binary search on the deque by index: events are in strictly increasing rv order.
        lo, hi = 0, len(events)
        while lo < hi:
            mid = (lo + hi) // 2
            if events[mid].rv <= rv:
                lo = mid + 1
            else:
                hi = mid
        for i in range(lo, len(events)):
            ev = events[i]
            if storage is None or ev.storage == storage:
                yield ev
