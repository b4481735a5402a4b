"""Kubelet emulation: what stands in for every node.

For each pod bound to a node (``spec.nodeName`` set):

- it starts the pod — ``status.phase: Running``, conditions ``PodReadyToStartContainers``,
  ``Initialized``, ``ContainersReady``, ``Ready`` and ``PodScheduled`` True, running
  ``containerStatuses`` — but only once every ResourceClaim the pod uses is allocated and reserved
  for the pod or its pod group, as the real kubelet refuses otherwise; until then the pod stays
  Pending and gets a ``FailedPrepareDynamicResources`` Event saying why;
- it never overrides a terminal phase (``Succeeded``/``Failed``) written by a client;
- a deleted pod (``deletionTimestamp`` set) is confirmed terminated at once: the emulation
  deletes it with ``gracePeriodSeconds=0`` and the pod's UID as precondition, so "delete the
  pod, the claim is released" flows run in milliseconds.

Claim changes re-check the pods using them, so no polling is needed.  Status goes through the
``status`` subresource with the pod's resourceVersion as precondition, so a client's concurrent
terminal write wins (our write fails with 409 and the retry sees the terminal phase).
"""

from __future__ import annotations

import contextlib
import logging

from fakeapi.scheduler.client import PODS, RESOURCE_CLAIMS, ApiClient
from fakeapi.scheduler.events import WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory, Lister
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.keys import object_key
from fakeapi.scheduler.rules.pods import is_assigned, is_pod_terminal, is_terminating
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import Conflict, NotFound
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

FAILED_PREPARE = "FailedPrepareDynamicResources"
_CLAIM_INDEX = "kubelet/claim"
_RUNNING_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled")

Key = tuple[str, str]


def claims_not_ready(pod: dict, claims: Lister) -> str | None:
    """Why the pod cannot start because of its claims, or None when all are usable."""
    meta = pod["metadata"]
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        try:
            name, _ = rc.pod_claim_name(pod, pod_claim)
        except rc.ClaimNotCreated:
            return f"ResourceClaim for pod claim {pod_claim.get('name')} has not been created yet"
        if name is None:
            continue  # no claim needed for this entry
        claim = claims.get(meta["namespace"], name)
        if claim is None:
            return f"failed to fetch ResourceClaim {name} referenced by pod {meta['name']}: not found"
        if not rc.is_allocated(claim):
            return f"ResourceClaim {name} is not allocated"
        if not rc.claim_allows_pod(claim, pod):
            return (f"pod {meta['name']}({meta['uid']}) is not allowed to use ResourceClaim "
                    f"{name}({claim['metadata'].get('uid', '')})")
    return None


def is_running(pod: dict) -> bool:
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return status.get("phase") == "Running" and ready


def running_status(pod: dict, now: str) -> dict:
    """The ``status`` of a pod whose containers all started at ``now`` (existing conditions kept)."""
    status = pod.get("status") or {}
    conditions = {c["type"]: c for c in status.get("conditions") or [] if c.get("type")}
    for type_ in _RUNNING_CONDITIONS:
        old = conditions.get(type_)
        if old is None or old.get("status") != "True":
            conditions[type_] = {"type": type_, "status": "True", "lastProbeTime": None,
                                 "lastTransitionTime": now}
    uid = pod["metadata"].get("uid", "")
    container_statuses = [
        {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
         "restartCount": 0, "containerID": f"fakeapi://{uid}-{c['name']}",
         "state": {"running": {"startedAt": now}}}
        for c in (pod.get("spec") or {}).get("containers") or []
    ]
    return {"phase": "Running", "conditions": list(conditions.values()), "containerStatuses": container_statuses,
            "startTime": status.get("startTime") or now, "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
            "podIPs": [{"ip": "127.0.0.1"}], "hostIPs": [{"ip": "127.0.0.1"}]}


class Kubelet:
    """Emulates the kubelet of every node: start bound pods, confirm deletions."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, *,
                 workers: int = 2) -> None:
        self._api = api
        self._recorder = recorder
        self._workers = workers
        self._queue: WorkQueue[Key] = WorkQueue()
        # Last "why pending" per pod UID, so a pod re-checked often gets one Event per reason change.
        self._reported: dict[str, str] = {}
        self._pods = factory.informer(PODS)
        self._claims = factory.informer(RESOURCE_CLAIMS)
        self._pods.add_index(_CLAIM_INDEX, rc.pod_claim_keys)
        self._pods.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), self._forget)
        self._claims.add_event_handler(self._on_claim, lambda old, new: self._on_claim(new), self._on_claim)

    async def run(self) -> None:
        """Process pods with ``workers`` concurrent workers until cancelled."""
        await process(self._queue, lambda key: self._sync(*key), name="kubelet", workers=self._workers)

    def _enqueue(self, pod: dict) -> None:
        if is_assigned(pod):
            self._queue.add((pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _forget(self, pod: dict) -> None:
        self._reported.pop(pod["metadata"].get("uid", ""), None)

    def _on_claim(self, claim: dict) -> None:
        for pod in self._pods.lister.by_index(_CLAIM_INDEX, object_key(claim)):
            self._enqueue(pod)

    async def _sync(self, namespace: str, name: str) -> None:
        pod = self._pods.lister.get(namespace, name)
        if pod is None or not is_assigned(pod):
            return
        meta = pod["metadata"]
        if is_terminating(pod):
            # Containers "stop" instantly; confirm so the API server removes the pod now.
            with contextlib.suppress(NotFound, Conflict):
                await self._api.delete(PODS, namespace, name, preconditions={"uid": meta["uid"]},
                                       grace_period_seconds=0)
            return
        if is_pod_terminal(pod) or is_running(pod):
            return
        reason = claims_not_ready(pod, self._claims.lister)
        if reason is not None:
            if self._reported.get(meta["uid"]) != reason:
                self._reported[meta["uid"]] = reason
                self._recorder.event(pod, WARNING, FAILED_PREPARE,
                                     f"Failed to prepare dynamic resources: {reason}")
            return
        self._reported.pop(meta["uid"], None)
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": running_status(pod, now_rfc3339())}
        await self._api.patch(PODS, namespace, name, body, subresource="status")
