"""Scheduling queue: ordering, backoff with an injected clock, gating and event-driven requeue."""

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
from fakeapi.scheduler.queue import SchedulingQueue

from .builders import pod

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
CLAIM_UPDATE = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.UPDATE)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _queue(clock: Clock, gate: Any = None, **kwargs: Any) -> SchedulingQueue:
    q = SchedulingQueue(gate or (lambda p: SUCCESS), clock=clock, initial_backoff=1.0, max_backoff=10.0,
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
        clock.now += 1
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
    clock.now += 1.0
    assert _name(q.pop_nowait()) == "a"


def test_rejected_pod_waits_for_a_registered_event() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod("a"))
    info = q.pop_nowait()
    q.add_unschedulable(info, {"NodeAffinity"})
    assert q.stats()["unschedulable"] == 1
    clock.now += 60
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
    clock.now += 299
    assert q.pop_nowait() is None
    clock.now += 1
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
