"""Scheduling queue: ordering, backoff with an injected clock, gating, event-driven requeue, pod-group entities."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
    unresolvable,
)
from fakeapi.scheduler.queue.entities import QueuedGroupInfo
from fakeapi.scheduler.queue.scheduling_queue import SchedulingQueue
from fakeapi.scheduler.rules.podgroups import pod_group_instance

from .builders import pod

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
CLAIM_UPDATE = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.UPDATE)


class Clock:
    """Time that moves only when the test sets ``t``; timers are never needed by ``pop_nowait``."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    def call_later(self, delay: float, callback: Any) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, callback)


def _queue(clock: Clock, gate: Any = None, **kwargs: Any) -> SchedulingQueue:
    q = SchedulingQueue(gate or (lambda p: SUCCESS), clock, initial_backoff=1.0, max_backoff=10.0,
                        **kwargs)
    q.register_events([
        ("NodeAffinity", ClusterEventWithHint(NODE_ADD)),
        ("DynamicResources", ClusterEventWithHint(
            CLAIM_UPDATE, lambda p, old, new: QueueingHint.QUEUE if new.get("helps") else QueueingHint.SKIP)),
    ])
    return q


def _name(info: Any) -> str:
    return info.pod["metadata"]["name"]


@pytest.mark.parametrize(("attempts", "want"), [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0),
                                                (30, 10.0)],
                         ids=["none", "first", "second", "third", "fourth", "capped", "long-capped"])
def test_backoff_duration(attempts: int, want: float) -> None:
    assert _queue(Clock()).backoff_duration(attempts) == want


def test_priority_then_fifo() -> None:
    clock = Clock()
    q = _queue(clock)
    for name, prio in (("low", 0), ("high", 10), ("low2", 0)):
        q.add(pod(name, priority=prio))
        clock.t += 1
    assert [_name(q.pop_nowait()) for _ in range(3)] == ["high", "low", "low2"]
    assert q.pop_nowait() is None


def test_error_backs_off_and_is_not_popped_early() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    info = q.pop_nowait()
    q.add_unschedulable(info)            # an error: no rejecting plugin
    assert q.stats()["backoff"] == 1
    assert q.pop_nowait() is None        # an error backoff is always waited out
    clock.t += 1.0
    assert _name(q.pop_nowait()) == "a"


def test_rejected_pod_waits_for_a_registered_event() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    info = q.pop_nowait()
    q.add_unschedulable(info, {"NodeAffinity"})
    assert q.stats()["unschedulable"] == 1
    clock.t += 60
    q.on_event(CLAIM_UPDATE, None, {"helps": True})   # registered by another plugin: ignored
    assert q.pop_nowait() is None
    q.on_event(NODE_ADD, None, {})
    assert _name(q.pop_nowait()) == "a"


def test_queueing_hint_decides() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    q.add_unschedulable(q.pop_nowait(), {"DynamicResources"})
    q.on_event(CLAIM_UPDATE, {}, {"helps": False})
    assert q.stats()["unschedulable"] == 1
    q.on_event(CLAIM_UPDATE, {}, {"helps": True})
    assert q.stats()["unschedulable"] == 0


def test_moved_pod_in_backoff_is_popped_early_when_idle() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    q.add_unschedulable(q.pop_nowait(), {"NodeAffinity"})
    q.on_event(NODE_ADD)
    assert q.stats()["backoff"] == 1      # still within its 1 s backoff
    assert _name(q.pop_nowait()) == "a"   # nothing else active: taken anyway (SchedulerPopFromBackoffQ)


def test_event_while_in_flight_is_replayed() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    info = q.pop_nowait()
    q.on_event(CLAIM_UPDATE, {}, {"helps": True})   # arrives during the attempt
    q.add_unschedulable(info, {"DynamicResources"})
    assert q.stats()["unschedulable"] == 0 and q.stats()["backoff"] == 1


def test_unrelated_in_flight_event_does_not_requeue() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    info = q.pop_nowait()
    q.on_event(CLAIM_UPDATE, {}, {"helps": False})
    q.add_unschedulable(info, {"DynamicResources"})
    assert q.stats()["unschedulable"] == 1


