"""Kubelet emulation: what stands in for every node.

For each pod bound to a node (``spec.nodeName`` set):

- it starts the pod — ``status.phase: Running``, conditions ``PodReadyToStartContainers``,
  ``Initialized``, ``ContainersReady``, ``Ready`` and ``PodScheduled`` True, running
  ``containerStatuses`` — but only once every ResourceClaim the pod uses is allocated and reserved
  for the pod or its pod group, as the real kubelet refuses otherwise; until then the pod stays
  Pending and gets a ``FailedPrepareDynamicResources`` Event saying why;
- every started pod gets its own IP from ``10.244.0.0/16`` (the node's stays 127.0.0.1), and debug
  containers ``kubectl debug`` adds are reported running (never ready);
- it never overrides a terminal phase (``Succeeded``/``Failed``) written by a client;
- per-pod lifecycle by annotation (:mod:`fakeapi.scheduler.rules.lifecycle`): ``fakeapi.dev/run-for``
  ends the run after a duration (``Succeeded``, or ``Failed`` with ``fakeapi.dev/exit-code``, or a
  container restart as ``restartPolicy`` says), ``fakeapi.dev/ready-after`` delays ``Ready``; the
  steps are timers of the control plane's clock, so a test advances time instead of waiting;
- a deleted pod (``deletionTimestamp`` set) is stopped as the kubelet stops it: its containers end
  (at once, or after ``fakeapi.dev/terminate-after``, killed when the grace period runs out), the
  pod turns ``Failed`` with ``Ready`` False, then the emulation confirms the deletion with
  ``gracePeriodSeconds=0`` and the pod's UID as precondition, so "delete the pod, the claim is
  released" flows run in milliseconds.

A node annotated ``fakeapi.dev/kubelet-stopped: "true"`` has a kubelet that is down: its pods
are left as they are (deleted ones stay terminating) until the annotation goes.

Claim changes re-check the pods using them, so no polling is needed.  Status goes through the
``status`` subresource with the pod's resourceVersion as precondition, so a client's concurrent
terminal write wins (our write fails with 409 and the retry sees the terminal phase).
"""

from __future__ import annotations

import contextlib
import logging

from fakeapi.scheduler.client import NODES, PODS, RESOURCE_CLAIMS, ApiClient
from fakeapi.scheduler.clock import Clock, Timer
from fakeapi.scheduler.events import WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory, Lister
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.keys import object_key
from fakeapi.scheduler.rules.lifecycle import (
    RUN_FOR,
    SIGKILL_EXIT,
    SIGTERM_EXIT,
    Lifecycle,
    container_statuses,
    due,
    exited_status,
    kubelet_restarted,
    kubelet_stopped,
    lifecycle_of,
    run_started,
    running_conditions,
    terminal_status,
)
from fakeapi.scheduler.rules.podips import PodIPs
from fakeapi.scheduler.rules.pods import (
    is_assigned,
    is_pod_terminal,
    is_ready,
    is_terminating,
    node_name_keys,
    node_of,
)
from fakeapi.scheduler.rules.workloads import parse_time
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import Conflict, NotFound

log = logging.getLogger(__name__)

FAILED_PREPARE = "FailedPrepareDynamicResources"
INVALID_LIFECYCLE = "InvalidLifecycleAnnotation"
_CLAIM_INDEX = "kubelet/claim"
_NODE_INDEX = "kubelet/node"

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
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def running_status(pod: dict, now: str, pod_ip: str = "127.0.0.1") -> dict:
    """The ``status`` of a pod whose containers all started at ``now`` (existing conditions kept).

    Ready at once unless the pod asks for ``fakeapi.dev/ready-after``.
    """
    status = pod.get("status") or {}
    moment = parse_time(now) or 0.0
    ready = lifecycle_of(pod).ready_after <= 0
    return {"phase": "Running", "conditions": running_conditions(pod, ready=ready, now=moment),
            "containerStatuses": container_statuses(pod, ready=ready, started_at=moment),
            "startTime": status.get("startTime") or now, "hostIP": "127.0.0.1", "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}], "hostIPs": [{"ip": "127.0.0.1"}]}


def ephemeral_statuses(pod: dict, now: str) -> list[dict] | None:
    """The ephemeral container statuses once the debug containers the pod lacks one for
    (``kubectl debug``) run, or None when every one has its status.  They never turn ready."""
    known = list((pod.get("status") or {}).get("ephemeralContainerStatuses") or [])
    names = {s.get("name") for s in known}
    uid = pod["metadata"].get("uid", "")
    added = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "restartCount": 0,
              "containerID": f"fakeapi://{uid}-{c['name']}", "state": {"running": {"startedAt": now}}}
             for c in (pod.get("spec") or {}).get("ephemeralContainers") or [] if c.get("name") not in names]
    return known + added if added else None


