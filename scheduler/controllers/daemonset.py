"""The DaemonSet controller (``pkg/controller/daemon``).

One pod per eligible node: the node matches the template's node selector and required affinity,
and its NoSchedule/NoExecute taints are tolerated (with the daemon default tolerations).  Pods
are created unbound with a ``matchFields metadata.name`` affinity for their node (the scheduler
binds them), labelled ``controller-revision-hash`` and ``pod-template-generation``.  Nodes coming
and going, failed pods, duplicates and pods on nodes that no longer qualify are followed.
RollingUpdate replaces outdated pods within ``maxUnavailable``; OnDelete waits for deletions.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    CONTROLLER_REVISIONS,
    DAEMONSETS,
    Expectations,
    Key,
    PodControl,
    claim_candidates,
    claim_objects,
    controlled_by,
    index_by_controller,
    owner_key,
)
from fakeapi.scheduler.controllers.revisions import REVISION_LABEL, CollisionError, ensure_revision, truncate_history
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.daemons import daemon_node, daemon_pod_spec, should_run
from fakeapi.scheduler.rules.pods import is_assigned, is_ready, node_of
from fakeapi.scheduler.rules.workloads import (
    controller_of,
    is_pod_active,
    is_pod_available,
    parse_time,
    pod_from_template,
    scaled_value,
)
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import NotFound

log = logging.getLogger(__name__)

TEMPLATE_GENERATION = "pod-template-generation"



class DaemonSetController:
    """Keeps one daemon pod on every eligible node."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._control = PodControl(api, recorder)
        self._expectations = Expectations(clock)
        self._queue: WorkQueue[Key] = WorkQueue()
        self._sets = factory.informer(DAEMONSETS)
        self._pods = factory.informer(PODS)
        self._nodes = factory.informer(NODES)
        self._revisions = factory.informer(CONTROLLER_REVISIONS)
        index_by_controller(self._pods)
        index_by_controller(self._revisions)
        self._sets.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new))
        self._pods.add_event_handler(self._on_pod_add, lambda old, new: self._on_pod(new), self._on_pod)
        self._nodes.add_event_handler(self._on_node, lambda old, new: self._on_node(new), self._on_node)

    async def run(self) -> None:
        """Sync DaemonSets until cancelled."""
        await process(self._queue, self._sync, name="daemonset-controller")

    def _enqueue(self, ds: dict[str, Any]) -> None:
        self._queue.add(owner_key(ds))

    def _on_pod_add(self, pod: dict[str, Any]) -> None:
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "DaemonSet":
            self._expectations.creation_observed((pod["metadata"]["namespace"], ref["name"]))
        self._on_pod(pod)

    def _on_pod(self, pod: dict[str, Any]) -> None:
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "DaemonSet":
            self._queue.add((pod["metadata"]["namespace"], ref["name"]))

    def _on_node(self, node: dict[str, Any]) -> None:
        for ds in self._sets.lister.list():
            self._enqueue(ds)

    async def _sync(self, key: Key) -> None:
        cached = self._sets.lister.get(*key)
        if cached is None:
            return
        ds = copy.deepcopy(cached)
        spec, status = ds.get("spec") or {}, ds.setdefault("status", {})
        uid = ds["metadata"]["uid"]
        candidates = claim_candidates(self._pods, ds)
        pods = await claim_objects(self._api, PODS, ds, spec.get("selector"), candidates)
        revisions = controlled_by(self._revisions, uid)
        try:
            revision, revisions = await ensure_revision(self._api, ds, revisions, status.get("collisionCount"))
        except CollisionError:
            status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
            await self._api.update(DAEMONSETS, key[0], ds, subresource="status")
            return
        current = revision["metadata"]["name"]
        by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            node = daemon_node(pod)
            if node is not None:
                by_node.setdefault(node, []).append(pod)
        template = spec.get("template") or {}
        eligible: dict[str, bool] = {}
        missing: list[str] = []
        if not ds["metadata"].get("deletionTimestamp"):
            for node in self._nodes.lister.list():
                name = node["metadata"]["name"]
                run, keep = should_run(template.get("spec") or {}, node)
                eligible[name] = run
                if await self._sync_node(ds, name, run, keep, by_node.pop(name, [])):
                    missing.append(name)
            if missing and self._expectations.satisfied(key):
                self._expectations.expect(key, adds=len(missing))
                for name in missing:
                    try:
                        await self._control.create(ds, self._pod(ds, name, current))
                    except Exception:
                        self._expectations.creation_observed(key)
                        raise
            for stray in by_node.values():  # pods of nodes that are gone
                for pod in stray:
                    if is_pod_active(pod):
                        await self._control.delete(ds, pod)
            await self._rolling_update(ds, current, eligible)
        await self._write_status(ds, eligible, current)
        keep = {current} | {(p["metadata"].get("labels") or {}).get(REVISION_LABEL, "") for p in pods}
        await truncate_history(self._api, revisions, keep, int(spec.get("revisionHistoryLimit", 10)))

    async def _sync_node(self, ds: dict[str, Any], node: str, run: bool, keep: bool,
                         pods: list[dict[str, Any]]) -> bool:
        """``podsShouldBeOnNode``: delete failed, surplus or unwanted pods; whether one must be created."""
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        for pod in live:
            if (pod.get("status") or {}).get("phase") == "Failed":
                self._recorder.event(ds, "Warning", "FailedDaemonPod",
                                     f"Found failed daemon pod {pod['metadata']['namespace']}/"
                                     f"{pod['metadata']['name']} on node {node}, will try to kill it")
                await self._control.delete(ds, pod)
        live = [p for p in live if is_pod_active(p)]
        if not keep:
            for pod in live:
                await self._control.delete(ds, pod)
            return False
        if run and not live and not any(p["metadata"].get("deletionTimestamp") for p in pods):
            return True
        if len(live) > 1:
            live.sort(key=lambda p: parse_time(p["metadata"].get("creationTimestamp")) or 0)
            for pod in live[1:]:
                await self._control.delete(ds, pod)
        return False

    def _pod(self, ds: dict[str, Any], node: str, revision: str) -> dict[str, Any]:
        template = (ds.get("spec") or {}).get("template") or {}
        pod = pod_from_template(template, ds)
        pod["spec"] = daemon_pod_spec(template.get("spec") or {}, node)
        pod["metadata"].setdefault("labels", {}).update({
            REVISION_LABEL: revision, TEMPLATE_GENERATION: str(ds["metadata"].get("generation", 1))})
        return pod

    async def _rolling_update(self, ds: dict[str, Any], revision: str, eligible: dict[str, bool]) -> None:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        pods = [p for p in controlled_by(self._pods, ds["metadata"]["uid"]) if is_pod_active(p)]
        desired = sum(1 for v in eligible.values() if v)
        budget = max(scaled_value((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), desired,
                                  round_up=True), 1)
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self._clock.now()
        on_nodes = {daemon_node(p) for p in pods}
        unavailable = sum(1 for node, run in eligible.items() if run and node not in on_nodes)
        unavailable += sum(1 for p in pods if not is_pod_available(p, min_ready, now))
        outdated = [p for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision]
        outdated.sort(key=lambda p: is_pod_available(p, min_ready, now))  # unavailable ones first
        for pod in outdated:
            if not is_pod_available(pod, min_ready, now):
                await self._control.delete(ds, pod)
            elif unavailable < budget:
                await self._control.delete(ds, pod)
                unavailable += 1

    async def _write_status(self, ds: dict[str, Any], eligible: dict[str, bool], revision: str) -> None:
        pods = [p for p in controlled_by(self._pods, ds["metadata"]["uid"]) if is_pod_active(p)]
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self._clock.now()
        scheduled = {node_of(p): p for p in pods if is_assigned(p)}
        desired = [n for n, run in eligible.items() if run]
        status = ds["status"]
        status.update(
            observedGeneration=ds["metadata"].get("generation", 1), desiredNumberScheduled=len(desired),
            currentNumberScheduled=sum(1 for n in desired if n in scheduled),
            numberMisscheduled=sum(1 for n in scheduled if not eligible.get(n or "", False)),
            numberReady=sum(1 for n in desired if n in scheduled and is_ready(scheduled[n])),
            updatedNumberScheduled=sum(1 for n in desired if n in scheduled and (
                scheduled[n]["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision),
            numberAvailable=sum(1 for n in desired if n in scheduled
                                and is_pod_available(scheduled[n], min_ready, now)))
        status["numberUnavailable"] = status["desiredNumberScheduled"] - status["numberAvailable"]
        cached = self._sets.lister.get(ds["metadata"]["namespace"], ds["metadata"]["name"])
        if cached is not None and cached.get("status") == status:
            return
        try:
            await self._api.update(DAEMONSETS, ds["metadata"]["namespace"], ds, subresource="status")
        except NotFound:
            pass
