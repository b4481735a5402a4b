"""The scheduling queue's parts on their own: the keyed heap's lazy deletion, the backoff heaps,
the plugin-indexed waiting pool and the in-flight event log."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.framework.interface import ActionType, ClusterEvent, EventResource
from fakeapi.scheduler.queue.backoff_queue import BackoffQueue
from fakeapi.scheduler.queue.entities import QueuedGroupInfo, QueuedPodInfo
from fakeapi.scheduler.queue.in_flight import InFlight
from fakeapi.scheduler.queue.keyed_heap import KeyedHeap
from fakeapi.scheduler.queue.waiting_pool import WaitingPool, gating_plugins, rejecting_plugins
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


def _drain(heap: KeyedHeap) -> list[str]:
    keys = []
    while (key := heap.pop()) is not None:
        keys.append(key)
    return keys


@pytest.mark.parametrize(("ops", "want"), [
    ([("push", "a", 2), ("push", "b", 1), ("push", "c", 3)], ["b", "a", "c"]),
    ([("push", "a", 1), ("push", "b", 1), ("push", "c", 1)], ["a", "b", "c"]),
    ([("push", "a", 1), ("push", "b", 2), ("push", "a", 3)], ["b", "a"]),
    ([("push", "a", 1), ("push", "b", 2), ("discard", "a", 0)], ["b"]),
    ([("push", "a", 1), ("discard", "a", 0), ("push", "a", 5), ("push", "b", 4)], ["b", "a"]),
], ids=["by-rank", "fifo-among-equals", "re-push-supersedes", "discarded-skipped", "discard-then-push"])
def test_keyed_heap_pops_live_entries_in_rank_order(ops: list[tuple[str, str, int]], want: list[str]) -> None:
    heap = KeyedHeap()
    for op, key, rank in ops:
        heap.push(key, rank) if op == "push" else heap.discard(key)
    assert len(heap) == len(want) and all(key in heap for key in want)
    assert heap.first_rank() == min(rank for op, key, rank in ops if op == "push" and key == want[0])
    assert _drain(heap) == want and len(heap) == 0 and heap.first_rank() is None


def test_backoff_queue_keeps_rejections_and_errors_apart() -> None:
    q = BackoffQueue()
    q.push("rejected", 5.0)
    q.push("errored", 3.0, error=True)
    q.push("moved", 1.0)
    q.push("moved", 9.0, error=True)   # now backing off after an error: its rejection entry is dead
    assert len(q) == 3 and "moved" in q and q.next_expiry() == 3.0
    assert q.pop_early() == "rejected" and q.pop_early() is None   # errors are never taken early
    assert q.pop_expired(2.0) == [] and q.pop_expired(9.0) == ["errored", "moved"]
    assert len(q) == 0 and q.next_expiry() is None


def test_backoff_queue_pops_expired_rejections_first() -> None:
    q = BackoffQueue()
    q.push("e", 1.0, error=True)
    q.push("r", 2.0)
    q.push("gone", 0.5)
    q.discard("gone")
    assert q.pop_expired(2.0) == ["r", "e"]


def _pod(uid: str, gated_by: str = "", rejected_by: frozenset[str] = frozenset()) -> QueuedPodInfo:
    return QueuedPodInfo({"metadata": {"uid": uid}}, 0.0, gated_by=gated_by, rejected_by=rejected_by)


def test_waiting_pool_finds_entities_by_plugin_oldest_first() -> None:
    pool = WaitingPool(rejecting_plugins)
    a, b, c = (_pod("a", rejected_by=frozenset({"X"})), _pod("b", rejected_by=frozenset({"Y"})),
               _pod("c", rejected_by=frozenset({"X", "Y"})))
    for info in (a, b, c):
        pool.add(info)
    assert pool.candidates(["X"]) == [a, c] and pool.candidates(["Y", "X"]) == [a, b, c]
    a.rejected_by = frozenset({"Z"})
    pool.add(a)   # filed again under its new plugins, keeping its place
    assert pool.candidates(["X"]) == [c] and pool.candidates(["Z", "Y"]) == [a, b, c]
    assert pool.pop("c") is c and pool.pop("c") is None and pool.candidates(["Y"]) == [b]
    del pool["b"]
    assert list(pool.values()) == [a] and len(pool) == 1 and "b" not in pool
    with pytest.raises(KeyError):
        del pool["b"]


def test_gated_pool_looks_at_groups_on_every_event() -> None:
    pool = WaitingPool(gating_plugins)
    group = QueuedGroupInfo(PodGroupInstance("default", "g"), 0.0)
    pod = _pod("p", gated_by="DynamicResources")
    pool.add(group)
    pool.add(pod)
    assert pool.candidates([]) == [group] and pool.candidates(["DynamicResources"]) == [group, pod]


def test_in_flight_replays_only_events_since_a_pop_and_forgets_them_when_done() -> None:
    flight = InFlight()
    flight.record(NODE_ADD, None, "before-any-pop")   # nothing in flight: nothing to miss
    first, second = _pod("1"), _pod("2")
    flight.start(first)
    flight.record(NODE_ADD, None, "e1")
    flight.start(second)
    flight.record(NODE_ADD, None, "e2")
    assert "1" in flight and len(flight) == 2
    assert [new for _, _, new in flight.events_since(first.pop_seq)] == ["e1", "e2"]
    assert [new for _, _, new in flight.events_since(second.pop_seq)] == ["e2"]
    flight.done("1")   # e1 came before the oldest pod still in flight: no one needs it
    assert [new for _, _, new in flight.events_since(-1)] == ["e2"]
    flight.done("2")
    flight.done("2")   # twice is harmless
    assert list(flight.events_since(-1)) == [] and len(flight) == 0
