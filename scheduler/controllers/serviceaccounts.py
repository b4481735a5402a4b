"""The serviceaccounts controller (kube-controller-manager's ``serviceaccount`` loop): every
active namespace has a ServiceAccount named ``default``, created with the namespace and again
if someone deletes it."""

from __future__ import annotations

import contextlib

from fakeapi.scheduler.client import GVR, NAMESPACES, ApiClient
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, Forbidden, NotFound

SERVICE_ACCOUNTS = GVR("", "v1", "serviceaccounts", True)
DEFAULT = "default"


class ServiceAccountsController:
    """Creates the ``default`` ServiceAccount of every active namespace."""

    def __init__(self, api: ApiClient, factory: InformerFactory) -> None:
        self._api = api
        self._queue: WorkQueue[str] = WorkQueue()
        self._namespaces = factory.informer(NAMESPACES)
        self._accounts = factory.informer(SERVICE_ACCOUNTS)
        self._namespaces.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), lambda ns: None)
        self._accounts.add_event_handler(lambda sa: None, lambda old, new: None, self._on_account_deleted)

    async def run(self) -> None:
        """Ensure default accounts until cancelled."""
        await process(self._queue, self._sync, name="serviceaccount-controller")

    def _enqueue(self, namespace: dict) -> None:
        self._queue.add(namespace["metadata"]["name"])

    def _on_account_deleted(self, account: dict) -> None:
        if account["metadata"]["name"] == DEFAULT:
            self._queue.add(account["metadata"]["namespace"])

    async def _sync(self, name: str) -> None:
        namespace = self._namespaces.lister.get(None, name)
        if namespace is None or (namespace.get("status") or {}).get("phase") == "Terminating":
            return
        if self._accounts.lister.get(name, DEFAULT) is not None:
            return
        # A namespace that starts terminating meanwhile refuses new content (403): nothing to do.
        with contextlib.suppress(AlreadyExists, Forbidden, NotFound):
            await self._api.create(SERVICE_ACCOUNTS, name, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                            "metadata": {"name": DEFAULT}})
