"""The ordered, bounded log of committed changes (the etcd revision history of fakeapi).

Every committed write gets the next value of one global resourceVersion and appends one
:class:`Event` here.  Watches resume from the log and paginated lists rebuild the state at an
older revision from it; anything older than the retained window answers 410 Expired, exactly
like a compacted etcd.  The window is bounded twice: by a number of events and by the bytes of
the objects they carry, so churning large objects cannot hold more memory than small ones.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.errors import Expired
from fakeapi.machinery.managedfields import without_managed_fields

# Watch event types, as the wire spells them.
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

StorageKey = tuple[str, str]
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped


def watch_line(event_type: str, obj: dict[str, Any]) -> bytes:
    """One line of a watch stream: ``{"type": ..., "object": ...}`` and a newline."""
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


_LINE_HEADS = {t: b'{"type":"%s","object":' % t.encode() for t in (ADDED, MODIFIED, DELETED)}


def line_around(event_type: str, body: bytes) -> bytes:
    """:func:`watch_line` of an ADDED, MODIFIED or DELETED event from its object's JSON ``body``
    (the same bytes, without serializing the object again)."""
    return _LINE_HEADS[event_type] + body + b"}\n"


# The object last written without managedFields, and those bytes: a client that reads objects
# without them (the control plane) is answered for its write with what its watch line carried just
# before, at the commit.  One slot for the process, checked by identity (the slot keeps the object
# alive, so no other object can take its id).
_last_without: tuple[Any, bytes] = (None, b"")


def encoded_without_managed_fields(obj: Any) -> bytes:
    """``orjson.dumps`` of ``obj`` without ``metadata.managedFields``, serialized once per object
    in a row: for objects no one edits once written (stored objects, answers)."""
    global _last_without
    last, body = _last_without
    if last is not obj:
        body = orjson.dumps(without_managed_fields(obj))
        _last_without = (obj, body)
    return body


@dataclass(eq=False)
class Event:
    """One committed change.  ``obj`` is the stored object after the change (for DELETED, the
    last state with the deletion resourceVersion); ``prev`` is the state before (None on ADDED).
    ``size`` is the length of its watch line, what the log's byte budget counts."""

    rv: int
    type: str
    storage: StorageKey
    key: ObjectKey
    obj: dict[str, Any]
    prev: dict[str, Any] | None
    size: int = 0
    _line: bytes | None = field(default=None, repr=False)

    def line(self) -> bytes:
        """The watch line for this event, serialized once for every watcher."""
        if self._line is None:
            self._line = watch_line(self.type, self.obj)
        return self._line


class EventLog:
    """A window of events in resourceVersion order, at most ``window`` events and ``max_bytes``
    bytes of watch lines (the newest event always stays, however large)."""

    def __init__(self, window: int, max_bytes: int | None = None) -> None:
        self._events: deque[Event] = deque()
        self.window = window
        self.max_bytes = max_bytes
        # Bytes of the events held (their ``size``), for the byte budget.
        self.bytes = 0
        # The oldest revision a client may still resume from; bumped as events fall out.
        self.compacted_rv = 0

    def append(self, event: Event) -> None:
        events = self._events
        events.append(event)
        self.bytes += event.size
        while len(events) > self.window or (
                self.max_bytes is not None and self.bytes > self.max_bytes and len(events) > 1):
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        dropped = self._events.popleft()
        self.bytes -= dropped.size
        self.compacted_rv = max(self.compacted_rv, dropped.rv)

    def compact(self, rv: int) -> None:
        """Forget everything up to and including ``rv`` (tests use it to provoke 410)."""
        while self._events and self._events[0].rv <= rv:
            self._drop_oldest()
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
