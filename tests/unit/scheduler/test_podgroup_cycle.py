"""The pod-group algorithm against a fake member scheduler: PlacementFeasible, early stop, revert."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, Code, Status, error, unresolvable
from fakeapi.scheduler.podgroup_cycle import (
    MemberResult,
    member_message,
    run_group_algorithm,
    validate_group,
)
from fakeapi.scheduler.queue.entities import QueuedPodInfo
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

from .builders import pod

NO_FIT = "0/2 nodes are available: 2 cannot allocate all claims."


class _Members:
    """Members fit ("n1"), do not fit ("-"), fail Reserve ("r") or hit an error ("!"), by name."""

    def __init__(self, outcomes: dict[str, str]) -> None:
        self.outcomes = outcomes
        self.tried: list[str] = []
        self.assumed: list[str] = []

    def schedule_member(self, info: QueuedPodInfo, placement: dict[str, Any]) -> MemberResult:
        name = info.pod["metadata"]["name"]
        self.tried.append(name)
        outcome = self.outcomes[name]
        if outcome == "-":
            return MemberResult(info, CycleState(), None, Status(Code.UNSCHEDULABLE), NO_FIT,
                                frozenset({"DynamicResources"}))
        if outcome == "!":
            return MemberResult(info, CycleState(), None, error("X", "boom"), 'running "X" filter plugin: boom')
        return MemberResult(info, CycleState(), "n1", SUCCESS)

    def assume_member(self, member: MemberResult) -> Callable[[], None] | Status:
        name = member.info.pod["metadata"]["name"]
        if self.outcomes[name] == "r":
            return unresolvable("DynamicResources", "resource claim default/c is in the process of being allocated")
        self.assumed.append(name)
        return lambda: self.assumed.remove(name)


def _infos(*names: str) -> list[QueuedPodInfo]:
    return [QueuedPodInfo(pod(n), 0.0) for n in names]


@pytest.mark.parametrize(("outcomes", "min_count", "scheduled", "code", "message", "tried", "kept"), [
    ({"a": "n1", "b": "n1", "c": "n1"}, 3, 0, Code.SUCCESS, "", "abc", "abc"),
    ({"a": "n1", "b": "n1", "c": "-"}, 3, 0, Code.UNSCHEDULABLE,
     "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", "abc", ""),
    ({"a": "-", "b": "n1", "c": "n1"}, 3, 0, Code.UNSCHEDULABLE,
     "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining", "a", ""),
    ({"a": "n1", "b": "-", "c": "n1"}, 2, 0, Code.SUCCESS, "", "abc", "ac"),
    ({"a": "-", "b": "-"}, 1, 0, Code.UNSCHEDULABLE,
     "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining", "ab", ""),
    ({"a": "-", "b": "n1"}, 1, 0, Code.SUCCESS, "", "ab", "b"),
    ({"a": "n1"}, 3, 1, Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining", "", ""),
    ({"a": "n1"}, 3, 2, Code.SUCCESS, "", "a", "a"),
    ({"a": "-"}, 3, 3, Code.UNSCHEDULABLE, "no pods were schedulable", "a", ""),
    ({"a": "n1", "b": "r", "c": "n1"}, 3, 0, Code.UNSCHEDULABLE,
     "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining", "ab", ""),
    ({"a": "n1", "b": "!", "c": "n1"}, 2, 0, Code.ERROR,
     'failed to schedule other pod from a pod group: running "X" filter plugin: boom', "ab", ""),
], ids=["gang-fits", "last-member-misses", "first-miss-ends-it-early", "extra-member-may-miss",
        "basic-nothing-fits", "basic-one-fits", "quorum-out-of-reach-before-filter", "bound-members-count",
        "extras-only-none-fit", "reserve-failure-counts-as-a-miss", "error-stops-the-group"])
def test_group_algorithm(outcomes: dict[str, str], min_count: int, scheduled: int, code: Code, message: str,
                         tried: str, kept: str) -> None:
    members = _Members(outcomes)
    result = run_group_algorithm(_infos(*outcomes), min_count, scheduled, members)
    assert (result.status.code, result.status.message) == (code, message)
    assert "".join(members.tried) == tried
    assert "".join(members.assumed) == kept   # a failed group has reverted every assumption
    assert len(result.reverts) == len(kept)


def test_members_show_their_own_failure_or_the_groups() -> None:
    members = _Members({"a": "n1", "b": "-"})
    result = run_group_algorithm(_infos("a", "b"), 2, 0, members)
    fitted, missed = result.members
    assert member_message(result, fitted) == "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    assert member_message(result, missed) == NO_FIT


def _member(name: str, scheduler: str = "default-scheduler", priority: int | None = None) -> dict[str, Any]:
    p = pod(name, priority=priority)
    p["spec"]["schedulerName"] = scheduler
    return p


@pytest.mark.parametrize(("group_priority", "members", "want"), [
    (0, [_member("a"), _member("b")], ""),
    (0, [_member("a"), _member("b", "other")],
     'all pods in a pod group hierarchy should have the same .spec.schedulerName set, '
     'got: "other" ("b") and "default-scheduler" ("a")'),
    (100, [_member("a", priority=100), _member("b", priority=5)],
     'all pods in a pod group hierarchy should have the same priority as the root pod group\'s priority, '
     'got 5 ("b") and 100 ("podgroup/default/trio")'),
    (None, [_member("a", priority=7), _member("b", priority=7)], ""),
], ids=["valid", "scheduler-name-mismatch", "priority-mismatch", "workload-takes-first-pod-priority"])
def test_validate_group(group_priority: int | None, members: list[dict[str, Any]], want: str) -> None:
    assert validate_group(PodGroupInstance("default", "trio"), group_priority, members) == want
