"""A shared informer: reflector -> indexed cache -> event handlers.

Contract (as client-go's ``SharedInformer``): the cache is eventually consistent with the
server; handlers see the changes of one object in order; handlers are synchronous and quick —
they only enqueue keys on a work queue, the real work happens in the controller's worker.
Objects passed to handlers and returned by the lister are shared: never mutate them.

As kube-scheduler's and kube-controller-manager's informers (their transform that trims
managedFields), the cache holds objects without ``metadata.managedFields``: no loop reads them,
they are nearly half of a scheduled pod's or claim's JSON, and a write of a
cached object that omits them leaves the stored ones in place.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from fakeapi.scheduler.client import GVR, ApiClient, trim_managed_fields
from fakeapi.scheduler.informers.cache import IndexFunc, Lister, Store
from fakeapi.scheduler.informers.reflector import Reflector
from fakeapi.scheduler.rules.keys import object_key

log = logging.getLogger(__name__)


def _resource_version(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion") or ""


class Informer:
    """Watches one resource, keeps a local indexed cache and notifies handlers of changes."""

    def __init__(self, api: ApiClient, gvr: GVR, *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None) -> None:
        self.gvr = gvr
        self._store = Store()
        self.lister = Lister(self._store)
        # the registered callbacks of each kind, in registration order
        self._on_add: list[Callable[[dict], None]] = []
        self._on_update: list[Callable[[dict, dict], None]] = []
        self._on_delete: list[Callable[[dict], None]] = []
        self._synced = asyncio.Event()
        self._reflector = Reflector(api, gvr, self, namespace=namespace, label_selector=label_selector,
                                    field_selector=field_selector)

    def add_event_handler(self, on_add: Callable[[dict], None] | None = None,
                          on_update: Callable[[dict, dict], None] | None = None,
                          on_delete: Callable[[dict], None] | None = None) -> None:
        """Register callbacks; a late handler first gets ``on_add`` for every cached object."""
        for handlers, fn in ((self._on_add, on_add), (self._on_update, on_update), (self._on_delete, on_delete)):
            if fn is not None:
                handlers.append(fn)
        if on_add is not None and len(self._store):
            for obj in self.lister.list():
                self._dispatch([on_add], obj)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Add a named index usable through ``lister.by_index(name, value)``."""
        self._store.add_index(name, fn)

    def has_index(self, name: str) -> bool:
        """Whether an index of that name was added."""
        return self._store.has_index(name)

    @property
    def has_synced(self) -> bool:
        """True once the first complete list has been delivered."""
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    def assume_empty(self) -> None:
        """Synced without a list: the server holds no object of the resource (see the factory)."""
        self._synced.set()

    def expect_list(self) -> None:
        """Not synced until the first list, which :meth:`run` is about to fetch."""
        self._synced.clear()

    async def run(self) -> None:
        """List and watch until cancelled (see :mod:`scheduler.informers.reflector`)."""
        await self._reflector.run()

    # -- Sink: called by the reflector ------------------------------------------------------

    def replace(self, items: list[dict], resource_version: str) -> None:
        """Install a fresh list, telling handlers what changed since the previous state."""
        items = [trim_managed_fields(obj) for obj in items]
        fresh = {object_key(obj): obj for obj in items}
        for key, old in self._store.items():
            if key not in fresh:
                self._store.remove(key)
                self._notify_delete(old)
        for obj in items:
            old = self._store.upsert(obj)
            if old is None:
                self._notify_add(obj)
            elif _resource_version(old) != _resource_version(obj):
                self._notify_update(old, obj)
        self._synced.set()

    def apply(self, event_type: str, obj: dict) -> None:
        obj = trim_managed_fields(obj)
        if event_type == "DELETED":
            old = self._store.remove(object_key(obj))
            # The event carries the final state; prefer it over what we cached.
            if old is not None:
                self._notify_delete(obj)
            return
        old = self._store.upsert(obj)
        if old is None:
            self._notify_add(obj)
        else:
            self._notify_update(old, obj)

    # -- dispatch ------------------------------------------------------------------------

    def _notify_add(self, obj: dict) -> None:
        self._dispatch(self._on_add, obj)

    def _notify_update(self, old: dict, new: dict) -> None:
        self._dispatch(self._on_update, old, new)

    def _notify_delete(self, obj: dict) -> None:
        self._dispatch(self._on_delete, obj)

    def _dispatch(self, handlers: list[Callable[..., None]], *args: dict) -> None:
        for fn in handlers:
            # One broken handler must not stop the cache or the other handlers.
            try:
                fn(*args)
            except Exception:
                log.exception("%s event handler %r failed", self.gvr.plural, fn)
