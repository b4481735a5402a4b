"""Node heartbeats: the kubelet's node lease, for every Node (the emulation stands in for every
node's kubelet).

Each Node gets a Lease of its name in ``kube-node-lease``, held by the node, owned by it (so the
garbage collector removes it with the node) and renewed every ``renew_interval`` seconds (the
kubelet's 10 s, a quarter of the 40 s ``leaseDurationSeconds``) on the control plane's clock.
``kubectl describe node`` shows it under "Lease".

As upstream's lease controller, a renewal updates the lease last written (one PUT); only the first
renewal, or one after a conflict or a deletion, reads it first.  At 5,000 nodes that is 500
requests a second instead of 1,000 (BENCHMARKS.md, How cost grows).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

from fakeapi.scheduler.client import GVR, NODES, ApiClient
from fakeapi.scheduler.clock import Clock, Timer
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, Conflict, NotFound
from fakeapi.machinery.timestamps import format_micro_rfc3339

LEASES = GVR("coordination.k8s.io", "v1", "leases", True)
NODE_LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
RENEW_INTERVAL = LEASE_DURATION_SECONDS / 4
MAX_UPDATE_RETRIES = 5  # upstream's lease controller's bound


def node_lease(node: dict, renew_time: str) -> dict:
    """The Lease a node's kubelet keeps: held by the node, owned by it, renewed at ``renew_time``."""
    meta = node["metadata"]
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": meta["name"], "namespace": NODE_LEASE_NAMESPACE,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": meta["name"],
                                              "uid": meta.get("uid", "")}]},
            "spec": {"holderIdentity": meta["name"], "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                     "renewTime": renew_time}}


class NodeLeases:
    """Creates and renews the node lease of every Node."""

    def __init__(self, api: ApiClient, factory: InformerFactory, *, clock: Clock | None = None,
                 renew_interval: float = RENEW_INTERVAL) -> None:
        self._api = api
        self._clock = clock or Clock()
        self._renew_interval = renew_interval
        self._queue: WorkQueue[str] = WorkQueue()
        self._timers: dict[str, Timer] = {}
        self._latest: dict[str, dict] = {}  # the lease as our last write left it, per node
        self._nodes = factory.informer(NODES)
        self._nodes.add_event_handler(self._on_node, lambda old, new: None, self._forget)

    async def run(self) -> None:
        """Renew leases until cancelled."""
        try:
            await process(self._queue, self._renew, name="node-lease")
        finally:
            for timer in self._timers.values():
                timer.cancel()

    def _on_node(self, node: dict) -> None:
        self._queue.add(node["metadata"]["name"])

    def _forget(self, node: dict) -> None:
        self._latest.pop(node["metadata"]["name"], None)
        self._cancel_timer(node["metadata"]["name"])

    def _cancel_timer(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    async def _renew(self, name: str) -> None:
        node = self._nodes.lister.get(None, name)
        if node is None:
            return
        now = format_micro_rfc3339(datetime.fromtimestamp(self._clock.now(), UTC))
        lease = node_lease(node, now)
        for _ in range(MAX_UPDATE_RETRIES):  # a conflict means someone else wrote it: read it, try again
            current = self._latest.pop(name, None) or await self._read_or_create(name, lease)
            if current is None:
                break
            current["spec"] = {**(current.get("spec") or {}), **lease["spec"]}
            try:
                self._latest[name] = await self._api.update(LEASES, NODE_LEASE_NAMESPACE, current)
            except NotFound:  # deleted meanwhile: the next renewal creates it
                break
            except Conflict:
                continue
            break
        self._cancel_timer(name)
        self._timers[name] = self._clock.call_later(self._renew_interval, lambda: self._queue.add(name))

    async def _read_or_create(self, name: str, lease: dict) -> dict | None:
        """The stored lease to update, or None once this created it (or found it being created)."""
        try:
            return await self._api.get(LEASES, NODE_LEASE_NAMESPACE, name)
        except NotFound:
            with contextlib.suppress(AlreadyExists):
                self._latest[name] = await self._api.create(LEASES, NODE_LEASE_NAMESPACE, lease)
            return None
