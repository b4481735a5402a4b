"""The disruption controller (``pkg/controller/disruption/disruption.go``): PodDisruptionBudget status.

Per PDB: its pods (selector in the namespace), the expected count and desired healthy count —
``maxUnavailable`` or a percentage ``minAvailable`` count the scale of the pods' controllers
(a ReplicaSet of a Deployment counts the Deployment; pods without a controller are left out and
reported by ``UnmanagedPods``), an integer ``minAvailable`` counts the selected pods — the
currently healthy pods (Ready, not deleting, not just evicted) and
``disruptionsAllowed = max(currentHealthy - desiredHealthy, 0)`` with the ``DisruptionAllowed``
condition.  Evictions recorded in ``disruptedPods`` expire after two minutes of the clock.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS, PDBS, REPLICASETS, STATEFULSETS, Key, owner_key
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.pods import is_ready
from fakeapi.scheduler.rules.workloads import controller_of, parse_time, set_condition
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import NotFound
from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict

DELETION_TIMEOUT = 120.0


class ScaleUnknown(Exception):
    """A pod's controller cannot be found or has no scale."""


def _percent(value: int | str) -> int | None:
    return int(value[:-1]) if isinstance(value, str) and value.endswith("%") else None


class DisruptionController:
    """Keeps PodDisruptionBudget status current."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self._budgets = factory.informer(PDBS)
        self._pods = factory.informer(PODS)
        self._sets = factory.informer(REPLICASETS)
        self._deployments = factory.informer(DEPLOYMENTS)
        self._statefulsets = factory.informer(STATEFULSETS)
        self._budgets.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new))
        self._pods.add_event_handler(self._on_pod, lambda old, new: self._on_pod(new), self._on_pod)
        for informer in (self._sets, self._deployments, self._statefulsets):
            informer.add_event_handler(on_update=lambda old, new: self._on_namespace(new))

    async def run(self) -> None:
        """Sync PodDisruptionBudgets until cancelled."""
        await process(self._queue, self._sync, name="disruption-controller")

    def _enqueue(self, pdb: dict[str, Any]) -> None:
        self._queue.add(owner_key(pdb))

    def _on_pod(self, pod: dict[str, Any]) -> None:
        labels = pod["metadata"].get("labels") or {}
        for pdb in self._budgets.lister.list(pod["metadata"]["namespace"]):
            if self._matches(pdb, labels):
                self._enqueue(pdb)

    def _on_namespace(self, obj: dict[str, Any]) -> None:
        for pdb in self._budgets.lister.list(obj["metadata"]["namespace"]):
            self._enqueue(pdb)

    @staticmethod
    def _matches(pdb: dict[str, Any], labels: dict[str, str]) -> bool:
        selector = (pdb.get("spec") or {}).get("selector")
        try:
            return selector is not None and label_selector_from_dict(selector).matches(labels)
        except SelectorError:
            return False

    def _scale_of(self, pod: dict[str, Any]) -> tuple[str, int] | None:
        """(controller uid, replicas) of the pod's controller; None for a pod without one."""
        ref = controller_of(pod)
        if ref is None:
            return None
        namespace = pod["metadata"]["namespace"]
        if ref.get("kind") == "ReplicaSet":
            rs = self._sets.lister.get(namespace, ref["name"])
            if rs is None:
                raise ScaleUnknown(f'replicasets.apps "{ref["name"]}" not found')
            owner = controller_of(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                deployment = self._deployments.lister.get(namespace, owner["name"])
                if deployment is None:
                    raise ScaleUnknown(f'deployments.apps "{owner["name"]}" not found')
                return deployment["metadata"]["uid"], int((deployment.get("spec") or {}).get("replicas", 1))
            return rs["metadata"]["uid"], int((rs.get("spec") or {}).get("replicas", 1))
        if ref.get("kind") == "StatefulSet":
            sts = self._statefulsets.lister.get(namespace, ref["name"])
            if sts is None:
                raise ScaleUnknown(f'statefulsets.apps "{ref["name"]}" not found')
            return sts["metadata"]["uid"], int((sts.get("spec") or {}).get("replicas", 1))
        raise ScaleUnknown(f"{ref.get('kind')} {ref.get('name')} has no scale subresource known to fakeapi")

    def _expected(self, pdb: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
        """``getExpectedPodCount``: (expectedCount, desiredHealthy)."""
        spec = pdb.get("spec") or {}
        max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
        if isinstance(min_available, int):
            return len(pods), min_available
        scales: dict[str, int] = {}
        unmanaged = []
        for pod in pods:
            scale = self._scale_of(pod)
            if scale is None:
                unmanaged.append(pod["metadata"]["name"])
            else:
                scales[scale[0]] = scale[1]
        if unmanaged:
            self._recorder.event(pdb, WARNING, "UnmanagedPods",
                                 f"Pods selected by this PodDisruptionBudget (selector: {spec.get('selector')}) "
                                 f"were found to be unmanaged. As a result, the status of the PDB cannot be "
                                 f"calculated correctly, which may result in undefined behavior. To account for "
                                 f"these pods please set \".spec.minAvailable\" field of the PDB to an integer "
                                 f"value.")
        expected = sum(scales.values())
        if max_unavailable is not None:
            percent = _percent(max_unavailable)
            unavailable = math.ceil(percent * expected / 100) if percent is not None else int(max_unavailable)
            return expected, max(expected - unavailable, 0)
        percent = _percent(min_available) if min_available is not None else None
        return expected, math.ceil((percent or 0) * expected / 100)

    async def _sync(self, key: Key) -> None:
        cached = self._budgets.lister.get(*key)
        if cached is None:
            return
        pdb = copy.deepcopy(cached)
        status = pdb.setdefault("status", {})
        pods = [p for p in self._pods.lister.list(key[0]) if self._matches(pdb, p["metadata"].get("labels") or {})]
        if not pods:
            self._recorder.event(pdb, NORMAL, "NoPods", "No matching pods found")
        now = self._clock.now()
        disrupted = {}
        for name, when in (status.get("disruptedPods") or {}).items():
            pod = next((p for p in pods if p["metadata"]["name"] == name), None)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            started = parse_time(when) or now
            if started + DELETION_TIMEOUT > now:
                disrupted[name] = when
                self._queue.add_after(key, started + DELETION_TIMEOUT - now)
        try:
            expected, desired = self._expected(pdb, pods)
        except ScaleUnknown as exc:
            self._recorder.event(pdb, WARNING, "CalculateExpectedPodCountFailed",
                                 f"Failed to calculate the number of expected pods: {exc}")
            status.update(disruptionsAllowed=0, conditions=set_condition(
                status.get("conditions") or [], "DisruptionAllowed", "False", "SyncFailed", str(exc),
                self._clock.rfc3339()))
            await self._write(pdb, cached)
            return
        healthy = sum(1 for p in pods if is_ready(p) and not p["metadata"].get("deletionTimestamp")
                      and p["metadata"]["name"] not in disrupted)
        allowed = max(healthy - desired, 0)
        generation = pdb["metadata"].get("generation", 1)
        status.update(observedGeneration=generation, disruptionsAllowed=allowed, currentHealthy=healthy,
                      desiredHealthy=desired, expectedPods=expected, disruptedPods=disrupted or None)
        reason = "SufficientPods" if allowed > 0 else "InsufficientPods"
        status["conditions"] = set_condition(status.get("conditions") or [], "DisruptionAllowed",
                                             "True" if allowed > 0 else "False", reason, "", self._clock.rfc3339(),
                                             observedGeneration=generation)
        await self._write(pdb, cached)

    async def _write(self, pdb: dict[str, Any], cached: dict[str, Any]) -> None:
        if pdb.get("status") == cached.get("status"):
            return
        try:
            await self._api.update(PDBS, pdb["metadata"]["namespace"], pdb, subresource="status")
        except NotFound:
            pass