def test_gated_pod_rechecked_on_event_and_update() -> None:
    clock = Clock()
    ready: set[str] = set()

    def gate(p: dict[str, Any]) -> Status:
        return SUCCESS if p["metadata"]["name"] in ready else unresolvable("DynamicResources", "not yet")

    q = _queue(clock, gate)
    q.add(pod("a", uid="a"))
    assert q.stats()["gated"] == 1 and q.pop_nowait() is None
    ready.add("a")
    q.on_event(CLAIM_UPDATE, {}, {"helps": False})    # hint says no: stays gated
    assert q.pop_nowait() is None
    q.update(pod("a", uid="a"))                        # a pod update re-runs PreEnqueue
    assert _name(q.pop_nowait()) == "a"


def test_an_event_looks_only_at_pods_held_back_by_plugins_registered_for_it() -> None:
    """Thousands of pods waiting for their claims must not make every node event cost O(pods)."""
    clock = Clock()
    asked: list[str] = []

    def hint(p: dict[str, Any], old: Any, new: Any) -> QueueingHint:
        asked.append(p["metadata"]["name"])
        return QueueingHint.QUEUE if new.get("helps") else QueueingHint.SKIP

    q = SchedulingQueue(lambda p: unresolvable("DynamicResources", "no claim yet") if p["metadata"]["name"] != "fit"
                        else SUCCESS, clock)
    q.register_events([("NodeAffinity", ClusterEventWithHint(NODE_ADD)),
                       ("DynamicResources", ClusterEventWithHint(CLAIM_UPDATE, hint))])
    for i in range(50):
        q.add(pod(f"gated-{i}", uid=f"gated-{i}"))
    q.add(pod("fit", uid="fit"))
    q.add_unschedulable(q.pop_nowait(), {"NodeAffinity"})
    q.on_event(NODE_ADD, None, {})
    assert asked == [] and q.stats()["unschedulable"] == 0 and q.stats()["gated"] == 50
    q.on_event(CLAIM_UPDATE, {}, {"helps": False})
    assert sorted(asked) == sorted(f"gated-{i}" for i in range(50))


def test_gated_only_narrows_the_gated_pods_alone() -> None:
    """A freed device: every pod rejected for want of devices may fit now, but of the pods held
    at PreEnqueue only those referencing the claim can pass."""
    clock = Clock()
    asked: list[str] = []

    def hint(p: dict[str, Any], old: Any, new: Any) -> QueueingHint:
        asked.append(p["metadata"]["name"])
        return QueueingHint.QUEUE

    q = SchedulingQueue(lambda p: SUCCESS if p["metadata"]["name"] == "rejected"
                        else unresolvable("DynamicResources", "no claim yet"), clock)
    q.register_events([("DynamicResources", ClusterEventWithHint(CLAIM_UPDATE, hint))])
    for name in ("rejected", "user", "other"):
        q.add(pod(name, uid=name))
    q.add_unschedulable(q.pop_nowait(), {"DynamicResources"})
    q.on_event(CLAIM_UPDATE, {}, {}, None, gated_only=["user"])
    assert sorted(asked) == ["rejected", "user"]


def test_rejected_group_is_filed_under_every_plugin_that_rejected_a_member() -> None:
    clock = Clock()
    q, _ = _group_queue(clock, quorum=1)
    q.add_member(member("a"))   # type: ignore[attr-defined]
    q.add_member(member("b"))   # type: ignore[attr-defined]
    group = q.pop_nowait()
    assert isinstance(group, QueuedGroupInfo)
    a, b = group.infos()
    q.requeue_group(group, [b], {"Other"})             # a went to binding, b was rejected by Other
    q.add_unschedulable(a, {"NodeAffinity"})           # a's binding failed: NodeAffinity too
    assert q.stats()["unschedulable"] == 1
    q.on_event(NODE_ADD)
    assert q.stats()["unschedulable"] == 0


def test_only_restricts_candidates() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a", uid="a"))
    q.add(pod("b", uid="b"))
    for _ in range(2):
        q.add_unschedulable(q.pop_nowait(), {"DynamicResources"})
    q.on_event(CLAIM_UPDATE, {}, {"helps": True}, only=["b"])
    assert _name(q.pop_nowait()) == "b"
    assert q.pop_nowait() is None


