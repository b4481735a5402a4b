"""The server's side of the control plane's lazy loops (``fakeapi.scheduler.controllers.triggers``):
whether objects of a resource exist, and a call when the first one is committed, read off the
store in the same process instead of a watch per resource."""

from __future__ import annotations

from collections.abc import Callable, Collection

from fakeapi.registry.rest import Registry
from fakeapi.store.eventlog import DELETED, Event
from fakeapi.store.objects import StorageKey

Resource = tuple[str, str]  # (API group, plural)
Pending = Callable[[], None]
# Objects the API server makes for itself, which no controller acts on: its own Service.
_OWN: dict[Resource, frozenset[tuple[str, str]]] = {("", "services"): frozenset({("default", "kubernetes")})}


class StorePresence:
    """:class:`~fakeapi.scheduler.controllers.triggers.Presence` over one registry's store; it
    listens to commits only while a call is pending."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._pending: dict[StorageKey, list[Pending]] = {}
        self._own: dict[StorageKey, frozenset[tuple[str, str]]] = {}
        self._listening = False

    def present(self, resources: Collection[Resource]) -> bool:
        for resource in resources:
            rt = self._registry.kinds.by_plural(*resource)
            if rt is None:
                continue
            own = _OWN.get(resource, frozenset())
            count = self._registry.store.count(rt.storage_key)
            if count > len(own) or (count and any((obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
                                                  not in own for obj in self._registry.reads.items(rt))):
                return True
        return False

    def when_present(self, resources: Collection[Resource], callback: Callable[[], None]) -> Callable[[], None]:
        def pending() -> None:  # a distinct object per call, so that cancelling finds this one
            callback()

        for resource in resources:
            rt = self._registry.kinds.by_plural(*resource)
            if rt is not None:
                self._pending.setdefault(rt.storage_key, []).append(pending)
                self._own[rt.storage_key] = _OWN.get(resource, frozenset())
        if self._pending and not self._listening:
            self._registry.reads.subscribe(self._on_event)
            self._listening = True
        return lambda: self._drop(pending)

    def _on_event(self, event: Event) -> None:
        waiting = self._pending.get(event.storage)
        if waiting is None or event.type == DELETED or event.key in self._own[event.storage]:
            return
        for pending in list(waiting):
            self._drop(pending)
            pending()

    def _drop(self, pending: Pending) -> None:
        for key in [key for key, waiting in self._pending.items() if pending in waiting]:
            waiting = self._pending[key]
            waiting.remove(pending)
            if not waiting:
                del self._pending[key]
        if not self._pending and self._listening:
            self._registry.reads.unsubscribe(self._on_event)
            self._listening = False
