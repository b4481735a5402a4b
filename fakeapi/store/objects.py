"""The versioned object store: current objects, one global resourceVersion, commit fan-out.

Stored objects are plain JSON dicts that are never mutated after commit, so readers, the event
log and watchers can share them without copying.  Writers build a new dict and commit it.
The store knows nothing about HTTP, kinds or validation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from fakeapi.store.eventlog import ADDED, DELETED, Event, EventLog, ObjectKey, StorageKey
from fakeapi.store.watch import Watcher, WatchFilter, WatchHub


def object_key(obj: dict[str, Any]) -> ObjectKey:
    """(namespace, name) of an object: its key in storage, list order and continue tokens."""
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class ObjectStore:
    """All objects of all kinds, keyed by storage key and (namespace, name)."""

    def __init__(self, *, window: int = 100_000, watcher_limit: int = 10_000) -> None:
        self.rv = 0
        self.log = EventLog(window)
        self.hub = WatchHub()
        self.watcher_limit = watcher_limit
        self._data: dict[StorageKey, dict[ObjectKey, dict[str, Any]]] = {}
        self._sorted: dict[StorageKey, list[ObjectKey]] = {}
        self._listeners: list[Callable[[Event], None]] = []
        self._committed = asyncio.Event()

    # -- reads ---------------------------------------------------------------------------------

    def get(self, storage: StorageKey, key: ObjectKey) -> dict[str, Any] | None:
        return self._data.get(storage, {}).get(key)

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

        For DELETED, ``obj`` is the last state; it is removed from the store.
        """
        key = object_key(obj)
        bucket = self._data.setdefault(storage, {})
        prev = bucket.get(key)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        if event_type == DELETED:
            del bucket[key]
            self._sorted.pop(storage, None)
        else:
            if prev is None:
                self._sorted.pop(storage, None)
            bucket[key] = obj
        event = Event(self.rv, event_type, storage, key, obj, prev)
        self.log.append(event)
        self.hub.publish(event)
        for listener in self._listeners:
            listener(event)
        self._committed.set()
        self._committed = asyncio.Event()
        return obj

    # -- watching ------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[Event], None]) -> None:
        """In-process subscribers (garbage collector); called synchronously after each commit."""
        self._listeners.append(listener)

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

    async def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Wait until the store has reached revision ``rv``; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.rv < rv:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._committed.wait(), remaining)
            except TimeoutError:
                return False
        return True


def _added_line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": ADDED, "object": obj}) + b"\n"
