"""Node health (kube-controller-manager's ``node-lifecycle-controller``, ``pkg/controller/nodelifecycle``).

Every 5 s of the control plane's clock it looks at every node:

- **silence**: 50 s (``--node-monitor-grace-period``) after a node's kubelet went down
  (``FakeCluster.stop_kubelet``: the ``fakeapi.dev/kubelet-stopped`` annotation, with the time
  it stopped, else from when this sees it), the node's
  ``Ready``, ``MemoryPressure``, ``DiskPressure`` and ``PIDPressure`` conditions turn ``Unknown``
  ("Kubelet stopped posting node status.");
- **pods**: when that turns ``Ready`` from True, every pod on the node gets ``Ready`` False (so
  Services stop sending it traffic), and the node a ``NodeNotReady`` Event;
- **taints**: ``Ready`` False brings ``node.kubernetes.io/not-ready``, ``Unknown`` brings
  ``node.kubernetes.io/unreachable``, each with effects NoSchedule and NoExecute (the latter with
  ``timeAdded``); ``Ready`` True removes them.  The taint-eviction controller evicts from there.
  When every node is down (upstream's "master disruption mode": the control plane, not the
  nodes, is likely cut off) NoExecute taints are removed and none are added.

Deviations, on purpose: only a node whose kubelet was stopped can fall silent, and its 50 s count
from the stop rather than from the lease's last renewal (at most the kubelet's 10 s renewal
interval earlier).  Upstream watches every node's lease, but a test's ``ManualClock``
jumps minutes at once, faster than the kubelet emulation's renewals reach the API, and every node
would look silent.  Zones and the eviction rate limits are not modelled (taints come at once,
not at 0.1 nodes/s), nor the taints for the pressure conditions, ``NetworkUnavailable`` and
``spec.unschedulable``; a node without a ``Ready`` condition (common in tests) counts as up and
keeps its taints as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.lifecycle import is_ready, kubelet_stopped, kubelet_stopped_at
from fakeapi.scheduler.rules.pods import node_name_keys

from fakeapi.errors import Conflict, NotFound

NAME = "node-lifecycle-controller"
MONITOR_PERIOD = 5.0
GRACE_PERIOD = 50.0
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
HEALTH_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")

_NODE_INDEX = "node-lifecycle/node"


def ready_status(node: Mapping[str, Any]) -> str | None:
    """The status of the node's ``Ready`` condition (None without one)."""
    return next((c.get("status") for c in (node.get("status") or {}).get("conditions") or ()
                 if c.get("type") == "Ready"), None)


def unknown_conditions(node: Mapping[str, Any], now: str) -> list[dict[str, Any]]:
    """The node's conditions once its kubelet has been silent for the grace period."""
    conditions = [dict(c) for c in (node.get("status") or {}).get("conditions") or ()]
    by_type = {c.get("type"): c for c in conditions}
    for kind in HEALTH_CONDITIONS:
        condition = by_type.get(kind)
        if condition is None:
            conditions.append({"type": kind, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                               "message": "Kubelet never posted node status.",
                               "lastHeartbeatTime": (node.get("metadata") or {}).get("creationTimestamp"),
                               "lastTransitionTime": now})
        elif condition.get("status") != "Unknown":
            condition.update(status="Unknown", reason="NodeStatusUnknown",
                             message="Kubelet stopped posting node status.", lastTransitionTime=now)
    return conditions


def is_down(node: Mapping[str, Any]) -> bool:
    """``Ready`` False or Unknown.  A node without a ``Ready`` condition counts as up: in fakeapi
    the kubelet emulation stands for a healthy kubelet on every node."""
    return ready_status(node) in ("False", "Unknown")


def health_taints(node: Mapping[str, Any], *, evict: bool, now: str) -> list[dict[str, Any]]:
    """The node's taints with the not-ready or unreachable ones its ``Ready`` condition calls for
    (NoExecute only when ``evict``); a taint already there is kept as it is, and so are all of
    them on a node without a ``Ready`` condition."""
    status = ready_status(node)
    if status is None:
        return list((node.get("spec") or {}).get("taints") or ())
    key = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(status)
    wanted = {(key, "NoSchedule"), *([(key, "NoExecute")] if evict else [])} if key else set()
    kept = [t for t in (node.get("spec") or {}).get("taints") or ()
            if t.get("key") not in (NOT_READY, UNREACHABLE) or (t.get("key"), t.get("effect")) in wanted]
    have = {(t.get("key"), t.get("effect")) for t in kept}
    for taint_key, effect in sorted(wanted - have, reverse=True):  # NoSchedule, then NoExecute
        kept.append({"key": taint_key, "effect": effect, **({"timeAdded": now} if effect == "NoExecute" else {})})
    return kept


