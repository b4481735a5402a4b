"""Scheduler host selection: percentage of nodes, deferred (costly) filters in score order."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from types import SimpleNamespace
from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, Code, Status, error, unresolvable
from fakeapi.scheduler.framework.runtime import Framework
from fakeapi.scheduler.scheduler import LONG_CYCLE, Scheduler
from fakeapi.scheduler.snapshot import NodeInfo

from fakeapi.config import FeatureGates

from .builders import node, pod


class _Lister:
    def get(self, namespace: Any, name: str) -> None:
        return None

    def list(self, namespace: Any = None) -> list[Any]:
        return []

    def by_index(self, index: str, value: str) -> list[Any]:
        return []


class _Informer:
    lister = _Lister()

    def add_event_handler(self, *handlers: Any) -> None:
        pass

    def add_index(self, name: str, fn: Any) -> None:
        pass


class _Factory:
    def informer(self, gvr: Any) -> _Informer:
        return _Informer()


class _Recorder:
    def event(self, *args: Any, **kwargs: Any) -> None:
        pass


class _Rejects:
    """A filter rejecting the named nodes; ``deferred`` marks it costly."""

    def __init__(self, name: str, rejected: set[str], *, deferred: bool = False, fail: str = "") -> None:
        self.name = name
        self.rejected = rejected
        self.deferred = deferred
        self.fail = fail
        self.seen: list[str] = []

    def filter(self, state: CycleState, p: dict[str, Any], info: NodeInfo) -> Status:
        self.seen.append(info.name)
        if info.name == self.fail:
            return error(self.name, "boom")
        return unresolvable(self.name, f"{self.name} says no") if info.name in self.rejected else SUCCESS


class _ScoreByName:
    """Higher score for later names: n9 > n8 > ..."""

    name = "Score"
    weight = 1

    def score(self, state: CycleState, p: dict[str, Any], info: NodeInfo) -> int:
        return int(info.name[1:])


def _scheduler(*plugins: Any, nodes: int = 10, percentage: int = 0) -> Scheduler:
    sched = Scheduler(None, _Factory(), FeatureGates(), _Recorder(),  # type: ignore[arg-type]
                      percentage_of_nodes_to_score=percentage)
    sched.framework = Framework(list(plugins))
    for i in range(nodes):
        sched.nodes.set_node(node(f"n{i}"))
    return sched


def _find(sched: Scheduler) -> tuple[str | None, dict[str, Status], Status | None]:
    return sched._find_node(CycleState(), pod(), sched.nodes.nodes())


def test_best_scoring_feasible_node_wins() -> None:
    sched = _scheduler(_Rejects("Cheap", {"n9"}), _ScoreByName())
    chosen, statuses, failed = _find(sched)
    assert (chosen, failed) == ("n8", None)
    assert set(statuses) == {"n9"}


def test_deferred_filter_runs_in_score_order_and_stops_at_first_pass() -> None:
    costly = _Rejects("Costly", {"n9", "n8"}, deferred=True)
    sched = _scheduler(_Rejects("Cheap", {"n0"}), costly, _ScoreByName())
    chosen, statuses, _ = _find(sched)
    assert chosen == "n7"
    assert costly.seen == ["n9", "n8", "n7"]
    assert {k: s.plugin for k, s in statuses.items()} == {"n0": "Cheap", "n8": "Costly", "n9": "Costly"}


def test_all_rejected_gives_a_status_per_node() -> None:
    sched = _scheduler(_Rejects("Cheap", {"n0", "n1"}), _Rejects("Costly", {f"n{i}" for i in range(10)},
                                                                   deferred=True), _ScoreByName())
    chosen, statuses, _ = _find(sched)
    assert chosen is None and len(statuses) == 10


def test_deferred_error_aborts() -> None:
    sched = _scheduler(_Rejects("Costly", set(), deferred=True, fail="n9"), _ScoreByName())
    chosen, _, failed = _find(sched)
    assert chosen is None and failed is not None and failed.code == Code.ERROR


@pytest.mark.parametrize(("percentage", "want_seen"), [(0, 100), (100, 150)], ids=["adaptive-min-100", "all"])
def test_filtering_stops_after_enough_feasible_nodes(percentage: int, want_seen: int) -> None:
    cheap = _Rejects("Cheap", set())
    sched = _scheduler(cheap, _ScoreByName(), nodes=150, percentage=percentage)
    _find(sched)
    assert len(cheap.seen) == want_seen


def test_start_index_rotates_between_cycles() -> None:
    cheap = _Rejects("Cheap", set())
    sched = _scheduler(cheap, nodes=200)
    _find(sched)
    first = cheap.seen[0]
    cheap.seen.clear()
    _find(sched)
    assert cheap.seen[0] != first


class _ScoreByGroup:
    """n0-n4 score 10, n5-n9 score 20: two groups of ties."""

    name = "Score"
    weight = 1

    def score(self, state: CycleState, p: dict[str, Any], info: NodeInfo) -> int:
        return 20 if int(info.name[1:]) >= 5 else 10


def test_deferred_filter_visits_every_tied_candidate_once_best_group_first() -> None:
    costly = _Rejects("Costly", {f"n{i}" for i in range(10)}, deferred=True)
    sched = _scheduler(costly, _ScoreByGroup())
    orders = set()
    for _ in range(20):
        costly.seen.clear()
        _find(sched)
        visited = costly.seen[:10]
        assert sorted(visited[:5]) == [f"n{i}" for i in range(5, 10)]
        assert sorted(visited[5:]) == [f"n{i}" for i in range(5)]
        orders.add(tuple(visited))
    assert len(orders) > 1   # ties are taken in random order


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_the_best_score_is_chosen_among_its_ties_at_random(indexed: bool) -> None:
    sched = _scheduler(_Labelled(), _SignedScore(), nodes=20)   # every node in every window
    sched._search._index_from = 0 if indexed else 1 << 30
    assert {_find(sched)[0] for _ in range(40)} == {"n6", "n13"}   # the two that score 6


async def test_scheduler_loop_lets_the_control_plane_run_between_cycles() -> None:
    """Queued pods are popped without waiting; the loop still yields after every cycle, so the
    controllers sharing the event loop keep working through a long queue."""
    sched = _scheduler(nodes=1)

    async def synced() -> None:
        pass

    sched._factory = SimpleNamespace(wait_for_cache_sync=synced)  # type: ignore[assignment]
    others = 0
    seen: list[int] = []
    done = asyncio.Event()

    def cycle(info: Any) -> None:
        seen.append(others)
        if len(seen) == 20:
            done.set()

    sched.schedule_one = cycle  # type: ignore[method-assign]
    for i in range(20):
        sched.queue.add(pod(f"p{i}", uid=f"p{i}"))

    async def other_controller() -> None:
        nonlocal others
        while True:
            others += 1
            await asyncio.sleep(0)

    tasks = [asyncio.create_task(sched.run()), asyncio.create_task(other_controller())]
    try:
        await asyncio.wait_for(done.wait(), 5)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert all(later > earlier for earlier, later in itertools.pairwise(seen))


async def test_after_a_long_cycle_the_scheduler_leaves_the_loop_to_the_others() -> None:
    """A controller whose work item takes several loop turns (a request and its answer, then the
    next) finishes it after one long scheduling cycle, not after as many cycles as it has turns."""
    sched = _scheduler(nodes=1)

    async def synced() -> None:
        pass

    sched._factory = SimpleNamespace(wait_for_cache_sync=synced)  # type: ignore[assignment]
    cycles = 0

    def long_cycle(info: Any) -> None:   # a pod that fits nowhere among many nodes
        nonlocal cycles
        cycles += 1
        until = time.perf_counter() + 2 * LONG_CYCLE
        while time.perf_counter() < until:
            pass

    sched.schedule_one = long_cycle  # type: ignore[method-assign]
    for i in range(50):
        sched.queue.add(pod(f"p{i}", uid=f"p{i}"))

    async def work_item() -> int:
        for _ in range(20):
            await asyncio.sleep(0)
        return cycles

    scheduling = asyncio.create_task(sched.run())
    try:
        await asyncio.sleep(0)   # the first cycle starts
        assert await asyncio.wait_for(work_item(), 5) <= 2
    finally:
        scheduling.cancel()
        await asyncio.gather(scheduling, return_exceptions=True)


class _Labelled:
    """An eager Filter that signs pods: rejects the nodes labelled ``full``."""

    name = "Labelled"

    def sign(self, p: dict[str, Any]) -> str:
        return "any pod"

    def filter(self, state: CycleState, p: dict[str, Any], info: NodeInfo) -> Status:
        full = (info.node or {})["metadata"]["labels"].get("full")
        return unresolvable(self.name, "node is full") if full else SUCCESS


class _SignedScore:
    """Scores that tie in groups (a node's number modulo 7), so ties are broken at random."""

    name = "Score"
    weight = 1

    def sign(self, p: dict[str, Any]) -> str:
        return "any pod"

    def score(self, state: CycleState, p: dict[str, Any], info: NodeInfo) -> int:
        return int(info.name[1:]) % 7


def _deferred_history(indexed: bool, seed: int) -> list[tuple[Any, ...]]:
    """A deferred Filter rejecting a changing set of nodes over 300 nodes whose labels change
    between cycles: per cycle the node chosen, the start after it and, when none fits, every
    rejection."""
    rng = random.Random(seed)
    costly = _Rejects("Costly", set(), deferred=True)
    sched = _scheduler(_Labelled(), costly, _SignedScore(), nodes=300)
    sched._search._index_from = 0 if indexed else 1 << 30
    history: list[tuple[Any, ...]] = []
    for cycle in range(300):
        for _ in range(rng.randrange(4)):
            name = f"n{rng.randrange(300)}"
            sched.nodes.set_node(node(name, labels={"full": "yes"} if rng.random() < 0.7 else {}))
        costly.rejected = {f"n{i}" for i in range(300) if rng.random() < (0.999 if cycle % 25 == 0 else 0.6)}
        random.seed(cycle)
        chosen, statuses, failed = _find(sched)
        rejected = {name: status.plugin for name, status in statuses.items()} if chosen is None else None
        history.append((chosen, failed, rejected, sched._search.next_start))
    assert indexed == any(table.index is not None for table in sched._search._fit_memo._tables.values())
    return history


@pytest.mark.parametrize("seed", range(3))
def test_deferred_filters_choose_alike_with_the_index_and_the_scan(seed: int) -> None:
    history = _deferred_history(True, seed)
    assert history == _deferred_history(False, seed)
    assert any(chosen is None for chosen, *_ in history) and any(chosen for chosen, *_ in history)
