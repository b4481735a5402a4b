"""GangScheduling: the pod-group rules of KEP-4671 as 1.37 has them (``plugins/gangscheduling``).

In 1.37 a pod group is scheduled in one pod-group cycle (:mod:`fakeapi.scheduler.podgroup_cycle`),
which makes the all-or-nothing decision before anything is reserved; the alpha's Permit barrier
and its 5-minute timeout are gone.  What the plugin still owns:

- PreEnqueue, for the group as a whole: the group object (PodGroup, or v1alpha1 Workload with
  the named ``podGroups[]`` entry) must exist and, for a gang, at least ``minCount`` of its pods
  must have been observed (bound ones included).  Basic groups pass.
- PlacementFeasible: after each member the cycle asks whether ``minCount`` is still within reach
  (Unschedulable ends the cycle), not yet reached (Wait) or reached (Success); basic groups use
  a ``minCount`` of 1.
- The events that may let a waiting group in: a pod of the same group added (pending or bound),
  the group added, or its ``minCount`` lowered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    QueueingHint,
    Status,
    unresolvable,
    unschedulable,
)
from fakeapi.scheduler.rules.podgroups import GroupLookup, PodGroupInstance, is_group_object, pod_group_instance

NAME = "GangScheduling"
WAITING_FOR_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"


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


# --- the plugin --------------------------------------------------------------------------------

class GangScheduling:
    """The group-level PreEnqueue check and the events that may open it; see the module docstring."""

    name = NAME

    def __init__(self, groups: GroupLookup, member_count: Callable[[PodGroupInstance], int]) -> None:
        """``member_count`` counts the observed, live pods of an instance (bound or not)."""
        self._groups = groups
        self._member_count = member_count

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

    def pre_enqueue_group(self, instance: PodGroupInstance) -> Status:
        """Whether the group may enter the active queue (its object exists, its quorum is observed)."""
        group = self._groups(instance)
        if group is None:
            return unresolvable(NAME, missing_group_message(instance))
        try:
            min_count = gang_min_count(group, instance)
        except ValueError as exc:
            return unresolvable(NAME, str(exc))
        if min_count is not None and self._member_count(instance) < min_count:
            return unresolvable(NAME, WAITING_FOR_PODS)
        return SUCCESS
