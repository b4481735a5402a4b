"""GangScheduling: pure policy helpers, the group PreEnqueue and its hints; the PodGroup condition writer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeapi.scheduler.framework.interface import ActionType, ClusterEvent, Code, EventResource, QueueingHint
from fakeapi.scheduler.plugins.gang import (
    WAITING_FOR_PODS,
    GangScheduling,
    gang_min_count,
    missing_group_message,
    placement_feasible,
)
from fakeapi.scheduler.podgroup_status import PodGroupStatusWriter, condition_update_needed
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

from .builders import pod

PG = PodGroupInstance("default", "trio")
WL = PodGroupInstance("default", "workers", "job", "r1")


def pod_group(min_count: int | None = 3, *, name: str = "trio", conditions: list[dict[str, Any]] | None = None
              ) -> dict[str, Any]:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}", "generation": 1},
            "spec": {"schedulingPolicy": policy}, "status": {"conditions": conditions or []}}


def workload(min_count: int | None = 2, group: str = "workers") -> dict[str, Any]:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"metadata": {"name": "job", "namespace": "default"},
            "spec": {"podGroups": [{"name": group, "policy": policy}]}}


def member(name: str, group: str = "trio", *, node: str = "") -> dict[str, Any]:
    p = pod(name, uid=f"uid-{name}")
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    if node:
        p["spec"]["nodeName"] = node
    return p


def condition(status: str, reason: str = "Unschedulable", message: str = "") -> dict[str, Any]:
    return {"type": "PodGroupInitiallyScheduled", "status": status, "reason": reason, "message": message}


# --- pure helpers ------------------------------------------------------------------------------

@pytest.mark.parametrize(("group", "instance", "want"), [
    (pod_group(3), PG, 3),
    (pod_group(None), PG, None),
    (workload(2), WL, 2),
    (workload(None), WL, None),
], ids=["podgroup-gang", "podgroup-basic", "workload-gang", "workload-basic"])
def test_gang_min_count(group: dict[str, Any], instance: PodGroupInstance, want: int | None) -> None:
    assert gang_min_count(group, instance) == want


def test_gang_min_count_rejects_unknown_workload_group() -> None:
    with pytest.raises(ValueError, match='pod group "workers" doesn\'t exist for a workload "job"'):
        gang_min_count(workload(group="other"), WL)


@pytest.mark.parametrize(("instance", "want"), [
    (PG, 'waiting for pod\'s pod group "trio" to appear in scheduling queue'),
    (WL, 'waiting for pods\'s workload "job" to appear in scheduling queue'),
], ids=["podgroup", "workload"])
def test_missing_group_message(instance: PodGroupInstance, want: str) -> None:
    assert missing_group_message(instance) == want


@pytest.mark.parametrize(("scheduled", "remaining", "code", "message"), [
    (1, 0, Code.UNSCHEDULABLE, "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"),
    (1, 1, Code.WAIT, "minCount (2) is not yet satisfied: 1 scheduled, 1 remaining"),
    (2, 0, Code.SUCCESS, ""),
], ids=["out-of-reach", "wait", "quorum"])
def test_placement_feasible(scheduled: int, remaining: int, code: Code, message: str) -> None:
    status = placement_feasible(2, scheduled, remaining)
    assert (status.code, status.message) == (code, message)


@pytest.mark.parametrize(("conditions", "status", "reason", "message", "want"), [
    ([], "True", "Scheduled", "", True),
    ([condition("False", message="x")], "True", "Scheduled", "", True),
    ([condition("False", message="x")], "False", "Unschedulable", "x", False),
    ([condition("False", message="x")], "False", "Unschedulable", "y", True),
    ([condition("True", "Scheduled")], "False", "Unschedulable", "x", False),
], ids=["absent", "false-to-true", "unchanged", "new-message", "true-never-regresses"])
def test_condition_update_needed(conditions: list[dict[str, Any]], status: str, reason: str, message: str,
                                 want: bool) -> None:
    assert condition_update_needed(conditions, status, reason, message) is want


# --- the plugin ----------------------------------------------------------------------------------

def _plugin(group: dict[str, Any] | None, members: int) -> GangScheduling:
    return GangScheduling(lambda _: group, lambda _: members)


@pytest.mark.parametrize(("group", "instance", "members", "want"), [
    (pod_group(3), PG, 2, WAITING_FOR_PODS),
    (pod_group(3), PG, 3, ""),
    (pod_group(None), PG, 1, ""),
    (None, PG, 3, 'waiting for pod\'s pod group "trio" to appear in scheduling queue'),
    (workload(2), WL, 1, WAITING_FOR_PODS),
    (workload(group="other"), WL, 5, 'pod group "workers" doesn\'t exist for a workload "job"'),
], ids=["below-min-count", "quorum-observed", "basic", "group-missing", "workload-below-min-count",
        "workload-without-the-group"])
def test_pre_enqueue_group(group: dict[str, Any] | None, instance: PodGroupInstance, members: int,
                           want: str) -> None:
    status = _plugin(group, members).pre_enqueue_group(instance)
    assert status.message == want
    assert status.code == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if want else Code.SUCCESS)


@pytest.mark.parametrize(("event", "old", "new", "want"), [
    (ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), None, member("b"), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), None, member("b", node="n1"), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), None, member("x", "other"), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), None, pod_group(), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), None, pod_group(name="other"), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(3), pod_group(2), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(2), pod_group(3), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(3),
     pod_group(3, conditions=[condition("False")]), QueueingHint.SKIP),
], ids=["member-added", "bound-member-added", "stranger-added", "group-added", "other-group-added",
        "min-count-lowered", "min-count-raised", "status-only"])
def test_queueing_hints(event: ClusterEvent, old: dict[str, Any] | None, new: dict[str, Any],
                        want: QueueingHint) -> None:
    hints = [e.hint for e in _plugin(pod_group(), 0).events_to_register() if e.event.matches(event)]
    assert hints and all(h is not None for h in hints)
    assert [h(member("a"), old, new) for h in hints if h is not None] == [want]


# --- the PodGroup condition ------------------------------------------------------------------------

class _Api:
    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []

    async def patch(self, gvr: Any, namespace: str, name: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.patches.append((name, body))
        return {}


async def _written(group: dict[str, Any], instance: PodGroupInstance, *updates: tuple[str, str, str]
                   ) -> list[dict[str, Any]]:
    api = _Api()
    writer = PodGroupStatusWriter(api)  # type: ignore[arg-type]
    for status, reason, message in updates:
        writer.set(instance, group, status, reason, message)
    await asyncio.gather(*writer._tasks)
    return [body["status"]["conditions"][0] | {"lastTransitionTime": None} for _, body in api.patches]


async def test_unschedulable_condition_is_patched_with_observed_generation() -> None:
    message = "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
    assert await _written(pod_group(3), PG, ("False", "Unschedulable", message)) == [{
        "type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": message,
        "observedGeneration": 1, "lastTransitionTime": None}]


async def test_true_is_written_once_and_never_regresses() -> None:
    written = await _written(pod_group(3), PG, ("True", "Scheduled", ""), ("True", "Scheduled", ""))
    assert [c["status"] for c in written] == ["True"]
    already = pod_group(None, conditions=[condition("True", "Scheduled")])
    assert await _written(already, PG, ("False", "Unschedulable", "later extras did not fit")) == []


async def test_workload_gang_has_no_status_to_write() -> None:
    assert await _written(workload(1), WL, ("True", "Scheduled", "")) == []
