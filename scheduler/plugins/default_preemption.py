"""DefaultPreemption: make room for a pod, or a whole pod group, by evicting lower-priority pods.

Single pods (PostFilter, ``plugins/defaultpreemption``): a pod with ``preemptionPolicy: Never``
never preempts.  Candidates are the nodes that rejected the pod as Unschedulable (an
unresolvable rejection — a missing device included — is not helped by eviction).  On each, every
lower-priority pod is set aside; if the pod then passes every filter, victims are given back
most important first while it still fits (NodeResourcesFit is the only filter pods' usage
decides).  :func:`~fakeapi.scheduler.preemption.pick_node` chooses among the candidates.  Devices
are never freed by preemption in 1.37 (DRA-aware preemption, KEP-5690, came later), so a pod that
only lacks a device finds no candidate and stays pending.

Pod groups (workload-aware preemption, KEP-5710, in the pod-group cycle): every pod of lower
priority than the group's is set aside, the group's algorithm runs once, and victims are given
back while the placement holds.

Victims (:mod:`fakeapi.scheduler.preemption`): a member of a group with ``disruptionMode: all``
takes every scheduled pod of its group with it.  Eviction is upstream's: a ``DisruptionTarget``
condition (reason ``PreemptionByScheduler``), a graceful delete, and a ``Preempted`` Event; the
preemptor is nominated to its node(s) (``status.nominatedNodeName``, counted by the
:class:`~fakeapi.scheduler.nominator.Nominator`) and scheduled once the victims are gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.client import PODS, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.events import NORMAL, EventRecorder
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    NodeStatuses,
    Status,
    fit_error_message,
    unresolvable,
    unschedulable,
)
from fakeapi.scheduler.nominator import Nominator
from fakeapi.scheduler.plugins.node_resources_fit import overcommitted
from fakeapi.scheduler.preemption import Candidate, Victim, pick_node, reprieve
from fakeapi.scheduler.rules.podgroups import PodGroupInstance, pod_group_instance
from fakeapi.scheduler.rules.pods import as_pod, is_terminating
from fakeapi.scheduler.snapshot import NodeCache, NodeInfo

from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

NAME = "DefaultPreemption"
# Where the cycle state records the nomination PostFilter decided ("" clears it).
NOMINATION = "DefaultPreemption/nomination"
NEVER = "Never"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"
ONGOING = "ongoing preemption on nominated nodes"


@dataclass(frozen=True)
class GroupView:
    """What preemption needs to know about a pod's group: priority, disruption mode, scheduled pods."""

    priority: int
    disrupt_all: bool
    scheduled: Callable[[], list[dict[str, Any]]]


