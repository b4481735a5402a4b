"""The server's side of the control plane's lazy informers and loops
(``fakeapi.scheduler.informers.presence``): whether objects of a resource exist, and a call when
one is next committed, read off the store in the same process instead of a watch per resource."""

from __future__ import annotations

from collections.abc import Callable, Collection

from fakeapi.registry.rest import Registry
from fakeapi.registry.writes import WriteOptions
from fakeapi.scheduler.client import CONTROLLER_MANAGER
from fakeapi.scheduler.informers.presence import Resource
from fakeapi.store.eventlog import Event
from fakeapi.store.objects import StorageKey

Pending = Callable[[], None]


class StorePresence:
    """:class:`~fakeapi.scheduler.informers.presence.Presence` over one registry's store.

    What the server held when this was made (its bootstrap: namespaces, the ``kubernetes``
    Service, the RBAC roles; the default ServiceAccounts of :func:`seed_default_service_accounts`)
    is the loops' starting point, not their work: an object counts once it was created or changed
    after that.  It listens to commits only while a call is pending."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._since = registry.reads.resource_version
        self._pending: dict[StorageKey, list[Pending]] = {}
        self._listening = False

    def exists(self, resource: Resource) -> bool:
        rt = self._registry.kinds.resource(*resource)
        return rt is None or self._registry.store.count(rt.storage_key) > 0

    def present(self, resources: Collection[Resource]) -> bool:
        for resource in resources:
            rt = self._registry.kinds.resource(*resource)
            if rt is not None and any(int(obj["metadata"]["resourceVersion"]) > self._since
                                      for obj in self._registry.store.items(rt.storage_key)):
                return True
        return False

    def when_present(self, resources: Collection[Resource], callback: Callable[[], None]) -> Callable[[], None]:
        def pending() -> None:  # a distinct object per call, so that cancelling finds this one
            callback()

        for resource in resources:
            rt = self._registry.kinds.resource(*resource)
            if rt is not None:
                self._pending.setdefault(rt.storage_key, []).append(pending)
        if self._pending and not self._listening:
            self._registry.reads.subscribe(self._on_event)
            self._listening = True
        return lambda: self._drop(pending)

    def _on_event(self, event: Event) -> None:
        waiting = self._pending.get(event.storage)
        if waiting is None:
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


def seed_default_service_accounts(registry: Registry) -> None:
    """The serviceaccount loop's work on a fresh server, done before the control plane starts:
    the ``default`` ServiceAccount of every live namespace.  The loop then waits for a namespace
    or ServiceAccount to change (a test's new namespace, a deleted account) instead of watching
    both from the start, and the accounts exist as soon as the cluster is entered."""
    accounts = registry.kinds.by_plural("", "serviceaccounts")
    assert accounts is not None
    for namespace in registry.reads.items(registry.kinds.namespaces):
        name = namespace["metadata"]["name"]
        terminating = (namespace.get("status") or {}).get("phase") == "Terminating"
        if not terminating and registry.reads.find(accounts, name, "default") is None:
            registry.writes.create(accounts, name, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                    "metadata": {"name": "default"}},
                                   WriteOptions(manager=CONTROLLER_MANAGER))  # as the loop's client writes
