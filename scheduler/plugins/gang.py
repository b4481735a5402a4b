"""GangScheduling: all-or-nothing scheduling of a pod group (KEP-4671, ``plugins/gangscheduling``).

The Permit-based design of the alpha (1.35/1.36); it shows the same outcome as 1.37's pod-group
cycle on the API: a gang is bound only once ``minCount`` of its pods found a place.

- PreEnqueue: a pod whose group object (PodGroup, or v1alpha1 Workload) does not exist yet, or
  whose gang has fewer than ``minCount`` pods observed, stays parked; adding a pod of the same
  group, the group itself, or lowering ``minCount`` re-evaluates it.  Basic groups pass.
- Reserve/Unreserve: the pod counts as *assumed* for its group instance, or stops counting.
- Permit: while assumed + bound pods are below ``minCount`` the pod waits until the group's
  deadline (created at the first wait, renewed once expired); the group's other pending pods are
  activated so they get their turn now.  The pod that completes the quorum allows every waiting
  member, and all of them go on to binding together.
- Deadline: when it passes, every waiting member is rejected with upstream's
  "minCount (N) cannot be satisfied" message; the scheduler then runs Unreserve for each (the
  DRA plugin releases its in-flight allocations) and parks them until a helpful event.
- PodGroup status (v1beta1 only; a v1alpha1 Workload has none): ``PodGroupInitiallyScheduled``
  becomes True once the quorum reaches binding (basic groups: at the first pod), False with
  reason Unschedulable when the deadline passes, and never goes back from True.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from fakeapi.scheduler.client import PODGROUPS, ApiClient
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    QueueingHint,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from fakeapi.scheduler.framework.runtime import WaitingPod
from fakeapi.scheduler.rules.podgroups import GroupLookup, PodGroupInstance, is_group_object, pod_group_instance
from fakeapi.scheduler.rules.pods import is_assigned
from fakeapi.scheduler.writes import write_until_known

from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

NAME = "GangScheduling"
DEFAULT_TIMEOUT = 300.0   # upstream's 5 minute gang scheduling timeout
WAITING_FOR_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_ON_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"
CONDITION_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"



# --- pure helpers ------------------------------------------------------------------------------

def gang_min_count(group_obj: dict[str, Any], instance: PodGroupInstance) -> int | None:
    """The instance's gang ``minCount``, or None for a basic policy.

    Raises ValueError when a v1alpha1 Workload has no ``podGroups`` entry of that name.
    """
    spec = group_obj.get("spec") or {}
    if instance.is_workload_shape:
        entry = next((g for g in spec.get("podGroups") or () if g.get("name") == instance.pod_group), None)
        if entry is None:
            raise ValueError(f'pod group "{instance.pod_group}" doesn\'t exist for a workload "{instance.workload}"')
        policy = entry.get("policy") or {}
    else:
        policy = spec.get("schedulingPolicy") or {}
    gang = policy.get("gang")
    return None if gang is None else int(gang.get("minCount") or 1)


def missing_group_message(instance: PodGroupInstance) -> str:
    """Upstream's PreEnqueue text for a pod whose group object does not exist (yet)."""
    if instance.is_workload_shape:
        return f'waiting for pods\'s workload "{instance.workload}" to appear in scheduling queue'
    return f'waiting for pod\'s pod group "{instance.pod_group}" to appear in scheduling queue'


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status:
    """Upstream ``PlacementFeasible``: Unschedulable once quorum is out of reach, Wait below it."""
    if scheduled + remaining < min_count:
        return unschedulable(NAME, f"minCount ({min_count}) cannot be satisfied: "
                                   f"{scheduled} scheduled, {remaining} remaining")
    if scheduled < min_count:
        return Status(Code.WAIT, (f"minCount ({min_count}) is not yet satisfied: "
                                  f"{scheduled} scheduled, {remaining} remaining",), NAME)
    return SUCCESS


def scheduled_condition(status: str, reason: str, message: str, generation: int | None) -> dict[str, Any]:
    """A ``PodGroupInitiallyScheduled`` metav1.Condition."""
    condition: dict[str, Any] = {"type": CONDITION_SCHEDULED, "status": status, "reason": reason,
                                 "message": message,
                                 "lastTransitionTime": now_rfc3339()}
    if generation is not None:
        condition["observedGeneration"] = generation
    return condition