def pod_priority(pod: dict[str, Any]) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def _scheduler_name(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


class DefaultPreemption:
    """PostFilter for pods, :meth:`preempt_group` for pod-group cycles; see the module docstring."""

    name = NAME

    def __init__(self, api: ApiClient, recorder: EventRecorder, nodes: NodeCache, nominator: Nominator, *,
                 run_filter: Callable[[CycleState, dict[str, Any], NodeInfo], Status],
                 fits_resources: Callable[[CycleState, dict[str, Any], NodeInfo], Status],
                 pods_on: Callable[[str], list[dict[str, Any]]],
                 group_view: Callable[[PodGroupInstance], GroupView | None],
                 pdbs: Callable[[], list[dict[str, Any]]]) -> None:
        """``pods_on`` lists the pods bound to a node; ``group_view`` describes a pod's group."""
        self._api = api
        self._recorder = recorder
        self._nodes = nodes
        self._nominator = nominator
        self._run_filter = run_filter
        self._fits_resources = fits_resources
        self._pods_on = pods_on
        self._group_view = group_view
        self._pdbs = pdbs
        self._tasks: set[asyncio.Task[None]] = set()
        # Victims not gone yet, by preemptor (a pod UID or a group key), and each victim's preemptor:
        # a preemptor waits for them instead of preempting again (upstream's in-flight preemption).
        self._pending: dict[str, set[str]] = {}
        self._preemptor_of: dict[str, str] = {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A preemptor waits for its victims to go.
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))]

    def victim_gone(self, uid: str) -> None:
        """A pod was deleted: if it was a victim, its preemptor waits for one less."""
        preemptor = self._preemptor_of.pop(uid, None)
        if preemptor is not None:
            waiting = self._pending[preemptor]
            waiting.discard(uid)
            if not waiting:
                del self._pending[preemptor]

    # -- victims ------------------------------------------------------------------------------------
    def victim_of(self, pod: dict[str, Any]) -> Victim:
        """The unit ``pod`` would be evicted in, with its (group's) priority."""
        instance = pod_group_instance(pod)
        view = self._group_view(instance) if instance is not None else None
        if view is None:
            return Victim((pod,), pod_priority(pod))
        pods = tuple(view.scheduled()) if view.disrupt_all else (pod,)
        return Victim(pods or (pod,), view.priority, group=True)

    def _victims_below(self, priority: int, pods: Iterable[dict[str, Any]], exclude: set[str]) -> list[Victim]:
        found: dict[str, Victim] = {}
        for pod in pods:
            if is_terminating(pod) or pod["metadata"]["uid"] in exclude:
                continue
            victim = self.victim_of(pod)
            if victim.priority < priority and not exclude.intersection(p["metadata"]["uid"] for p in victim.pods):
                found.setdefault(victim.uid, victim)
        return list(found.values())

    def _set_aside(self, victim: Victim) -> Callable[[], None]:
        return self._nodes.set_aside(p["metadata"]["uid"] for p in victim.pods)

    # -- single pods -------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: dict[str, Any], statuses: dict[str, Status]) -> Status:
        uid = pod["metadata"]["uid"]
        reason = NOT_ELIGIBLE_TERMINATING if uid in self._pending else self._not_eligible(pod)
        if reason:
            return unschedulable(NAME, "preemption: " + reason)
        priority = pod_priority(pod)
        nodes = self._nodes.nodes()
        helpable = (statuses if isinstance(statuses, NodeStatuses) else NodeStatuses(statuses)).unschedulable()
        # Only where the pod was merely Unschedulable can eviction help; on every other node it is
        # "not helpful" (at capacity that is every node: counted, not listed).
        node_statuses: dict[str, Status] = {}
        candidates = []
        for name in sorted(helpable):   # nodes() is in name order
            info = self._nodes.get(name)
            if info is None:
                continue
            candidate, status = self._select_victims(state, pod, info, priority)
            if candidate is None:
                node_statuses[info.name] = status
            else:
                candidates.append(candidate)
        if not candidates:
            state.write(NOMINATION, "")
            not_helpful = len(nodes) - len(node_statuses)
            message = fit_error_message(len(nodes), node_statuses,
                                        also={NOT_HELPFUL: not_helpful} if not_helpful else None)
            return unschedulable(NAME, "preemption: " + message)
        best = pick_node(candidates)
        self._evict(best.victims, uid, "pod", uid, best.node, _scheduler_name(pod),
                    as_pod(pod))
        self._nominate(pod, best.node)
        state.write(NOMINATION, best.node)
        return SUCCESS

    def _not_eligible(self, pod: dict[str, Any]) -> str:
        """Upstream ``PodEligibleToPreemptOthers``."""
        if (pod.get("spec") or {}).get("preemptionPolicy") == NEVER:
            return NOT_ELIGIBLE_NEVER
        nominated = self._nominator.node_of(pod["metadata"]["uid"])
        priority = pod_priority(pod)
        if nominated and any(pod_priority(p) < priority and is_terminating(p) for p in self._pods_on(nominated)):
            return NOT_ELIGIBLE_TERMINATING
        return ""

    def _select_victims(self, state: CycleState, pod: dict[str, Any], info: NodeInfo,
                        priority: int) -> tuple[Candidate | None, Status]:
        """``SelectVictimsOnNode``: the fewest victims on ``info`` that make room for ``pod``."""
        victims = self._victims_below(priority, self._pods_on(info.name), {pod["metadata"]["uid"]})
        if not victims:
            return None, unresolvable(NAME, NO_VICTIMS)
        restores = {v.uid: self._set_aside(v) for v in victims}
        try:
            status = self._run_filter(state, pod, info)
            if not status.is_success:
                return None, status

            def give_back(victim: Victim) -> bool:
                restores.pop(victim.uid)()
                if self._fits_resources(state, pod, info).is_success:
                    return True
                restores[victim.uid] = self._set_aside(victim)
                return False

            evicted, violations = reprieve(victims, self._pdbs(), give_back)
        finally:
            for restore in restores.values():
                restore()
        return Candidate(info.name, tuple(evicted), violations), SUCCESS

    # -- pod groups --------------------------------------------------------------------------------
    def preempt_group(self, key: str, members: list[dict[str, Any]], priority: int, group_uid: str,
                      place: Callable[[], tuple[Status, dict[str, str], Callable[[], None]]]
                      ) -> tuple[Status, dict[str, str]]:
        """Workload-aware preemption for a group (``key``) that did not fit: Success with each
        placed member's node to nominate, or why preemption cannot help.

        ``place`` runs the group's algorithm once on the current (victim-less) view: its status,
        the placed members' nodes, and the closure that reverts the placement.
        """
        if key in self._pending:
            nominated = {p["metadata"]["uid"]: self._nominator.node_of(p["metadata"]["uid"]) for p in members}
            return Status(Code.SUCCESS, (ONGOING,), NAME), {uid: node for uid, node in nominated.items() if node}
        if any((p.get("spec") or {}).get("preemptionPolicy") == NEVER for p in members):
            return unschedulable(NAME, NOT_ELIGIBLE_NEVER), {}
        member_uids = {p["metadata"]["uid"] for p in members}
        everyone = [p for info in self._nodes.nodes() for p in self._pods_on(info.name)]
        victims = self._victims_below(priority, everyone, member_uids)
        if not victims:
            return unresolvable(NAME, NO_GROUP_VICTIMS), {}
        restores = {v.uid: self._set_aside(v) for v in victims}
        try:
            status, placed, revert = place()
            if not status.is_success:
                return status, {}
            try:
                def give_back(victim: Victim) -> bool:
                    restores.pop(victim.uid)()
                    nodes = {self._nodes.node_of(p["metadata"]["uid"]) for p in victim.pods}
                    if not any(_overcommitted(self._nodes.get(n)) for n in nodes):
                        return True
                    restores[victim.uid] = self._set_aside(victim)
                    return False

                evicted, _ = reprieve(victims, self._pdbs(), give_back)
            finally:
                revert()
        finally:
            for restore in restores.values():
                restore()
        self._evict(evicted, key, "podgroup", group_uid, "cluster", _scheduler_name(members[0]))
        return Status(Code.SUCCESS, (f"found a placement for podgroup, preempting {len(evicted)} victims",),
                      NAME), placed

    # -- eviction ----------------------------------------------------------------------------------
    def _nominate(self, pod: dict[str, Any], node_name: str) -> None:
        """Promise ``node_name`` to ``pod``; lower-priority pods nominated there lose theirs."""
        priority = pod_priority(pod)
        for uid, nominated in list(self._nominator.pods_on(node_name).items()):
            if nominated.priority < priority and uid != pod["metadata"]["uid"]:
                self._nominator.remove(uid)
        self._nominator.nominate(pod, node_name)

    def _evict(self, victims: Iterable[Victim], preemptor: str, kind: str, preemptor_uid: str, node: str,
               scheduler_name: str, preemptor_pod: dict[str, Any] | None = None) -> None:
        """Preempt every pod of ``victims`` in the background for ``preemptor``; ``node`` is what
        the Events name (a group preemptor's domain is the whole ``cluster``), and a pod preemptor
        their related object, as upstream's."""
        for victim in victims:
            for pod in victim.pods:
                self._pending.setdefault(preemptor, set()).add(pod["metadata"]["uid"])
                self._preemptor_of[pod["metadata"]["uid"]] = preemptor
                task = asyncio.get_running_loop().create_task(
                    self._preempt_pod(pod, kind, preemptor_uid, node, scheduler_name, preemptor_pod))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _preempt_pod(self, pod: dict[str, Any], kind: str, preemptor_uid: str, node: str,
                           scheduler_name: str, preemptor_pod: dict[str, Any] | None) -> None:
        """``PreemptPod``: mark the victim a disruption target, delete it, record an Event."""
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta["uid"]
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                     "message": f"{scheduler_name}: preempting to accommodate a higher priority {kind}",
                     "lastTransitionTime": now_rfc3339()}
        patch = {"metadata": {"uid": uid}, "status": {"conditions": [condition]}}
        try:
            await self._api.patch(PODS, namespace, name, patch, patch_type="strategic", subresource="status")
            await self._api.delete(PODS, namespace, name, preconditions={"uid": uid})
        except NotFound:
            self.victim_gone(uid)   # gone already: the room is free
            return
        except (StatusError, *TRANSPORT_ERRORS) as exc:
            log.warning("could not preempt pod %s/%s: %s", namespace, name, exc)
            self.victim_gone(uid)   # the preemptor may try again
            return
        self._recorder.event(as_pod(pod), NORMAL, "Preempted",
                             f"Preempted by {kind} {preemptor_uid} on node {node}", action="Preempting",
                             related=preemptor_pod)

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()


def _overcommitted(info: NodeInfo | None) -> bool:
    return info is not None and overcommitted(info)
