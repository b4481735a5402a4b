"""The endpoints and endpointslice controllers (kube-controller-manager's ``endpoint`` and
``endpointslice`` loops): every Service with a selector gets EndpointSlices (label
``kubernetes.io/service-name``, owned by the Service) and an Endpoints object of the same name,
listing the pods it selects (:mod:`fakeapi.scheduler.rules.endpoints`).

Services, pods and slices are watched; any change enqueues the services concerned, and a sync
writes only what differs.  Slices go with their Service through the garbage collector; the
Endpoints object, which upstream does not own, is deleted when its Service is gone.
"""

from __future__ import annotations

import contextlib

from fakeapi.scheduler.client import GVR, PODS, ApiClient
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules import endpoints as rules
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, NotFound

SERVICES = GVR("", "v1", "services", True)
ENDPOINTS = GVR("", "v1", "endpoints", True)
ENDPOINT_SLICES = GVR("discovery.k8s.io", "v1", "endpointslices", True)
_BY_SERVICE = "endpoints/service"

Key = tuple[str, str]


def _slice_service(eps: dict) -> list[str]:
    labels = (eps.get("metadata") or {}).get("labels") or {}
    if labels.get(rules.MANAGED_BY_LABEL) != rules.CONTROLLER_NAME or not labels.get(rules.SERVICE_NAME_LABEL):
        return []
    return [f"{eps['metadata']['namespace']}/{labels[rules.SERVICE_NAME_LABEL]}"]


class EndpointsController:
    """Keeps each selecting Service's EndpointSlices and Endpoints in line with its pods."""

    def __init__(self, api: ApiClient, factory: InformerFactory) -> None:
        self._api = api
        self._queue: WorkQueue[Key] = WorkQueue()
        self._services = factory.informer(SERVICES)
        self._pods = factory.informer(PODS)
        self._slices = factory.informer(ENDPOINT_SLICES)
        self._endpoints = factory.informer(ENDPOINTS)
        # Slices created but not yet seen by the informer, per service (upstream's
        # EndpointSliceTracker): a sync that runs before the informer catches up must not create
        # them again.
        self._created: dict[Key, dict[str, dict]] = {}
        self._slices.add_index(_BY_SERVICE, _slice_service)
        self._services.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), self._enqueue)
        self._pods.add_event_handler(self._on_pod, self._on_pod_update, self._on_pod)
        self._slices.add_event_handler(self._on_slice, lambda old, new: self._on_slice(new), self._on_slice)

    async def run(self) -> None:
        """Sync services until cancelled."""
        await process(self._queue, lambda key: self._sync(*key), name="endpoints-controller")

    def _enqueue(self, service: dict) -> None:
        self._queue.add((service["metadata"]["namespace"], service["metadata"]["name"]))

    def _on_pod(self, pod: dict) -> None:
        for service in self._services.lister.list(pod["metadata"]["namespace"]):
            if rules.selects(service, pod):
                self._enqueue(service)

    def _on_pod_update(self, old: dict, new: dict) -> None:
        self._on_pod(old)  # a pod whose labels changed leaves the services it matched before
        self._on_pod(new)

    def _on_slice(self, eps: dict) -> None:
        for key in _slice_service(eps):
            namespace, name = key.split("/", 1)
            self._queue.add((namespace, name))

    async def _sync(self, namespace: str, name: str) -> None:
        service = self._services.lister.get(namespace, name)
        if service is None:
            with contextlib.suppress(NotFound):
                await self._api.delete(ENDPOINTS, namespace, name)
            return
        if rules.selector_of(service) is None:
            return  # selectorless services keep the endpoints their owners write
        pods = self._pods.lister.list(namespace)
        await self._sync_slices(service, pods)
        await self._sync_endpoints(service, pods)

    async def _sync_slices(self, service: dict, pods: list[dict]) -> None:
        namespace = service["metadata"]["namespace"]
        desired = rules.desired_slices(service, pods)
        key = (namespace, service["metadata"]["name"])
        seen = {s["metadata"]["name"]: s for s in self._slices.lister.by_index(_BY_SERVICE, "/".join(key))}
        created = self._created.setdefault(key, {})
        for slice_name in [n for n in created if n in seen]:
            del created[slice_name]
        existing = sorted({**created, **seen}.values(), key=lambda s: s["metadata"]["name"])
        for current, wanted in zip(existing, desired, strict=False):
            if not rules.same_slice(current, wanted):
                body = {**wanted, "metadata": {**current["metadata"], "labels": wanted["metadata"]["labels"]}}
                await self._api.update(ENDPOINT_SLICES, namespace, body)
        for wanted in desired[len(existing):]:
            made = await self._api.create(ENDPOINT_SLICES, namespace, wanted)
            created[made["metadata"]["name"]] = made
        for extra in existing[len(desired):]:
            created.pop(extra["metadata"]["name"], None)
            with contextlib.suppress(NotFound):
                await self._api.delete(ENDPOINT_SLICES, namespace, extra["metadata"]["name"])
        if not created:
            del self._created[key]

    async def _sync_endpoints(self, service: dict, pods: list[dict]) -> None:
        meta = service["metadata"]
        desired = rules.desired_endpoints(service, pods)
        current = self._endpoints.lister.get(meta["namespace"], meta["name"])
        if current is None:
            with contextlib.suppress(AlreadyExists):  # the informer lags; the next event brings it
                await self._api.create(ENDPOINTS, meta["namespace"], desired)
            return
        if current.get("subsets") != desired.get("subsets") or \
                current["metadata"].get("labels") != desired["metadata"]["labels"]:
            body = {**desired, "metadata": {**current["metadata"], "labels": desired["metadata"]["labels"]}}
            await self._api.update(ENDPOINTS, meta["namespace"], body)
