"""GangScheduling: pure policy helpers, and the plugin against fake members/waiting pods (no server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, ActionType, ClusterEvent, Code, EventResource, QueueingHint
from fakeapi.scheduler.framework.runtime import WaitingPod
from fakeapi.scheduler.plugins.gang import (
    NAME,
    WAITING_FOR_PODS,
    WAITING_ON_PERMIT,
    GangScheduling,
    condition_update_needed,
    gang_min_count,
    missing_group_message,
    placement_feasible,
)
from fakeapi.scheduler.queue import SchedulingQueue
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

class _Api:
    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []

    async def patch(self, gvr: Any, namespace: str, name: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.patches.append((name, body))
        return {}


class _Cluster:
    """What the scheduler hands the plugin: groups, observed members, waiting pods, activation."""

    def __init__(self, group: dict[str, Any] | None, members: list[dict[str, Any]], timeout: float = 60.0) -> None:
        self.group = group
        self.members = members
        self.waiting: dict[str, WaitingPod] = {}
        self.activated: list[str] = []
        self.api = _Api()
        self.plugin = GangScheduling(self.api, lambda _: self.group, lambda _: self.members,  # type: ignore[arg-type]
                                     self.waiting.get, self.activated.extend, timeout=timeout)

    def reserve_and_permit(self, p: dict[str, Any]) -> tuple[Code, float]:
        assert self.plugin.reserve(CycleState(), p, "n1") == SUCCESS
        status, timeout = self.plugin.permit(CycleState(), p, "n1")
        if status.code == Code.WAIT:
            assert status.message == WAITING_ON_PERMIT
            self.waiting[p["metadata"]["uid"]] = WaitingPod(p, {NAME: timeout})
        return status.code, timeout

    async def settle(self) -> None:
        await asyncio.gather(*self.plugin._tasks)


@pytest.mark.parametrize(("group", "members", "want"), [
    (pod_group(3), [member("a"), member("b")], WAITING_FOR_PODS),
    (pod_group(3), [member("a"), member("b"), member("c", node="n1")], ""),
    (pod_group(None), [member("a")], ""),
    (None, [member("a")], 'waiting for pod\'s pod group "trio" to appear in scheduling queue'),
], ids=["below-min-count", "bound-member-counts", "basic", "group-missing"])
async def test_pre_enqueue(group: dict[str, Any] | None, members: list[dict[str, Any]], want: str) -> None:
    status = _Cluster(group, members).plugin.pre_enqueue(members[0])
    assert status.message == want
    assert status.code == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if want else Code.SUCCESS)


async def test_pod_without_group_is_ignored() -> None:
    cluster = _Cluster(None, [])
    assert cluster.plugin.pre_enqueue(pod("loner")) == SUCCESS
    assert cluster.plugin.permit(CycleState(), pod("loner"), "n1") == (SUCCESS, 0.0)


async def test_quorum_allows_every_waiting_member() -> None:
    a, b, c = member("a"), member("b"), member("c")
    cluster = _Cluster(pod_group(3), [a, b, c])
    code, timeout = cluster.reserve_and_permit(a)
    assert code == Code.WAIT and 0 < timeout <= 60.0
    assert cluster.activated == ["uid-b", "uid-c"]   # the others get their attempt now
    assert cluster.reserve_and_permit(b)[0] == Code.WAIT
    assert cluster.reserve_and_permit(c)[0] == Code.SUCCESS
    assert [await w.wait() for w in cluster.waiting.values()] == [SUCCESS, SUCCESS]
    await cluster.settle()
    ((name, body),) = cluster.api.patches
    assert name == "trio" and body["status"]["conditions"][0]["status"] == "True"


async def test_unreserve_stops_counting_and_bound_members_count() -> None:
    a, b = member("a"), member("b")
    cluster = _Cluster(pod_group(2), [a, b])
    assert cluster.reserve_and_permit(a)[0] == Code.WAIT
    cluster.plugin.unreserve(CycleState(), a, "n1")
    assert cluster.reserve_and_permit(b)[0] == Code.WAIT   # a no longer counts
    cluster.members = [{**a, "spec": {**a["spec"], "nodeName": "n1"}}, b]
    assert cluster.reserve_and_permit(b)[0] == Code.SUCCESS   # a bound meanwhile


async def test_deadline_rejects_the_waiting_gang() -> None:
    a, b, c = member("a"), member("b"), member("c")
    cluster = _Cluster(pod_group(3), [a, b, c], timeout=0.01)
    cluster.reserve_and_permit(a)
    cluster.reserve_and_permit(b)
    statuses = [await w.wait() for w in cluster.waiting.values()]
    assert {(s.code, s.plugin, s.message) for s in statuses} == {
        (Code.UNSCHEDULABLE, NAME, "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining")}
    await cluster.settle()
    ((_, body),) = cluster.api.patches
    assert body["status"]["conditions"][0] | {"lastTransitionTime": None} == {
        "type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
        "message": "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", "observedGeneration": 1,
        "lastTransitionTime": None}


async def test_basic_group_is_scheduled_at_first_pod_and_true_is_not_rewritten() -> None:
    a = member("a")
    cluster = _Cluster(pod_group(None, conditions=[condition("True", "Scheduled")]), [a])
    assert cluster.reserve_and_permit(a) == (Code.SUCCESS, 0.0)
    await cluster.settle()
    assert cluster.api.patches == []


async def test_workload_gang_has_no_status_to_write() -> None:
    w1 = pod("w1", uid="uid-w1")
    w1["spec"]["workloadRef"] = {"name": "job", "podGroup": "workers", "podGroupReplicaKey": "r1"}
    cluster = _Cluster(workload(1), [w1])
    assert cluster.reserve_and_permit(w1) == (Code.SUCCESS, 0.0)
    await cluster.settle()
    assert cluster.api.patches == []


@pytest.mark.parametrize(("event", "old", "new", "want"), [
    (ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), None, member("b"), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), None, member("x", "other"), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), None, pod_group(), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), None, pod_group(name="other"), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(3), pod_group(2), QueueingHint.QUEUE),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(2), pod_group(3), QueueingHint.SKIP),
    (ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), pod_group(3),
     pod_group(3, conditions=[condition("False")]), QueueingHint.SKIP),
], ids=["member-added", "stranger-added", "group-added", "other-group-added", "min-count-lowered",
        "min-count-raised", "status-only"])
async def test_queueing_hints(event: ClusterEvent, old: dict[str, Any] | None, new: dict[str, Any],
                              want: QueueingHint) -> None:
    plugin = _Cluster(pod_group(), []).plugin
    hints = [e.hint for e in plugin.events_to_register() if e.event.matches(event)]
    assert hints and all(h is not None for h in hints)
    assert [h(member("a"), old, new) for h in hints if h is not None] == [want]


async def test_queue_activate_skips_backoff_and_leaves_gated_pods() -> None:
    gated = pod("gated")
    queue = SchedulingQueue(lambda p: SUCCESS if p is not gated else placement_feasible(2, 0, 0),
                            initial_backoff=60.0)
    parked = pod("parked")
    queue.add(parked)
    queue.add(gated)
    info = queue.pop_nowait()
    assert info is not None and info.pod is parked
    queue.add_unschedulable(info, {"X"})
    queue.activate([parked["metadata"]["uid"], gated["metadata"]["uid"]])
    assert queue.stats()["gated"] == 1
    again = queue.pop_nowait()
    assert again is not None and again.pod is parked
