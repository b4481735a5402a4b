"""Pod garbage collector (``pkg/controller/podgc``): every 20 s of the control plane's clock it
force-deletes the pods nothing else will remove.

- **orphaned**: pods bound to a node that no longer exists.  A node missing from the cache is
  looked up with a GET only after 40 s of quarantine (an informer may lag behind a node's
  creation); if it is gone, its pods turn ``Failed`` with a ``DisruptionTarget`` condition
  (``DeletionByPodGC``, "PodGC: node no longer exists") and are deleted with no grace period;
- **terminated**: beyond ``terminated_threshold`` finished pods (``Succeeded``/``Failed``), the
  oldest go, evicted ones first (kube-controller-manager's ``--terminated-pod-gc-threshold``,
  12,500 by default);
- **terminating** pods on a node that is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint, and terminating pods never scheduled, go at once.

Every deletion first marks a pod that is not yet terminal ``Failed`` (a status patch with the
pod's UID as precondition), then deletes it with ``gracePeriodSeconds=0``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.pods import is_pod_terminal, is_ready, is_terminating, node_of

from fakeapi.errors import Conflict, NotFound

GC_CHECK_PERIOD = 20.0
QUARANTINE = 40.0
TERMINATED_THRESHOLD = 12_500
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
ORPHANED = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists"}


def _out_of_service(node: dict[str, Any]) -> bool:
    return not is_ready(node) and any(t.get("key") == OUT_OF_SERVICE
                                         for t in (node.get("spec") or {}).get("taints") or [])


def eviction_then_age(pod: dict[str, Any]) -> tuple[bool, str, str]:
    """upstream's ``byEvictionAndCreationTimestamp``: evicted pods first, then the oldest, then by name."""
    meta = pod["metadata"]
    return (pod.get("status", {}).get("reason") != "Evicted", meta.get("creationTimestamp") or "", meta["name"])


def terminated_to_collect(pods: Iterable[dict[str, Any]], threshold: int) -> list[dict[str, Any]]:
    """The finished pods beyond ``threshold``, those to delete first first."""
    finished = sorted((p for p in pods if is_pod_terminal(p)), key=eviction_then_age)
    return finished[:max(len(finished) - threshold, 0)]


class PodGCController:
    """Force-deletes orphaned, excess terminated and stuck terminating pods (see the module)."""

    def __init__(self, api: ApiClient, factory: InformerFactory, clock: Clock, *,
                 terminated_threshold: int = TERMINATED_THRESHOLD) -> None:
        self._api = api
        self._clock = clock
        self._threshold = terminated_threshold
        self._pods = factory.informer(PODS)
        self._nodes = factory.informer(NODES)
        # Node names missing from the cache, and since when (the quarantine's start).
        self._missing: dict[str, float] = {}

    async def run(self) -> None:
        """Collect now and every :data:`GC_CHECK_PERIOD` seconds of the clock until cancelled."""
        while True:
            await self.collect()
            await self._clock.sleep(GC_CHECK_PERIOD)

    async def collect(self) -> None:
        """One pass, in upstream's order (a pod two passes pick goes as the first says):
        terminated, terminating on out-of-service nodes, orphaned, unscheduled terminating."""
        pods = self._pods.lister.list()
        terminating = [p for p in pods if is_terminating(p)]
        gone = await self._deleted_nodes({node_of(p) for p in pods} - {""})
        passes: list[tuple[Iterable[dict[str, Any]], dict[str, Any] | None]] = [
            (terminated_to_collect(pods, self._threshold), None),
            ((p for p in terminating if node_of(p) and _out_of_service(self._nodes.lister.get(None, node_of(p))
                                                                       or {})), None),
            ((p for p in pods if node_of(p) in gone), ORPHANED),
            ((p for p in terminating if not node_of(p)), None),
        ]
        doomed: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        for chosen, condition in passes:
            for pod in chosen:
                doomed.setdefault(pod["metadata"]["uid"], (pod, condition))
        await asyncio.gather(*(self._fail_and_delete(pod, condition) for pod, condition in doomed.values()))

    async def _deleted_nodes(self, names: set[str]) -> set[str]:
        """The names among ``names`` whose node is truly gone: missing from the cache for the whole
        quarantine, then not found by a GET."""
        now = self._clock.now()
        missing = {name for name in names if self._nodes.lister.get(None, name) is None}
        self._missing = {name: self._missing.get(name, now) for name in missing}
        gone = set()
        for name, since in list(self._missing.items()):
            if now - since < QUARANTINE:
                continue
            try:
                await self._api.get(NODES, None, name)
            except NotFound:
                gone.add(name)
            else:
                del self._missing[name]  # the cache was behind: it exists
        return gone

    async def _fail_and_delete(self, pod: dict[str, Any], condition: dict[str, Any] | None) -> None:
        meta = pod["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        with contextlib.suppress(NotFound, Conflict):
            if not is_pod_terminal(pod):
                status: dict[str, Any] = {"phase": "Failed"}
                if condition is not None:  # merged into the pod's conditions by type, as preemption's
                    status["conditions"] = [{**condition, "lastTransitionTime": self._clock.rfc3339()}]
                await self._api.patch(PODS, namespace, name, {"metadata": {"uid": meta["uid"]}, "status": status},
                                      patch_type="strategic", subresource="status", result=False)
            await self._api.delete(PODS, namespace, name, preconditions={"uid": meta["uid"]}, grace_period_seconds=0)