def test_long_unschedulable_pods_are_flushed() -> None:
    clock = Clock()
    q = _queue(clock, max_unschedulable=300.0)
    q.add(pod("a"))
    q.add_unschedulable(q.pop_nowait(), {"NodeAffinity"})
    clock.t += 299
    assert q.pop_nowait() is None
    clock.t += 1
    assert _name(q.pop_nowait()) == "a"


def test_deleted_pod_is_dropped_everywhere() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a", uid="a"))
    q.delete("a")
    assert q.pop_nowait() is None and "a" not in q


async def test_pop_wakes_up_on_add() -> None:
    q = _queue(Clock())
    waiter = asyncio.ensure_future(q.pop())
    await asyncio.sleep(0)
    q.add(pod("a"))
    info = await asyncio.wait_for(waiter, 1.0)
    assert _name(info) == "a"


# --- pod-group entities ------------------------------------------------------------------------------

GROUP_GATE = "GangScheduling"


def member(name: str, group: str = "trio", **kwargs: Any) -> dict[str, Any]:
    p = pod(name, uid=name, **kwargs)
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


class _Groups:
    """A group gate that opens once ``quorum`` members were added (as GangScheduling counts them)."""

    def __init__(self, quorum: int) -> None:
        self.quorum = quorum
        self.seen: set[str] = set()

    def gate(self, group: QueuedGroupInfo) -> Status:
        return SUCCESS if len(self.seen) >= self.quorum else unresolvable(GROUP_GATE, "waiting for minCount pods")


def _group_queue(clock: Clock, quorum: int = 2, gate: Any = None) -> tuple[SchedulingQueue, _Groups]:
    groups = _Groups(quorum)
    q = SchedulingQueue(gate or (lambda p: SUCCESS), clock, group_of=pod_group_instance, group_gate=groups.gate,
                        initial_backoff=1.0, max_backoff=10.0)
    q.register_events([("NodeAffinity", ClusterEventWithHint(NODE_ADD))])

    def add(p: dict[str, Any]) -> None:
        groups.seen.add(p["metadata"]["uid"])
        q.add(p)
    q.add_member = add   # type: ignore[attr-defined]
    return q, groups


def _names(entity: Any) -> list[str]:
    return [i.pod["metadata"]["name"] for i in entity.infos()]


def test_group_is_popped_once_with_every_member_after_its_quorum() -> None:
    clock = Clock()
    q, _ = _group_queue(clock)
    q.add_member(member("a"))   # type: ignore[attr-defined]
    assert q.stats()["gated"] == 1 and q.pop_nowait() is None
    clock.t += 1
    q.add_member(member("b"))   # type: ignore[attr-defined]
    group = q.pop_nowait()
    assert isinstance(group, QueuedGroupInfo) and _names(group) == ["a", "b"]
    assert q.pop_nowait() is None


def test_members_are_ordered_by_priority_then_arrival() -> None:
    clock = Clock()
    q, _ = _group_queue(clock, quorum=3)
    for name, prio in (("low", 0), ("high", 5), ("low2", 0)):
        q.add_member(member(name, priority=prio))   # type: ignore[attr-defined]
        clock.t += 1
    assert _names(q.pop_nowait()) == ["high", "low", "low2"]


def test_one_gated_member_holds_the_group_back() -> None:
    clock = Clock()
    ready = {"a"}
    q, _ = _group_queue(clock, gate=lambda p: SUCCESS if p["metadata"]["name"] in ready
                        else unresolvable("DynamicResources", "claim not created yet"))
    q.register_events([("DynamicResources", ClusterEventWithHint(CLAIM_UPDATE))])
    q.add_member(member("a"))   # type: ignore[attr-defined]
    q.add_member(member("b"))   # type: ignore[attr-defined]
    assert q.pop_nowait() is None and q.stats()["gated"] == 1
    ready.add("b")
    q.on_event(CLAIM_UPDATE, {}, {}, only=["b"])
    assert _names(q.pop_nowait()) == ["a", "b"]


