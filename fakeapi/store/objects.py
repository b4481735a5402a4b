"""The versioned object store: current objects, one global resourceVersion, commit fan-out.

Stored objects are plain JSON dicts that are never mutated after commit, so readers, the event
log and watchers can share them without copying.  Writers build a new dict and commit it.
The store knows nothing about HTTP, kinds or validation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from fakeapi.errors import BadRequest, RequestEntityTooLarge
from fakeapi.store.eventlog import (
    ADDED,
    DELETED,
    MODIFIED,
    Event,
    EventLog,
    ObjectKey,
    StorageKey,
    line_around,
    watch_line,
)
from fakeapi.store.watch import Watcher, WatchFilter, WatchHub

log = logging.getLogger("fakeapi.store")

# The largest object storage takes: etcd's default --max-request-bytes (1.5 MiB), counted on the
# object's JSON (custom resources are stored as JSON; built-in kinds' protobuf is smaller).
MAX_OBJECT_BYTES = 1536 * 1024
# The bytes a watch line adds around its object, per event type.
_ENVELOPE = {t: len(watch_line(t, {})) - len(b"{}") for t in (ADDED, MODIFIED, DELETED)}


def object_key(obj: dict[str, Any]) -> ObjectKey:
    """(namespace, name) of an object: its key in storage, list order and continue tokens."""
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class ObjectStore:
    """All objects of all kinds, keyed by storage key and (namespace, name)."""

    def __init__(self, *, window: int = 100_000, window_bytes: int | None = None,
                 watcher_limit: int = 10_000) -> None:
        self.rv = 0
        self.log = EventLog(window, window_bytes)
        self.hub = WatchHub()
        self.watcher_limit = watcher_limit
        self._data: dict[StorageKey, dict[ObjectKey, dict[str, Any]]] = {}
        self._sorted: dict[StorageKey, list[ObjectKey]] = {}
        self._listeners: list[Callable[[Event], None]] = []
        # Set by the next commit; made only while someone waits for one (most commits have no waiter).
        self._committed: asyncio.Event | None = None

    # -- reads ---------------------------------------------------------------------------------

    def get(self, storage: StorageKey, key: ObjectKey) -> dict[str, Any] | None:
        return self._data.get(storage, {}).get(key)

    def count(self, storage: StorageKey) -> int:
        """How many objects are stored under ``storage``."""
        return len(self._data.get(storage, ()))

    def items(self, storage: StorageKey, namespace: str | None = None) -> list[dict[str, Any]]:
        """Current objects ordered by (namespace, name), as etcd key order."""
        data = self._data.get(storage)
        if not data:
            return []
        keys = self._sorted.get(storage)
        if keys is None:
            keys = self._sorted[storage] = sorted(data)
        if namespace is None:
            return [data[k] for k in keys]
        return [data[k] for k in keys if k[0] == namespace]

    def snapshot_at(self, storage: StorageKey, rv: int) -> dict[ObjectKey, dict[str, Any]]:
        """The objects of one storage key as they were at revision ``rv`` (410 if compacted)."""
        self.log.check(rv)
        state = dict(self._data.get(storage, {}))
        for event in reversed(list(self.log.since(rv, storage))):
            if event.prev is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.prev
        return state

    # -- writes --------------------------------------------------------------------------------

    def commit(self, storage: StorageKey, event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` (a dict the caller hands over) under the next revision and fan it out.

        For DELETED, ``obj`` is the last state; it is removed from the store.  A commit is all or
        nothing: the object is serialized (its watch line) before anything changes, so one that
        cannot be encoded, or is larger than storage takes (413), leaves the store, the log and
        every watcher as they were.
        """
        key = object_key(obj)
        bucket = self._data.get(storage)
        prev = None if bucket is None else bucket.get(key)
        if event_type == DELETED and prev is None:
            raise LookupError(f"nothing is stored under {storage} {key} to delete")
        meta = obj["metadata"]
        rv = self.rv + 1
        previous_rv = meta.get("resourceVersion")
        meta["resourceVersion"] = str(rv)
        try:
            body = _checked_body(event_type, obj)
        except (BadRequest, RequestEntityTooLarge):
            if previous_rv is None:
                meta.pop("resourceVersion")
            else:
                meta["resourceVersion"] = previous_rv
            raise
        # Nothing below can fail.
        self.rv = rv
        if bucket is None:
            bucket = self._data[storage] = {}
        if event_type == DELETED:
            del bucket[key]
            self._sorted.pop(storage, None)
        else:
            if prev is None:
                self._sorted.pop(storage, None)
            bucket[key] = obj
        # The line is kept for watchers to share; unwatched, the log holds only the object.
        event = Event(rv, event_type, storage, key, obj, prev, len(body) + _ENVELOPE[event_type],
                      line_around(event_type, body) if self.hub.watching(storage) else None)
        global _last_encoded
        _last_encoded = (obj, body)
        self.log.append(event)
        self.hub.publish(event)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # the write is committed: a failing subscriber must not undo half of it
                log.exception("store listener failed on %s %s %s", event_type, storage, key)
        self._wake()
        return obj

    # -- watching ------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[Event], None]) -> None:
        """In-process subscribers (garbage collector); called synchronously after each commit."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[Event], None]) -> None:
        """Undo :meth:`add_listener`, also from within a listener: a commit in progress calls
        the listeners it started with (the list is replaced, not changed)."""
        self._listeners = [other for other in self._listeners if other is not listener]

    def open_watch(self, storage: StorageKey, flt: WatchFilter, *, since: int | None,
                   initial: Iterable[dict[str, Any]] = ()) -> Watcher:
        """Register a watcher atomically with its backlog: synthetic ADDED for ``initial``
        objects, then every logged event after ``since`` (410 if compacted), then live events."""
        if since is not None:
            self.log.check(since)
        watcher = Watcher(flt, self.watcher_limit)
        for obj in initial:
            if flt.matches(obj):
                watcher.push_line(_added_line(obj))
        if since is not None:
            for event in self.log.since(since, storage):
                watcher.offer(event)
        self.hub.add(storage, watcher)
        return watcher

    def close_watch(self, storage: StorageKey, watcher: Watcher) -> None:
        self.hub.remove(storage, watcher)
        watcher.close()

    def compact_history(self) -> int:
        """Forget every event so far, as an etcd compaction at a fresh revision: resuming a watch
        or a list from any earlier revision gets 410.  The revision moves on by one with no object
        changed (etcd's revision moves with writes to any key), so a client that is up to date
        gets 410 too.  Returns the new revision (fault injection)."""
        self.rv += 1
        self.log.compact(self.rv)
        self._wake()
        return self.rv

    def _wake(self) -> None:
        """Wake whoever waits for the revision to move."""
        committed, self._committed = self._committed, None
        if committed is not None:
            committed.set()

    async def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Wait until the store has reached revision ``rv``; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.rv < rv:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            if self._committed is None:
                self._committed = asyncio.Event()
            try:
                async with asyncio.timeout(remaining):
                    await self._committed.wait()
            except TimeoutError:
                return False
        return True


def _added_line(obj: dict[str, Any]) -> bytes:
    return watch_line(ADDED, obj)


def _checked_body(event_type: str, obj: dict[str, Any]) -> bytes:
    """The object's JSON, what its watch line and the write's response carry; 400 if it cannot be
    encoded, 413 if storage would refuse it (a deletion always goes through, whatever its size)."""
    try:
        body = orjson.dumps(obj)
    except orjson.JSONEncodeError as exc:
        raise BadRequest(f"the object cannot be stored: {exc}") from exc
    if len(body) > MAX_OBJECT_BYTES and event_type != DELETED:
        raise RequestEntityTooLarge(f"etcdserver: request is too large (the object is {len(body)} bytes, "
                                    f"storage takes at most {MAX_OBJECT_BYTES})")
    return body


# The object the latest commit stored, with its JSON: a write answers with the object it stored,
# and stored objects never change, so the response reuses these bytes instead of serializing it
# again.  One slot for every store of the process, checked by identity.
_last_encoded: tuple[Any, bytes] = (None, b"")


def encoded(obj: Any) -> bytes:
    """``orjson.dumps(obj)``, without serializing again the object a commit has just stored."""
    last, body = _last_encoded
    return body if last is obj else orjson.dumps(obj)