def is_settled(pod: dict, *, timer_pending: bool) -> bool:
    """Whether a sync of the bound ``pod`` would find nothing to do: it runs and is ready, with no
    exit to time, no debug container to start and no lifecycle timer to cancel (most updates of a
    running pod, the kubelet's own status write among them)."""
    return ((pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)
            and run_started(pod) is not None and not is_terminating(pod) and not timer_pending
            and RUN_FOR not in (pod["metadata"].get("annotations") or {})
            and ephemeral_statuses(pod, "") is None)


class Kubelet:
    """Emulates the kubelet of every node: start bound pods, confirm deletions."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, *,
                 workers: int = 4, clock: Clock | None = None) -> None:
        # Four workers: a rollout's pods start while the old ones stop, and stopping is two writes
        # (the terminal status, then the confirmation); two workers made a 1,000-pod rollout ~25 %
        # slower (BENCHMARKS.md, Workloads).
        self._api = api
        self._recorder = recorder
        self._workers = workers
        self._clock = clock or Clock()
        # The pending lifecycle timer per pod UID (ready-after, run-for), one at a time.
        self._timers: dict[str, Timer] = {}
        self._queue: WorkQueue[Key] = WorkQueue()
        # Pod IPs handed out and shown, by pod UID (every pod its own).
        self._ips = PodIPs()
        # Last "why pending" per pod UID, so a pod re-checked often gets one Event per reason change.
        self._reported: dict[str, str] = {}
        # When the containers of a deleted pod were told to stop (SIGTERM), by pod UID.
        self._stopping: dict[str, float] = {}
        self._pods = factory.informer(PODS)
        self._claims = factory.informer(RESOURCE_CLAIMS)
        self._nodes = factory.informer(NODES)
        self._pods.add_index(_CLAIM_INDEX, rc.pod_claim_keys)
        self._pods.add_index(_NODE_INDEX, node_name_keys)
        self._nodes.add_event_handler(on_update=self._on_node_update)
        self._pods.add_event_handler(self._on_pod, lambda old, new: self._on_pod(new), self._forget)
        self._claims.add_event_handler(self._on_claim, lambda old, new: self._on_claim(new), self._on_claim)

    async def run(self) -> None:
        """Process pods with ``workers`` concurrent workers until cancelled."""
        await process(self._queue, lambda key: self._sync(*key), name="kubelet", workers=self._workers)

    def _on_pod(self, pod: dict) -> None:
        self._ips.show(pod["metadata"]["uid"], (pod.get("status") or {}).get("podIP"))
        self._enqueue(pod)

    def _enqueue(self, pod: dict) -> None:
        if is_assigned(pod) and not is_settled(pod, timer_pending=pod["metadata"].get("uid") in self._timers):
            self._queue.add((pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _pod_ip(self, pod: dict) -> str:
        """The pod's address: the one it has, else a free one of the pod network (handed out at
        once, so two workers never pick the same)."""
        return (pod.get("status") or {}).get("podIP") or self._ips.assign(pod["metadata"]["uid"])

    def _forget(self, pod: dict) -> None:
        uid = pod["metadata"].get("uid", "")
        self._ips.release(uid)
        self._reported.pop(uid, None)
        self._stopping.pop(uid, None)
        self._drop_timer(uid)

    def _drop_timer(self, uid: str) -> None:
        timer = self._timers.pop(uid, None)
        if timer is not None:
            timer.cancel()

    def _on_node_update(self, old: dict, node: dict) -> None:
        if kubelet_restarted(old, node):  # catch up with the node's pods
            for pod in self._pods.lister.by_index(_NODE_INDEX, node["metadata"]["name"]):
                self._enqueue(pod)

    def _on_claim(self, claim: dict) -> None:
        for pod in self._pods.lister.by_index(_CLAIM_INDEX, object_key(claim)):
            self._enqueue(pod)

    async def _sync(self, namespace: str, name: str) -> None:
        pod = self._pods.lister.get(namespace, name)
        if pod is None or not is_assigned(pod):
            return
        if kubelet_stopped(self._nodes.lister.get(None, node_of(pod))):
            return  # the node's kubelet is down; it catches up when back (_on_node_update)
        meta = pod["metadata"]
        if is_terminating(pod):
            await self._terminate(pod)
            return
        if is_pod_terminal(pod):
            return
        running = (pod.get("status") or {}).get("phase") == "Running"
        if running and (debug := ephemeral_statuses(pod, self._clock.rfc3339())) is not None:
            body = {"metadata": {"resourceVersion": meta["resourceVersion"]},
                    "status": {"ephemeralContainerStatuses": debug}}
            await self._api.patch(PODS, namespace, name, body, subresource="status")
            return
        if run_started(pod) is not None and running:
            await self._advance_lifecycle(pod)
            return
        reason = claims_not_ready(pod, self._claims.lister)
        if reason is not None:
            if self._reported.get(meta["uid"]) != reason:
                self._reported[meta["uid"]] = reason
                self._recorder.event(pod, WARNING, FAILED_PREPARE,
                                     f"Failed to prepare dynamic resources: {reason}", host=node_of(pod))
            return
        self._reported.pop(meta["uid"], None)
        lifecycle = lifecycle_of(pod)
        if lifecycle.problem:
            self._recorder.event(pod, WARNING, INVALID_LIFECYCLE, f"Ignored lifecycle annotations: {lifecycle.problem}",
                                 host=node_of(pod))
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]},
                "status": running_status(pod, self._clock.rfc3339(), self._pod_ip(pod))}
        if lifecycle.run_for is None and lifecycle.ready_after <= 0:
            # Running and Ready at once, with no step to time: nothing reads the patched pod.
            await self._api.patch(PODS, namespace, name, body, subresource="status", result=False)
            self._drop_timer(meta["uid"])
            return
        started = await self._api.patch(PODS, namespace, name, body, subresource="status")
        self._schedule(started, lifecycle)

    async def _terminate(self, pod: dict) -> None:
        """Stop a deleted pod's containers, report the pod terminal, then confirm the deletion."""
        meta = pod["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        if not is_pod_terminal(pod) and run_started(pod) is not None:
            now = self._clock.now()
            grace = float(meta.get("deletionGracePeriodSeconds") or 0)
            delay = lifecycle_of(pod).terminate_after
            # A later delete may shorten the grace period; it still counts from the first stop.
            exit_at = self._stopping.setdefault(uid, now) + min(delay, grace)
            if exit_at > now:
                self._recheck_at(pod, exit_at)
                return
            body = {"metadata": {"resourceVersion": meta["resourceVersion"]},
                    "status": terminal_status(pod, SIGKILL_EXIT if delay > grace else SIGTERM_EXIT, now)}
            # The informer brings the terminal pod (or a newer one after a conflict) to a next sync.
            with contextlib.suppress(NotFound, Conflict):
                await self._api.patch(PODS, namespace, name, body, subresource="status", result=False)
            return
        if meta.get("deletionGracePeriodSeconds") == 0:
            return  # confirmed already: the API server removes the pod once its finalizers are gone
        with contextlib.suppress(NotFound, Conflict):
            await self._api.delete(PODS, namespace, name, preconditions={"uid": uid}, grace_period_seconds=0)

    async def _advance_lifecycle(self, pod: dict) -> None:
        """Take the lifecycle step that is due (turn Ready, or exit), then wait for the next one."""
        lifecycle = lifecycle_of(pod)
        step = due(pod, lifecycle, self._clock.now())
        if step is None or step[1] > self._clock.now():
            self._schedule(pod, lifecycle)
            return
        meta = pod["metadata"]
        now = self._clock.now()
        if step[0] == "ready":
            status = {"conditions": running_conditions(pod, ready=True, now=now),
                      "containerStatuses": container_statuses(pod, ready=True, started_at=run_started(pod) or now)}
            for new, old in zip(status["containerStatuses"], (pod.get("status") or {}).get("containerStatuses") or [],
                                strict=False):
                new["restartCount"] = old.get("restartCount", 0)
                if old.get("lastState"):
                    new["lastState"] = old["lastState"]
        else:
            status = exited_status(pod, lifecycle, now)
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        updated = await self._api.patch(PODS, meta["namespace"], meta["name"], body, subresource="status")
        self._schedule(updated, lifecycle)

    def _schedule(self, pod: dict, lifecycle: Lifecycle) -> None:
        """Re-check the pod when its next lifecycle step falls due."""
        step = due(pod, lifecycle, self._clock.now())
        if step is None or is_pod_terminal(pod):
            self._drop_timer(pod["metadata"]["uid"])
        else:
            self._recheck_at(pod, step[1])

    def _recheck_at(self, pod: dict, at: float) -> None:
        """Sync the pod again at ``at`` on the control plane's clock (one pending timer per pod)."""
        meta = pod["metadata"]
        key = (meta["namespace"], meta["name"])
        self._drop_timer(meta["uid"])
        self._timers[meta["uid"]] = self._clock.call_later(at - self._clock.now(), lambda: self._queue.add(key))
