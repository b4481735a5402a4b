"""Node health (kube-controller-manager's ``node-lifecycle-controller``, ``pkg/controller/nodelifecycle``).

Every 5 s of the control plane's clock it looks at every node:

- **silence**: 50 s (``--node-monitor-grace-period``) after a node's kubelet went down
  (``FakeCluster.stop_kubelet``: the ``fakeapi.dev/kubelet-stopped`` annotation, with the time
  it stopped, else from when this sees it), the node's
  ``Ready``, ``MemoryPressure``, ``DiskPressure`` and ``PIDPressure`` conditions turn ``Unknown``
  ("Kubelet stopped posting node status.");
- **pods**: when that turns ``Ready`` from True, every pod on the node gets ``Ready`` False (so
  Services stop sending it traffic), and the node a ``NodeNotReady`` Event;
- **taints**, as a node changes (TaintNodesByCondition): ``Ready`` False brings
  ``node.kubernetes.io/not-ready``, ``Unknown`` ``node.kubernetes.io/unreachable``, each with
  effects NoSchedule and NoExecute (the latter with ``timeAdded``, when ``Ready`` changed);
  ``MemoryPressure``, ``DiskPressure``, ``PIDPressure`` and ``NetworkUnavailable`` True bring
  their NoSchedule taints, ``spec.unschedulable`` (a cordon) ``node.kubernetes.io/unschedulable``;
  each goes when its cause does.  The taint-eviction controller evicts from there.  When every
  node is down (upstream's "master disruption mode": the control plane, not the nodes, is likely
  cut off) NoExecute taints are removed and none are added.

Deviations, on purpose: only a node whose kubelet was stopped can fall silent, and its 50 s count
from the stop rather than from the lease's last renewal (at most the kubelet's 10 s renewal
interval earlier).  Upstream watches every node's lease, but a test's ``ManualClock``
jumps minutes at once, faster than the kubelet emulation's renewals reach the API, and every node
would look silent.  Zones and the eviction rate limits are not modelled (taints come at once,
not at 0.1 nodes/s); a node without a ``Ready`` condition (common in tests) counts as up and
keeps its not-ready and unreachable taints as they are.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.lifecycle import kubelet_stopped, kubelet_stopped_at
from fakeapi.scheduler.rules.pods import node_name_keys, ready_condition
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import Conflict, NotFound

NAME = "node-lifecycle-controller"
MONITOR_PERIOD = 5.0
GRACE_PERIOD = 50.0
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
# TaintNodesByCondition: the NoSchedule taint each condition status brings.
CONDITION_TAINTS = {
    ("Ready", "False"): NOT_READY, ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
}
MANAGED_KEYS = frozenset({*CONDITION_TAINTS.values(), UNSCHEDULABLE})
HEALTH_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")

_NODE_INDEX = "node-lifecycle/node"
MONITOR = ""  # the work queue's key for a pass over every node (no node has an empty name)


def ready_status(node: Mapping[str, Any]) -> str | None:
    """The status of the node's ``Ready`` condition (None without one)."""
    return (ready_condition(node) or {}).get("status")


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
    """The node's taints as its conditions and ``spec.unschedulable`` call for (upstream's
    TaintNodesByCondition, all NoSchedule), plus the not-ready or unreachable NoExecute taint of
    a node that is down when ``evict``; taints already there are kept as they are.  The NoExecute
    taint's ``timeAdded`` is when ``Ready`` changed (not after ``now``), so evictions count from
    the node going down however late this sees it.  A node without a ``Ready`` condition keeps
    its not-ready and unreachable taints as they are."""
    taints = list((node.get("spec") or {}).get("taints") or ())
    ready = ready_status(node)
    wanted = [(key, "NoSchedule") for c in (node.get("status") or {}).get("conditions") or ()
              if (key := CONDITION_TAINTS.get((c.get("type"), c.get("status")))) is not None]
    if (node.get("spec") or {}).get("unschedulable"):
        wanted.append((UNSCHEDULABLE, "NoSchedule"))
    down_key = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(ready or "")
    if down_key and evict:
        wanted.append((down_key, "NoExecute"))
    managed = MANAGED_KEYS if ready is not None else MANAGED_KEYS - {NOT_READY, UNREACHABLE}
    kept = [t for t in taints if t.get("key") not in managed or (t.get("key"), t.get("effect")) in wanted]
    have = {(t.get("key"), t.get("effect")) for t in kept}
    for taint_key, effect in wanted:
        if (taint_key, effect) in have:
            continue
        taint: dict[str, Any] = {"key": taint_key, "effect": effect}
        if effect == "NoExecute":
            changed = (ready_condition(node) or {}).get("lastTransitionTime")
            taint["timeAdded"] = min(changed, now) if changed else now
        kept.append(taint)
    return kept


