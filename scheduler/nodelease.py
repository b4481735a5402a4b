"""Node heartbeats: the kubelet's node lease, for every Node (the emulation stands in for every
node's kubelet).

Each Node gets a Lease of its name in ``kube-node-lease``, held by the node, owned by it (so the
garbage collector removes it with the node) and renewed every ``renew_interval`` seconds (the
kubelet's 10 s, a quarter of the 40 s ``leaseDurationSeconds``) on the control plane's clock.
``kubectl describe node`` shows it under "Lease".  A node whose kubelet is down
(``fakeapi.dev/kubelet-stopped: "true"``) gets no renewals; when the annotation goes, the kubelet
posts the node's status again (the conditions the node lifecycle controller made ``Unknown``
turn healthy) and renews as before.

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
from fakeapi.scheduler.rules.lifecycle import kubelet_restarted, kubelet_stopped
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


# What a healthy kubelet posts for each condition the node lifecycle controller manages.
_HEALTHY = {"Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
            "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available")}


def posted_conditions(node: dict, now: str) -> list[dict]:
    """The conditions a kubelet back from a stop posts: those left ``Unknown`` (or a missing
    ``Ready``) turned healthy, to be merged by type."""
    have = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or ()}
    posted = []
    for kind, (status, reason, message) in _HEALTHY.items():
        current = have.get(kind)
        if (current is None and kind == "Ready") or (current is not None and current.get("status") == "Unknown"):
            posted.append({"type": kind, "status": status, "reason": reason, "message": message,
                           "lastHeartbeatTime": now, "lastTransitionTime": now})
    return posted


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
        # Nodes whose kubelet came back: they post their status once more.
        self._resumed: set[str] = set()
        self._nodes.add_event_handler(self._on_node, self._on_node_update, self._forget)

    async def run(self) -> None:
        """Renew leases until cancelled."""
        try:
            await process(self._queue, self._renew, name="node-lease")
        finally:
            for timer in self._timers.values():
                timer.cancel()

    def _on_node(self, node: dict) -> None:
        self._queue.add(node["metadata"]["name"])

    def _on_node_update(self, old: dict, node: dict) -> None:
        if kubelet_restarted(old, node):
            self._resumed.add(node["metadata"]["name"])
            self._on_node(node)

    def _forget(self, node: dict) -> None:
        self._latest.pop(node["metadata"]["name"], None)
        self._cancel_timer(node["metadata"]["name"])

    def _cancel_timer(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    async def _renew(self, name: str) -> None:
        node = self._nodes.lister.get(None, name)
        if node is None or kubelet_stopped(node):
            self._cancel_timer(name)
            return
        if name in self._resumed:
            self._resumed.discard(name)
            await self._post_status(node)
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

    async def _post_status(self, node: dict) -> None:
        """A kubelet back from a stop reports its node healthy again (what the node lifecycle
        controller marked Unknown while it was silent)."""
        conditions = posted_conditions(node, self._clock.rfc3339())
        if conditions:
            with contextlib.suppress(NotFound):
                await self._api.patch(NODES, None, node["metadata"]["name"], {"status": {"conditions": conditions}},
                                      patch_type="strategic", subresource="status", result=False)

    async def _read_or_create(self, name: str, lease: dict) -> dict | None:
        """The stored lease to update, or None once this created it (or found it being created)."""
        try:
            return await self._api.get(LEASES, NODE_LEASE_NAMESPACE, name)
        except NotFound:
            with contextlib.suppress(AlreadyExists):
                self._latest[name] = await self._api.create(LEASES, NODE_LEASE_NAMESPACE, lease)
            return None