def condition_update_needed(conditions: Iterable[dict[str, Any]], status: str, reason: str, message: str) -> bool:
    """False when the condition already says this, or is True (terminal: it never regresses)."""
    current = next((c for c in conditions if c.get("type") == CONDITION_SCHEDULED), None)
    if current is None:
        return True
    if current.get("status") == "True":
        return False
    return (current.get("status"), current.get("reason"), current.get("message")) != (status, reason, message)


# --- the plugin --------------------------------------------------------------------------------

class GangScheduling:
    """PreEnqueue, Reserve, Permit and events for gang policies; see the module docstring."""

    name = NAME

    def __init__(self, api: ApiClient, groups: GroupLookup,
                 members: Callable[[PodGroupInstance], list[dict[str, Any]]],
                 waiting_pod: Callable[[str], WaitingPod | None],
                 activate: Callable[[Iterable[str]], None], *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``members`` lists the observed, live pods of an instance (bound or not)."""
        self._api = api
        self._groups = groups
        self._members = members
        self._waiting_pod = waiting_pod
        self._activate = activate
        self._timeout = timeout
        self._assumed: dict[PodGroupInstance, set[str]] = {}
        self._deadlines: dict[PodGroupInstance, asyncio.TimerHandle] = {}
        # PodGroup UID per instance whose True condition is sent (the informer may lag behind).
        self._scheduled_written: dict[PodGroupInstance, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        """Stop the deadlines and status writes (the scheduler is shutting down)."""
        for handle in self._deadlines.values():
            handle.cancel()
        self._deadlines.clear()
        for task in self._tasks:
            task.cancel()

    # -- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self._pod_added_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self._pod_added_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), self._group_added_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE),
                                 self._min_count_lowered_hint),
        ]

    @staticmethod
    def _pod_added_hint(pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        instance = pod_group_instance(pod)
        same = instance is not None and new is not None and pod_group_instance(new) == instance
        return QueueingHint.QUEUE if same else QueueingHint.SKIP

    @staticmethod
    def _group_added_hint(pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        instance = pod_group_instance(pod)
        return QueueingHint.QUEUE if instance and is_group_object(new, instance) else QueueingHint.SKIP

    @staticmethod
    def _min_count_lowered_hint(pod: dict[str, Any], old: dict[str, Any] | None,
                                new: dict[str, Any] | None) -> QueueingHint:
        instance = pod_group_instance(pod)
        if instance is None or old is None or not is_group_object(new, instance):
            return QueueingHint.SKIP
        try:
            before, after = gang_min_count(old, instance), gang_min_count(new, instance)   # type: ignore[arg-type]
        except ValueError:
            return QueueingHint.SKIP
        lowered = before is not None and after is not None and after < before
        return QueueingHint.QUEUE if lowered else QueueingHint.SKIP

    # -- extension points -----------------------------------------------------------------------
    def pre_enqueue(self, pod: dict[str, Any]) -> Status:
        instance = pod_group_instance(pod)
        if instance is None:
            return SUCCESS
        group = self._groups(instance)
        if group is None:
            return unresolvable(NAME, missing_group_message(instance))
        try:
            min_count = gang_min_count(group, instance)
        except ValueError as exc:
            return unresolvable(NAME, str(exc))
        if min_count is not None and len(self._members(instance)) < min_count:
            return unresolvable(NAME, WAITING_FOR_PODS)
        return SUCCESS

    def reserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        instance = pod_group_instance(pod)
        if instance is not None:
            self._assumed.setdefault(instance, set()).add(pod["metadata"]["uid"])
        return SUCCESS

    def unreserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> None:
        instance = pod_group_instance(pod)
        assumed = self._assumed.get(instance) if instance is not None else None
        if assumed is not None:
            assumed.discard(pod["metadata"]["uid"])
            if not assumed:
                del self._assumed[instance]   # type: ignore[arg-type]

    def permit(self, state: CycleState, pod: dict[str, Any], node_name: str) -> tuple[Status, float]:
        instance = pod_group_instance(pod)
        if instance is None:
            return SUCCESS, 0.0
        group = self._groups(instance)
        if group is None:
            return error(NAME, f"failed to get pod group {instance.key}: not found"), 0.0
        try:
            min_count = gang_min_count(group, instance)
        except ValueError as exc:
            return error(NAME, str(exc)), 0.0
        if min_count is None:
            self._set_condition(instance, group, "True", REASON_SCHEDULED, "")
            return SUCCESS, 0.0
        members = self._members(instance)
        scheduled = self._scheduled(instance, members)
        if len(scheduled) < min_count:
            # The others may be parked after a failed attempt: their turn is now.
            self._activate([m["metadata"]["uid"] for m in members if m["metadata"]["uid"] not in scheduled])
            return Status(Code.WAIT, (WAITING_ON_PERMIT,), NAME), self._remaining(instance)
        for uid in self._assumed.get(instance, ()):
            waiting = self._waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        deadline = self._deadlines.pop(instance, None)
        if deadline is not None:
            deadline.cancel()
        self._set_condition(instance, group, "True", REASON_SCHEDULED, "")
        return SUCCESS, 0.0

    # -- quorum bookkeeping ---------------------------------------------------------------------
    def _scheduled(self, instance: PodGroupInstance, members: list[dict[str, Any]]) -> set[str]:
        """UIDs of members assumed by this scheduler or already bound (upstream's union)."""
        live = {m["metadata"]["uid"] for m in members}
        bound = {m["metadata"]["uid"] for m in members if is_assigned(m)}
        assumed = self._assumed.get(instance)
        if assumed is not None:
            # Bound members count through ``bound``; deleted ones not at all.
            assumed.intersection_update(live - bound)
        return (assumed or set()) | bound

    def _remaining(self, instance: PodGroupInstance) -> float:
        """Seconds until the group's deadline, starting a new one if none is running."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        handle = self._deadlines.get(instance)
        if handle is None or handle.when() <= now:
            handle = loop.call_at(now + self._timeout, self._expire, instance)
            self._deadlines[instance] = handle
        return handle.when() - now

    def _expire(self, instance: PodGroupInstance) -> None:
        """The deadline passed without quorum: reject every waiting member of the gang."""
        self._deadlines.pop(instance, None)
        group = self._groups(instance)
        try:
            min_count = gang_min_count(group, instance) if group is not None else None
        except ValueError:
            min_count = None
        if group is None or min_count is None:
            message = missing_group_message(instance)
        else:
            scheduled = self._scheduled(instance, self._members(instance))
            # Nothing remains to be tried in this attempt: the quorum is out of reach for now.
            message = placement_feasible(min_count, len(scheduled), 0).message
        for uid in list(self._assumed.get(instance, ())):
            waiting = self._waiting_pod(uid)
            if waiting is not None:
                waiting.reject(NAME, message)
        if group is not None:
            self._set_condition(instance, group, "False", REASON_UNSCHEDULABLE, message)

    # -- PodGroup status ------------------------------------------------------------------------
    def _set_condition(self, instance: PodGroupInstance, group: dict[str, Any], status: str, reason: str,
                       message: str) -> None:
        uid = group["metadata"].get("uid", "")
        if instance.is_workload_shape or self._scheduled_written.get(instance) == uid:
            return
        conditions = (group.get("status") or {}).get("conditions") or ()
        if not condition_update_needed(conditions, status, reason, message):
            return
        if status == "True":
            self._scheduled_written[instance] = uid
        task = asyncio.get_running_loop().create_task(
            self._patch_status(instance, group["metadata"], status, reason, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _patch_status(self, instance: PodGroupInstance, meta: dict[str, Any], status: str, reason: str,
                            message: str) -> None:
        """Write the condition; a lost answer re-reads the group and writes again if it is not there."""
        uid = meta.get("uid", "")
        patch = {"metadata": {"uid": uid},
                 "status": {"conditions": [scheduled_condition(status, reason, message, meta.get("generation"))]}}

        async def write() -> dict[str, Any]:
            return await self._api.patch(PODGROUPS, instance.namespace, instance.pod_group, patch,
                                         patch_type="strategic", subresource="status")

        async def landed() -> dict[str, Any] | None:
            group = await self._api.get(PODGROUPS, instance.namespace, instance.pod_group)
            if group["metadata"].get("uid") != uid:
                raise NotFound(f'podgroups.scheduling.k8s.io "{instance.pod_group}" not found')
            conditions = (group.get("status") or {}).get("conditions") or ()
            return None if condition_update_needed(conditions, status, reason, message) else group

        try:
            await write_until_known(write, landed, what=f"set {CONDITION_SCHEDULED} of PodGroup {instance.key}")
        except NotFound:
            pass   # deleted meanwhile
        except StatusError as exc:
            self._scheduled_written.pop(instance, None)
            log.warning("cannot update %s of PodGroup %s: %s", CONDITION_SCHEDULED, instance.key, exc)