class NodeLifecycleController:
    """Marks silent nodes Unknown and their pods not ready, and taints nodes by readiness."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._recorder = recorder
        self._clock = clock
        self._nodes = factory.informer(NODES)
        self._pods = factory.informer(PODS)
        self._pods.add_index(_NODE_INDEX, node_name_keys)
        self._nodes.add_event_handler(on_update=self._on_node_update)
        # When each node whose kubelet is down went down (or was first seen so).
        self._stopped: dict[str, float] = {}
        self._one_at_a_time = asyncio.Lock()
        self._extra: set[asyncio.Task[None]] = set()  # passes for late stops

    async def run(self) -> None:
        """Monitor now and every :data:`MONITOR_PERIOD` seconds of the clock until cancelled, and
        at once when a node's kubelet turns out to have been down for the grace period already."""
        try:
            while True:
                await self._pass()
                await self._clock.sleep(MONITOR_PERIOD)
        finally:
            for task in self._extra:
                task.cancel()

    async def _pass(self) -> None:
        async with self._one_at_a_time:
            await self.monitor()

    def _on_node_update(self, old: dict, node: dict) -> None:
        # A stop seen late (a ManualClock jumped past it) gets a pass of its own, without waiting
        # for the clock to move again.
        stopped_at = kubelet_stopped_at(node)
        if (not kubelet_stopped(old) and stopped_at is not None
                and self._clock.now() - stopped_at > GRACE_PERIOD):
            task = asyncio.get_running_loop().create_task(self._pass(), name=f"{NAME}-late-stop")
            self._extra.add(task)
            task.add_done_callback(self._extra.discard)

    async def monitor(self) -> None:
        """One pass over every node (upstream's ``monitorNodeHealth``)."""
        now, stamp = self._clock.now(), self._clock.rfc3339()
        nodes = []  # as this pass leaves them: the cache may not have seen its writes yet
        listed = self._nodes.lister.list()
        self._stopped = {n["metadata"]["name"]: t for n in listed
                         if (t := self._stopped.get(n["metadata"]["name"])) is not None}
        for node in listed:
            checked = await self._check_health(node, now, stamp)
            if ready_status(node) == "True" and ready_status(checked) != "True":
                await self._not_ready(checked)
            nodes.append(checked)
        evict = not nodes or not all(is_down(n) for n in nodes)
        for node in nodes:
            await self._taint(node, evict, stamp)

    async def _check_health(self, node: dict, now: float, stamp: str) -> dict:
        """The node, marked Unknown if its kubelet has been silent for the grace period."""
        meta = node["metadata"]
        name = meta["name"]
        if not kubelet_stopped(node):
            self._stopped.pop(name, None)
            return node
        # Silent from when the kubelet stopped (its annotation's time, else when the stop is seen):
        # no lease to read or watch, and no await on this path, so a pass during a ManualClock
        # jump completes before the clock moves on.
        since = self._stopped.setdefault(name, min(kubelet_stopped_at(node) or now, now))
        if now - since <= GRACE_PERIOD:
            return node
        conditions = unknown_conditions(node, stamp)
        if conditions == (node.get("status") or {}).get("conditions"):
            return node
        with contextlib.suppress(NotFound, Conflict):  # gone, or changed: the next pass looks again
            return await self._api.patch(NODES, None, name, {"metadata": {"resourceVersion": meta["resourceVersion"]},
                                                             "status": {"conditions": conditions}},
                                         subresource="status")
        return node

    async def _not_ready(self, node: dict) -> None:
        """``Ready`` has just stopped being True: the node's Event, and its pods no longer Ready."""
        name = node["metadata"]["name"]
        self._recorder.event(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        for pod in self._pods.lister.by_index(_NODE_INDEX, name):
            if not is_ready(pod):
                continue
            meta = pod["metadata"]
            ready = next(c for c in pod["status"]["conditions"] if c.get("type") == "Ready")
            condition = {**ready, "status": "False", "lastTransitionTime": self._clock.rfc3339()}
            with contextlib.suppress(NotFound, Conflict):
                await self._api.patch(PODS, meta["namespace"], meta["name"],
                                      {"metadata": {"uid": meta["uid"]}, "status": {"conditions": [condition]}},
                                      patch_type="strategic", subresource="status", result=False)

    async def _taint(self, node: dict, evict: bool, stamp: str) -> None:
        taints = health_taints(node, evict=evict, now=stamp)
        if taints == list((node.get("spec") or {}).get("taints") or ()):
            return
        meta = node["metadata"]
        with contextlib.suppress(NotFound, Conflict):
            await self._api.patch(NODES, None, meta["name"], {"metadata": {"resourceVersion": meta["resourceVersion"]},
                                                              "spec": {"taints": taints or None}})