def test_member_arriving_in_flight_waits_and_joins_after_the_attempt() -> None:
    clock = Clock()
    q, _ = _group_queue(clock)
    for name in ("a", "b"):
        q.add_member(member(name))   # type: ignore[attr-defined]
    group = q.pop_nowait()
    assert isinstance(group, QueuedGroupInfo)
    q.add_member(member("c"))   # type: ignore[attr-defined]
    assert q.pop_nowait() is None   # never scheduled alone
    q.requeue_group(group, group.infos(), {"NodeAffinity"})
    assert q.stats()["unschedulable"] == 1
    q.on_event(NODE_ADD)
    assert _names(q.pop_nowait()) == ["a", "b", "c"]


def test_placed_members_leave_and_a_failed_binding_rejoins_the_group() -> None:
    clock = Clock()
    q, _ = _group_queue(clock, quorum=1)
    for name in ("a", "b"):
        q.add_member(member(name))   # type: ignore[attr-defined]
    group = q.pop_nowait()
    assert isinstance(group, QueuedGroupInfo)
    a, b = group.infos()
    q.requeue_group(group, [b], {"NodeAffinity"})    # a went to binding
    assert _names(group) == ["b"] and q.stats()["in_flight"] == 1
    q.add_unschedulable(a, {"NodeAffinity"})         # a's binding failed
    assert sorted(_names(group)) == ["a", "b"] and q.stats() == {
        "active": 0, "backoff": 0, "unschedulable": 1, "gated": 0, "in_flight": 0}


def test_new_member_moves_a_parked_group() -> None:
    clock = Clock()
    q, _ = _group_queue(clock)
    for name in ("a", "b"):
        q.add_member(member(name))   # type: ignore[attr-defined]
    group = q.pop_nowait()
    q.requeue_group(group, group.infos(), {"NodeAffinity"})   # type: ignore[arg-type]
    q.add_member(member("c"))   # type: ignore[attr-defined]
    assert _names(q.pop_nowait()) == ["a", "b", "c"]


def test_arrivals_name_each_member_once_since_the_last_take() -> None:
    """What the scheduler explains to a gated gang's members: each arrival once, a member that
    rejoins after a failed binding again, members in flight only once they join."""
    clock = Clock()
    q, _ = _group_queue(clock, quorum=4)   # counts every add: "gone" too
    q.add_member(member("a"))   # type: ignore[attr-defined]
    q.add_member(member("b"))   # type: ignore[attr-defined]
    q.add_member(member("gone"))   # type: ignore[attr-defined]
    [group] = q._gated.values()
    assert isinstance(group, QueuedGroupInfo)
    q.delete("gone")
    assert group.take_arrivals() == ["a", "b"] and group.take_arrivals() == []
    q.add_member(member("c"))   # type: ignore[attr-defined]
    popped = q.pop_nowait()
    assert popped is group and group.take_arrivals() == ["c"]
    q.add_member(member("d"))   # type: ignore[attr-defined]   # in flight: pending
    assert group.take_arrivals() == []
    a, b, c = group.infos()
    q.requeue_group(group, [b, c], {"NodeAffinity"})   # a went to binding, d joins
    assert group.take_arrivals() == ["d"]
    q.add_unschedulable(a, {"NodeAffinity"})   # a's binding failed: it rejoins
    assert group.take_arrivals() == ["a"]


def test_deleting_every_member_drops_the_group() -> None:
    clock = Clock()
    q, _ = _group_queue(clock, quorum=1)
    q.add_member(member("a"))   # type: ignore[attr-defined]
    q.delete("a")
    assert q.pop_nowait() is None and q.stats()["active"] == 0


@pytest.mark.parametrize(("attempts", "size", "want"), [(1, 4, 1.0), (5, 1, 10.0), (5, 4, 16.0), (6, 4, 20.0)],
                         ids=["first", "single-capped", "group-of-4-below-cap", "group-of-4-capped"])
def test_group_backoff_cap_grows_with_the_square_root_of_its_size(attempts: int, size: int, want: float) -> None:
    assert _queue(Clock()).backoff_duration(attempts, size) == want
