"""The ReplicaSet controller (``pkg/controller/replicaset/replica_set.go``).

Per ReplicaSet: claim the namespace's pods (adopt orphans its selector matches, release its own
that stopped matching), and — once earlier creates and deletes are observed (expectations) —
create pods from the template (``generateName: <rs>-``, controller reference) or delete the
least valuable surplus pods (unscheduled, then pending, not ready, colocated, newest first).
Status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
``minReadySeconds`` by the control plane's clock), terminatingReplicas, observedGeneration and
the ``ReplicaFailure`` condition.
"""

from __future__ import annotations

import logging
from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    BURST_REPLICAS,
    REPLICASETS,
    Expectations,
    Key,
    PodControl,
    claim_candidates,
    claim_objects,
    controlled_by,
    controlling_owner,
    index_by_controller,
    owner_key,
    slow_start,
)
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.workloads import (
    controller_of,
    is_pod_active,
    is_pod_terminating,
    pod_from_template,
    pods_to_delete,
    ready_since,
    selects,
    set_condition,
)
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import NotFound, StatusError

log = logging.getLogger(__name__)

def replica_status(rs: dict[str, Any], pods: list[dict[str, Any]], now: float) -> dict[str, Any]:
    """``calculateStatus``: counts over the ReplicaSet's pods (conditions aside), in one pass."""
    spec = rs.get("spec") or {}
    template_labels = (((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).items()
    min_ready = int(spec.get("minReadySeconds") or 0)
    replicas = labelled = ready = available = terminating = 0
    for pod in pods:
        if not is_pod_active(pod):
            terminating += is_pod_terminating(pod)
            continue
        replicas += 1
        labelled += template_labels <= (pod["metadata"].get("labels") or {}).items()
        since = ready_since(pod)
        ready += since is not None
        available += since is not None and (min_ready <= 0 or since + min_ready <= now)
    return {"replicas": replicas, "fullyLabeledReplicas": labelled, "readyReplicas": ready,
            "availableReplicas": available, "terminatingReplicas": terminating,
            "observedGeneration": rs["metadata"].get("generation", 1)}


class ReplicaSetController:
    """Keeps every ReplicaSet's pod count at ``spec.replicas``."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._control = PodControl(api, recorder)
        self._expectations = Expectations(clock)
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self._sets = factory.informer(REPLICASETS)
        self._pods = factory.informer(PODS)
        index_by_controller(self._pods)
        self._sets.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), self._on_set_delete)
        self._pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)

    async def run(self) -> None:
        """Sync ReplicaSets until cancelled."""
        await process(self._queue, self._sync, name="replicaset-controller", workers=2)

    # -- handlers ---------------------------------------------------------------------------------
    def _enqueue(self, rs: dict[str, Any]) -> None:
        self._queue.add(owner_key(rs))

    def _on_set_delete(self, rs: dict[str, Any]) -> None:
        self._expectations.forget(owner_key(rs))

    def _owner(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        return controlling_owner(self._sets.lister, pod, "ReplicaSet")

    def _on_pod_add(self, pod: dict[str, Any]) -> None:
        rs = self._owner(pod)
        if rs is not None:
            self._expectations.creation_observed(owner_key(rs))
            self._enqueue(rs)
        elif controller_of(pod) is None:
            self._enqueue_matching(pod)

    def _on_pod_update(self, old: dict[str, Any], pod: dict[str, Any]) -> None:
        old_ref, new_ref = controller_of(old), controller_of(pod)
        if old_ref is not None and old_ref != new_ref:
            old_rs = self._sets.lister.get(pod["metadata"]["namespace"], old_ref["name"])
            if old_rs is not None:
                self._enqueue(old_rs)
        rs = self._owner(pod)
        if rs is not None:
            if pod["metadata"].get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp"):
                self._expectations.deletion_observed(owner_key(rs), pod["metadata"]["uid"])
            self._enqueue(rs)
            min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
            if min_ready and ready_since(pod) is not None and ready_since(old) is None:
                self._queue_after(rs, min_ready)
        elif new_ref is None:
            self._enqueue_matching(pod)

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        rs = self._owner(pod)
        if rs is not None:
            self._expectations.deletion_observed(owner_key(rs), pod["metadata"]["uid"])
            self._enqueue(rs)

    def _enqueue_matching(self, pod: dict[str, Any]) -> None:
        for rs in self._sets.lister.list(pod["metadata"]["namespace"]):
            if selects((rs.get("spec") or {}).get("selector"), pod):
                self._enqueue(rs)

    def _queue_after(self, rs: dict[str, Any], seconds: float) -> None:
        key = owner_key(rs)
        self._queue.add_after(key, seconds)

    # -- sync -------------------------------------------------------------------------------------
    async def _sync(self, key: Key) -> None:
        namespace, name = key
        rs = self._sets.lister.get(namespace, name)
        if rs is None:
            self._expectations.forget(key)
            return
        needs_sync = self._expectations.satisfied(key)
        spec = rs.get("spec") or {}
        candidates = [p for p in claim_candidates(self._pods, rs) if is_pod_active(p) or controller_of(p)]
        pods = await claim_objects(self._api, PODS, rs, spec.get("selector"), candidates)
        active = [p for p in pods if is_pod_active(p)]
        failure: tuple[str, StatusError] | None = None
        if needs_sync and not rs["metadata"].get("deletionTimestamp"):
            failure = await self._manage(rs, active)
        status = replica_status(rs, pods, self._clock.now())
        await self._write_status(rs, dict(status), failure)
        min_ready = int(spec.get("minReadySeconds") or 0)
        if min_ready and status["readyReplicas"] == spec.get("replicas", 1) != status["availableReplicas"]:
            self._queue_after(rs, min_ready)
        if failure is not None:
            raise failure[1]

    async def _manage(self, rs: dict[str, Any], active: list[dict[str, Any]]) -> tuple[str, StatusError] | None:
        """Create or delete pods towards ``spec.replicas``; the failed operation's condition reason and error."""
        key = owner_key(rs)
        diff = len(active) - int((rs.get("spec") or {}).get("replicas", 1))
        if diff < 0:
            count = min(-diff, BURST_REPLICAS)
            self._expectations.expect(key, adds=count)
            template = (rs.get("spec") or {}).get("template") or {}

            async def create(_: int) -> None:
                try:
                    await self._control.create(rs, pod_from_template(template, rs))
                except StatusError:
                    self._expectations.creation_observed(key)
                    raise
            done, error = await slow_start(count, create)
            for _ in range(count - done - (1 if error else 0)):
                self._expectations.creation_observed(key)  # skipped creates will never be seen
            return None if error is None else ("FailedCreate", error)
        if diff > 0:
            victims = pods_to_delete(active, self._related_pods(rs), min(diff, BURST_REPLICAS), self._clock.now())
            self._expectations.expect(key, deletes={p["metadata"]["uid"] for p in victims})
            for pod in victims:
                try:
                    await self._control.delete(rs, pod)
                except StatusError as exc:
                    self._expectations.deletion_observed(key, pod["metadata"]["uid"])
                    return "FailedDelete", exc
        return None

    def _related_pods(self, rs: dict[str, Any]) -> list[dict[str, Any]]:
        """Pods of every ReplicaSet with the same controller (the whole Deployment)."""
        owner = controller_of(rs)
        if owner is None:
            return controlled_by(self._pods, rs["metadata"]["uid"])
        related: list[dict[str, Any]] = []
        for sibling in self._sets.lister.list(rs["metadata"]["namespace"]):
            if (controller_of(sibling) or {}).get("uid") == owner.get("uid"):
                related += controlled_by(self._pods, sibling["metadata"]["uid"])
        return related

    async def _write_status(self, rs: dict[str, Any], status: dict[str, Any],
                            failure: tuple[str, StatusError] | None) -> None:
        conditions = [c for c in (rs.get("status") or {}).get("conditions") or [] if c.get("type") != "ReplicaFailure"]
        if failure is not None:
            conditions = set_condition(conditions, "ReplicaFailure", "True", failure[0], failure[1].message,
                                       self._clock.rfc3339())
        status["conditions"] = conditions or None
        current = rs.get("status") or {}
        if all(current.get(k) == v for k, v in status.items() if v is not None) and \
                (current.get("conditions") or None) == status["conditions"]:
            return
        meta = rs["metadata"]
        try:
            await self._api.patch(REPLICASETS, meta["namespace"], meta["name"], {"status": status},
                                  subresource="status")
        except NotFound:
            pass