class NodeLifecycleController:
    """Marks silent nodes Unknown and their pods not ready; taints nodes by condition and cordon."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._recorder = recorder
        self._clock = clock
        self._nodes = factory.informer(NODES)
        self._pods = factory.informer(PODS)
        self._pods.add_index(_NODE_INDEX, node_name_keys)
        self._nodes.add_event_handler(lambda n: self._on_node(None, n), self._on_node, lambda n: self._on_node(n, None))
        # One queue, one worker: node names whose taints to bring in line with their conditions
        # (a node's change, a cordon), and MONITOR for a pass over every node, which re-adds
        # itself every MONITOR_PERIOD of the clock.  One worker keeps passes and taint
        # writes from racing each other.
        self._queue: WorkQueue[str] = WorkQueue(clock=clock)
        # Every node known, and those down: when all are, no NoExecute taint (master disruption).
        self._known: set[str] = set()
        self._down: set[str] = set()
        # When each node whose kubelet is down went down (or was first seen so).
        self._stopped: dict[str, float] = {}

    async def run(self) -> None:
        """Taint nodes as they change; monitor now and every :data:`MONITOR_PERIOD` seconds of
        the clock, and at once when a node's kubelet turns out to have been down for the grace
        period already; until cancelled."""
        self._queue.add(MONITOR)
        await process(self._queue, self._sync, name=NAME)

    def _evict(self) -> bool:
        return not self._known or len(self._down) < len(self._known)

    def _on_node(self, old: dict | None, new: dict | None) -> None:
        name = (new or old or {})["metadata"]["name"]
        evict = self._evict()
        if new is None:
            self._known.discard(name)
            self._down.discard(name)
        else:
            self._known.add(name)
            (self._down.add if is_down(new) else self._down.discard)(name)
            self._queue.add(name)
        if self._evict() != evict:  # every node down, or one back: NoExecute taints go or come
            for known in self._known:
                self._queue.add(known)
        stopped_at = kubelet_stopped_at(new)
        if (old is not None and not kubelet_stopped(old) and stopped_at is not None
                and self._clock.now() - stopped_at > GRACE_PERIOD):
            # A stop seen late (a ManualClock jumped past it): a pass now, not when the clock
            # moves again.
            self._queue.add(MONITOR)

    async def _sync(self, key: str) -> None:
        if key == MONITOR:
            try:
                await self.monitor()
            finally:
                self._queue.add_after(MONITOR, MONITOR_PERIOD)
            return
        node = self._nodes.lister.get(None, key)
        if node is not None:
            await self._taint(node, self._evict(), self._clock.rfc3339())

    async def monitor(self) -> None:
        """One pass over every node (upstream's ``monitorNodeHealth``).  Taints follow from the
        node events its writes cause (``_on_node``), not from the pass."""
        now, stamp = self._clock.now(), self._clock.rfc3339()
        listed = self._nodes.lister.list()
        self._stopped = {n["metadata"]["name"]: t for n in listed
                         if (t := self._stopped.get(n["metadata"]["name"])) is not None}
        for node in listed:
            checked = await self._check_health(node, now, stamp)
            if ready_status(node) == "True" and ready_status(checked) != "True":
                await self._not_ready(checked)

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
            ready = ready_condition(pod)
            if ready is None or ready.get("status") != "True":
                continue
            meta = pod["metadata"]
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
