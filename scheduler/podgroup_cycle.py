"""The pod-group scheduling algorithm of 1.37 (``algorithm_podgroup.go``), without I/O.

One cycle places the pending members of a pod group one after another on one view of the
cluster: each member is filtered and scored, then *assumed* (its node usage counted, Reserve
run — DRA's in-flight allocations included), so later members see what earlier ones took.
``PlacementFeasible`` (the gang's ``minCount``) is asked before the first member and after
each: once the quorum is out of reach the cycle stops.  A group that ends short of success has
every assumption reverted, newest first, so nothing stays reserved or allocated.

The scheduler supplies the two steps that touch its caches (:class:`MemberScheduler`); this
module only sequences them and words the outcome as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code, Status, error, unschedulable
from fakeapi.scheduler.plugins.gang import placement_feasible
from fakeapi.scheduler.queue.entities import QueuedPodInfo
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

NO_PODS_SCHEDULABLE = "no pods were schedulable"
FAILED_OTHER_POD = "failed to schedule other pod from a pod group: "


@dataclass
class MemberResult:
    """One member's attempt: a node, or the member's own failure and its user-facing message."""

    info: QueuedPodInfo
    state: CycleState
    node: str | None
    status: Status
    message: str = ""
    rejected_by: frozenset[str] = frozenset()

    @property
    def fits(self) -> bool:
        return self.node is not None


@dataclass
class GroupResult:
    """The group's outcome; ``members`` holds a result for every member that was tried."""

    status: Status
    members: list[MemberResult] = field(default_factory=list)
    reverts: list[Callable[[], None]] = field(default_factory=list)   # kept assumptions, oldest first

    @property
    def placed(self) -> int:
        return sum(1 for m in self.members if m.fits)

    def revert(self) -> None:
        """Undo every kept assumption, newest first."""
        while self.reverts:
            self.reverts.pop()()


class MemberScheduler(Protocol):
    """The scheduler's per-member steps, on its live (cycle-consistent) caches."""

    def schedule_member(self, info: QueuedPodInfo, placement: dict[str, Any]) -> MemberResult:
        """Filter and score one member (no preemption) under ``placement``: a node, or why none fits."""
        ...

    def assume_member(self, result: MemberResult) -> Callable[[], None] | Status:
        """Count the member on its node and run Reserve; the revert closure, or why it failed."""
        ...


def run_group_algorithm(members: Sequence[QueuedPodInfo], min_count: int, scheduled: int,
                        scheduler: MemberScheduler, placement: dict[str, Any] | None = None) -> GroupResult:
    """``podGroupSchedulingDefaultAlgorithm``: place ``members`` in order until done or hopeless.

    ``scheduled`` counts members already bound or binding; ``placement`` is what this attempt
    fixed for every member (by plugin name).  Success keeps the assumptions (the caller binds
    or reverts them); any other outcome has reverted them already.
    """
    feasible = placement_feasible(min_count, scheduled, len(members))
    result = GroupResult(_group_status(feasible))
    if feasible.code == Code.UNSCHEDULABLE:   # a gang that can never reach quorum never reaches Filter
        return result
    remaining = len(members)
    for info in members:
        member = scheduler.schedule_member(info, placement or {})
        if member.fits:
            revert = scheduler.assume_member(member)
            if isinstance(revert, Status):
                member.node, member.status = None, revert
                member.message = revert.message
            else:
                result.reverts.append(revert)
        result.members.append(member)
        if member.status.code == Code.ERROR:
            result.status = error(member.status.plugin, FAILED_OTHER_POD + member.message)
            break
        remaining -= 1
        scheduled += member.fits
        feasible = placement_feasible(min_count, scheduled, remaining)
        result.status = _group_status(feasible)
        if feasible.code == Code.UNSCHEDULABLE:
            break
    if result.status.is_success and not result.placed:
        result.status = unschedulable("", NO_PODS_SCHEDULABLE)
    if not result.status.is_success:
        result.revert()
    return result


def _group_status(feasible: Status) -> Status:
    """Wait keeps going but ends Unschedulable if it is the last word (upstream's mapping)."""
    if feasible.code == Code.WAIT:
        return Status(Code.UNSCHEDULABLE, feasible.reasons, feasible.plugin)
    return feasible


def run_placements(members: Sequence[QueuedPodInfo], min_count: int, scheduled: int,
                   scheduler: MemberScheduler, placements: Sequence[dict[str, Any]], nothing_to_try: str
                   ) -> GroupResult:
    """Upstream's placement algorithm, for the choices a plugin offers: the first placement that
    succeeds wins; when none does, the first one's outcome is reported as upstream words it.
    ``nothing_to_try`` is the group's status when there is no placement at all."""
    first: GroupResult | None = None
    for placement in placements:
        result = run_group_algorithm(members, min_count, scheduled, scheduler, placement)
        if result.status.is_success or result.status.code == Code.ERROR:
            return result
        first = first or result
    if first is None:
        return GroupResult(unschedulable("", nothing_to_try))
    first.status = Status(Code.UNSCHEDULABLE, (f"0/{len(placements)} placements are available, first placement "
                                               f"status: {first.status.message}",), first.status.plugin)
    return first


def member_message(group: GroupResult, member: MemberResult) -> str:
    """What a member shows: its own failure, or the group's when it fit but the group did not."""
    if member.fits or member.status.is_success:
        return group.status.message
    return member.message


def validate_group(instance: PodGroupInstance, group_priority: int | None,
                   members: Iterable[dict[str, Any]]) -> str:
    """Upstream ``validatePodGroup``: one schedulerName and the group's priority for every member
    (pending and scheduled); the error text, or '' when valid.

    ``group_priority`` None (a v1alpha1 Workload has none) takes the first member's priority.
    """
    first: dict[str, Any] | None = None
    root_key = f"podgroup/{instance.namespace}/{instance.object_name}"
    for pod in members:
        spec = pod.get("spec") or {}
        name = pod["metadata"]["name"]
        if first is None:
            first = pod
            if group_priority is None:
                group_priority = int(spec.get("priority") or 0)
        scheduler_name = spec.get("schedulerName") or ""
        first_scheduler = (first.get("spec") or {}).get("schedulerName") or ""
        if scheduler_name != first_scheduler:
            return ("all pods in a pod group hierarchy should have the same .spec.schedulerName set, "
                    f'got: "{scheduler_name}" ("{name}") and "{first_scheduler}" ("{first["metadata"]["name"]}")')
        priority = int(spec.get("priority") or 0)
        if priority != group_priority:
            return ("all pods in a pod group hierarchy should have the same priority as the root pod group's "
                    f'priority, got {priority} ("{name}") and {group_priority} ("{root_key}")')
    return ""
