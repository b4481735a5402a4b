"""The StatefulSet controller (``pkg/controller/statefulset``).

Pods ``<set>-<ordinal>`` for ordinals ``[ordinals.start, start + replicas)``, each with
``hostname``/``subdomain``, the ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash`` labels and a controller
reference.  ``OrderedReady`` creates one ordinal at a time, waiting for the previous pod to run
and be Ready, and removes surplus ordinals highest first, one at a time; ``Parallel`` does all at
once.  Templates are snapshotted as ControllerRevisions; RollingUpdate replaces pods from the
highest ordinal down to ``partition``, up to ``maxUnavailable`` at a time, once the set is
healthy; OnDelete only gives recreated pods the new revision.  Failed or succeeded pods are
recreated.  Per-replica volume claims are refused by validation (no PVCs are served).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    CONTROLLER_REVISIONS,
    STATEFULSETS,
    Key,
    claim_candidates,
    claim_objects,
    controlled_by,
    index_by_controller,
    owner_key,
)
from fakeapi.scheduler.controllers.revisions import (
    REVISION_LABEL,
    CollisionError,
    ensure_revision,
    template_of,
    truncate_history,
)
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.pods import is_pod_terminal, is_ready, is_terminating
from fakeapi.scheduler.rules.workloads import (
    controller_of,
    is_pod_active,
    is_pod_available,
    pod_from_template,
    scaled_value,
)
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, NotFound, StatusError

log = logging.getLogger(__name__)

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"



def ordinal_of(set_name: str, pod: dict[str, Any]) -> int | None:
    """The ordinal in ``<set>-<ordinal>``, None for other names."""
    prefix, _, tail = pod["metadata"]["name"].rpartition("-")
    return int(tail) if prefix == set_name and tail.isdigit() else None


def _healthy(pod: dict[str, Any], min_ready: int, now: float) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_available(pod, min_ready, now)


class StatefulSetController:
    """Keeps ordinal pods of StatefulSets."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._queue: WorkQueue[Key] = WorkQueue()
        self._sets = factory.informer(STATEFULSETS)
        self._pods = factory.informer(PODS)
        self._revisions = factory.informer(CONTROLLER_REVISIONS)
        index_by_controller(self._pods)
        index_by_controller(self._revisions)
        self._sets.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new))
        self._pods.add_event_handler(self._on_pod, lambda old, new: self._on_pod(new), self._on_pod)

    async def run(self) -> None:
        """Sync StatefulSets until cancelled."""
        await process(self._queue, self._sync, name="statefulset-controller")

    def _enqueue(self, sts: dict[str, Any]) -> None:
        self._queue.add(owner_key(sts))

    def _on_pod(self, pod: dict[str, Any]) -> None:
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "StatefulSet":
            self._queue.add((pod["metadata"]["namespace"], ref["name"]))

    async def _sync(self, key: Key) -> None:
        cached = self._sets.lister.get(*key)
        if cached is None:
            return
        sts = copy.deepcopy(cached)
        spec, status = sts.get("spec") or {}, sts.setdefault("status", {})
        uid = sts["metadata"]["uid"]
        candidates = claim_candidates(self._pods, sts)
        pods = await claim_objects(self._api, PODS, sts, spec.get("selector"), candidates)
        revisions = controlled_by(self._revisions, uid)
        try:
            update, revisions = await ensure_revision(self._api, sts, revisions, status.get("collisionCount"))
        except CollisionError:
            status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
            await self._api.update(STATEFULSETS, key[0], sts, subresource="status")
            return
        by_name = {r["metadata"]["name"]: r for r in revisions}
        current = by_name.get(status.get("currentRevision") or "", update)
        if not sts["metadata"].get("deletionTimestamp"):
            await self._manage(sts, pods, current, update)
        pods = controlled_by(self._pods, uid)
        await self._write_status(sts, pods, current, update)
        keep = {current["metadata"]["name"], update["metadata"]["name"]} | {
            (p["metadata"].get("labels") or {}).get(REVISION_LABEL, "") for p in pods}
        await truncate_history(self._api, revisions, keep, int(spec.get("revisionHistoryLimit", 10)))

    async def _manage(self, sts: dict[str, Any], pods: list[dict[str, Any]], current: dict[str, Any],
                      update: dict[str, Any]) -> None:
        spec = sts.get("spec") or {}
        name = sts["metadata"]["name"]
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        replicas = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self._clock.now()
        by_ordinal: dict[int, dict[str, Any]] = {}
        condemned: list[dict[str, Any]] = []
        for pod in pods:
            ordinal = ordinal_of(name, pod)
            if ordinal is None:
                continue
            if start <= ordinal < start + replicas:
                by_ordinal[ordinal] = pod
            else:
                condemned.append(pod)
        strategy = spec.get("updateStrategy") or {}
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for ordinal in range(start, start + replicas):
            pod = by_ordinal.get(ordinal)
            if pod is not None and is_pod_terminal(pod) and not is_terminating(pod):
                await self._delete(sts, pod)
                pod = None
                if ordered:
                    return
            if pod is None:
                use_current = strategy.get("type") == "RollingUpdate" and ordinal - start < partition
                await self._create(sts, ordinal, current if use_current else update)
                if ordered:
                    return
                continue
            if ordered and not _healthy(pod, min_ready, now):
                return
        for pod in sorted(condemned, key=lambda p: -(ordinal_of(name, p) or 0)):
            if pod["metadata"].get("deletionTimestamp"):
                if ordered:
                    return
                continue
            await self._delete(sts, pod)
            if ordered:
                return
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        live = [by_ordinal[o] for o in sorted(by_ordinal)]
        unavailable = sum(1 for p in live if not _healthy(p, min_ready, now))
        budget = max(scaled_value((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), replicas,
                                  round_up=True), 1) - unavailable
        for ordinal in sorted(by_ordinal, reverse=True):
            if budget <= 0 or ordinal - start < partition:
                break
            pod = by_ordinal[ordinal]
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != update["metadata"]["name"] \
                    and not pod["metadata"].get("deletionTimestamp"):
                await self._delete(sts, pod)
                budget -= 1

    async def _create(self, sts: dict[str, Any], ordinal: int, revision: dict[str, Any]) -> None:
        name = f"{sts['metadata']['name']}-{ordinal}"
        pod = pod_from_template(template_of(revision), sts, name=name)
        labels = pod["metadata"].setdefault("labels", {})
        labels.update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
                       REVISION_LABEL: revision["metadata"]["name"]})
        pod["spec"]["hostname"] = name
        if (sts.get("spec") or {}).get("serviceName"):
            pod["spec"]["subdomain"] = sts["spec"]["serviceName"]
        set_name = sts["metadata"]["name"]
        try:
            await self._api.create(PODS, sts["metadata"]["namespace"], pod)
        except AlreadyExists:
            return  # created by an earlier sync the cache has not shown yet
        except StatusError as exc:
            self._recorder.event(sts, WARNING, "FailedCreate",
                                 f"create Pod {name} in StatefulSet {set_name} failed error: {exc}")
            raise
        self._recorder.event(sts, NORMAL, "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful")

    async def _delete(self, sts: dict[str, Any], pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            await self._api.delete(PODS, meta["namespace"], meta["name"], preconditions={"uid": meta["uid"]})
        except NotFound:
            return
        self._recorder.event(sts, NORMAL, "SuccessfulDelete",
                             f"delete Pod {meta['name']} in StatefulSet {sts['metadata']['name']} successful")

    async def _write_status(self, sts: dict[str, Any], pods: list[dict[str, Any]], current: dict[str, Any],
                            update: dict[str, Any]) -> None:
        spec, status = sts.get("spec") or {}, sts["status"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        live = [p for p in pods if is_pod_active(p)]
        revision_of = [(p["metadata"].get("labels") or {}).get(REVISION_LABEL) for p in live]
        status.update(
            observedGeneration=sts["metadata"].get("generation", 1), replicas=len(live),
            readyReplicas=sum(1 for p in live if is_ready(p)),
            availableReplicas=sum(1 for p in live if is_pod_available(p, min_ready, self._clock.now())),
            currentReplicas=sum(1 for r in revision_of if r == current["metadata"]["name"]),
            updatedReplicas=sum(1 for r in revision_of if r == update["metadata"]["name"]),
            currentRevision=current["metadata"]["name"], updateRevision=update["metadata"]["name"])
        replicas = int(spec.get("replicas", 1))
        if status["updatedReplicas"] == replicas and status["readyReplicas"] == replicas:
            status["currentRevision"], status["currentReplicas"] = status["updateRevision"], status["updatedReplicas"]
        cached = self._sets.lister.get(sts["metadata"]["namespace"], sts["metadata"]["name"])
        if cached is not None and cached.get("status") == status:
            return
        try:
            await self._api.update(STATEFULSETS, sts["metadata"]["namespace"], sts, subresource="status")
        except NotFound:
            pass
