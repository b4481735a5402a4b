"""The fit memo: pods of one signature reuse Filter statuses and scores of nodes that did not
change, and every change to a node (its object, its pods, nominations) is seen at once, by the
scan of each window and by the index of fitting nodes that replaces it on large clusters."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.scheduler import Scheduler

from fakeapi.config import FeatureGates

from .builders import node, pod

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
ALLOC = {"cpu": "2", "memory": "8Gi", "pods": "10"}
BIG = {**ALLOC, "cpu": "4"}   # scores better: a node the memo would wrongly keep choosing


class _Recorder:
    def event(self, *args: Any, **kwargs: Any) -> None:
        pass


def _scheduler(*nodes: dict[str, Any], indexed: bool = False) -> Scheduler:
    """A scheduler over ``nodes``; ``indexed``: windows from a FitIndex however few the nodes
    (else a scan, as below ``INDEX_FROM`` nodes)."""
    sched = Scheduler(None, InformerFactory(None), FeatureGates(), _Recorder())  # type: ignore[arg-type]
    sched._search._index_from = 0 if indexed else 1 << 30
    for n in nodes:
        sched.nodes.set_node(n)
    return sched


def _place(sched: Scheduler, p: dict[str, Any]) -> tuple[str | None, str]:
    """One cycle up to host selection: (chosen node, the message when none fits)."""
    result = sched._schedule_pod(CycleState(), p, post_filter=False)
    return result.node, result.message


def _cpu(amount: str, **kw: Any) -> dict[str, Any]:
    return pod(requests={"cpu": amount}, **kw)


def _filtered(sched: Scheduler) -> list[str]:
    """The nodes the scheduler's Filter plugins run on from now on, in order."""
    seen: list[str] = []
    run = sched.framework._filter

    def counting(plugins: Any, state: Any, p: Any, info: Any) -> Any:
        seen.append(info.name)
        return run(plugins, state, p, info)

    sched.framework._filter = counting  # type: ignore[method-assign]
    return seen


def _scored(sched: Scheduler) -> list[str]:
    """The nodes the scheduler's Score plugins run on from now on, in order."""
    scored: list[str] = []
    run_score = sched.framework.run_score

    def scoring(state: Any, p: Any, infos: Any) -> Any:
        scored.extend(info.name for info in infos)
        return run_score(state, p, infos)

    sched.framework.run_score = scoring  # type: ignore[method-assign]
    return scored


# Each case: the cluster, a mutation made after a first pod of the signature was filtered and
# scored on every node, and where the next pod of the same signature must go (None: nowhere).
# The node the mutation turns away is the one that scored best before it.
Mutation = Callable[[Scheduler], Any]
CASES: dict[str, tuple[list[dict[str, Any]], Callable[[], dict[str, Any]], Mutation, str | None]] = {
    "node-tainted": ([node("n1", allocatable=BIG), node("n2", allocatable=ALLOC)], lambda: _cpu("100m"),
                     lambda s: s.nodes.set_node(node("n1", allocatable=BIG, taints=[TAINT])), "n2"),
    "node-cordoned": ([node("n1", allocatable=BIG), node("n2", allocatable=ALLOC)], lambda: _cpu("100m"),
                      lambda s: s.nodes.set_node(node("n1", allocatable=BIG, unschedulable=True)), "n2"),
    "node-labels-changed": ([node("n1", allocatable=ALLOC, labels={"zone": "a"}),
                             node("n2", allocatable=ALLOC, labels={"zone": "b"})],
                            lambda: pod(node_selector={"zone": "a"}),
                            lambda s: s.nodes.set_node(node("n1", allocatable=ALLOC, labels={"zone": "c"})), None),
    "allocatable-shrunk": ([node("n1", allocatable=ALLOC), node("n2", allocatable=BIG)], lambda: _cpu("1"),
                           lambda s: s.nodes.set_node(node("n2", allocatable={**ALLOC, "cpu": "500m"})), "n1"),
    "pod-assumed-fills-node": ([node("n1", allocatable=ALLOC), node("n2", allocatable=BIG)], lambda: _cpu("1"),
                               lambda s: s.nodes.assume_pod(_cpu("4", uid="big"), "n2"), "n1"),
    "last-fitting-node-shrunk": ([node("n1", allocatable=ALLOC), node("n2", allocatable={**ALLOC, "cpu": "1"})],
                                 lambda: _cpu("2"),
                                 lambda s: s.nodes.set_node(node("n1", allocatable={**ALLOC, "cpu": "1"})), None),
    "node-deleted-and-created-tainted": (
        [node("n1", allocatable=ALLOC), node("n2", allocatable=BIG)], lambda: _cpu("100m"),
        lambda s: (s.nodes.remove_node("n2"), s.nodes.set_node(node("n2", allocatable=BIG, taints=[TAINT]))), "n1"),
    "higher-priority-pod-nominated": ([node("n1", allocatable=ALLOC), node("n2", allocatable={**ALLOC, "cpu": "1"})],
                                      lambda: _cpu("1500m"),
                                      lambda s: s.nominator.nominate(_cpu("1", uid="pre", priority=10), "n1"), None),
}


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
@pytest.mark.parametrize(("nodes", "make_pod", "mutate", "want"), list(CASES.values()), ids=list(CASES))
def test_next_pod_of_a_signature_sees_every_node_change(nodes, make_pod, mutate, want, indexed) -> None:
    sched = _scheduler(*nodes, indexed=indexed)
    first, _ = _place(sched, make_pod())
    assert first is not None   # the memo now holds every node's answer for this signature
    mutate(sched)
    chosen, message = _place(sched, make_pod())
    assert chosen == want, message


def test_freed_node_fits_again() -> None:
    sched = _scheduler(node("n1", allocatable=ALLOC))
    sched.nodes.assume_pod(_cpu("2", uid="big"), "n1")
    assert _place(sched, _cpu("1"))[0] is None
    sched.nodes.forget_pod("big")
    assert _place(sched, _cpu("1"))[0] == "n1"


def test_set_aside_and_restore_are_seen() -> None:
    """Preemption's simulation takes victims off a node and puts them back."""
    sched = _scheduler(node("n1", allocatable=ALLOC))
    sched.nodes.assume_pod(_cpu("2", uid="victim"), "n1")
    assert _place(sched, _cpu("1"))[0] is None
    restore = sched.nodes.set_aside(["victim"])
    assert _place(sched, _cpu("1"))[0] == "n1"
    restore()
    assert _place(sched, _cpu("1"))[0] is None


def test_scores_follow_usage() -> None:
    # n1 (4 cpu) scores better than n2 (3 cpu) until one pod uses a cpu of n1: a score kept
    # from before would pick n1 again.
    sched = _scheduler(node("n1", allocatable={**ALLOC, "cpu": "4"}), node("n2", allocatable={**ALLOC, "cpu": "3"}))
    first = _cpu("1", uid="first")
    assert _place(sched, first)[0] == "n1"
    sched.nodes.assume_pod(first, "n1")
    assert _place(sched, _cpu("1"))[0] == "n2"


def test_signatures_do_not_share_answers() -> None:
    sched = _scheduler(node("n1", allocatable=ALLOC, taints=[TAINT]))
    assert _place(sched, _cpu("1", tolerations=[TOLERATION]))[0] == "n1"
    chosen, message = _place(sched, _cpu("1"))
    assert chosen is None and "untolerated taint" in message


def test_unchanged_nodes_are_not_filtered_again() -> None:
    nodes = [node(f"n{i}", allocatable=ALLOC) for i in range(5)]
    sched = _scheduler(*nodes)
    seen = _filtered(sched)
    first = _cpu("1", uid="first")
    chosen, _ = _place(sched, first)
    assert sorted(seen) == [f"n{i}" for i in range(5)]
    sched.nodes.assume_pod(first, chosen)
    seen.clear()
    _place(sched, _cpu("1"))
    assert seen == [chosen]


def test_pods_with_nominations_pending_are_not_memoized() -> None:
    sched = _scheduler(node("n1", allocatable=ALLOC))
    sched.nominator.nominate(_cpu("1", uid="pre", priority=10), "n1")
    state = CycleState()
    sched.framework.run_pre_filter(state, _cpu("1"), sched.nodes.nodes())
    assert sched.framework.sign_pod(state, _cpu("1")) is None
    sched.nominator.remove("pre")
    assert sched.framework.sign_pod(state, _cpu("1")) is not None



def _random_history(seed: int, sched: Scheduler, steps: int) -> list[tuple[Any, ...]]:
    """What ``steps`` random cycles and cluster changes gave: per placement the chosen node, the
    message when none fits and the rotating start after it."""
    rng = random.Random(seed)
    names = [f"n{i:03d}" for i in range(300)]
    for name in names:
        sched.nodes.set_node(node(name, allocatable=ALLOC))
    shapes = [lambda: _cpu("1"), lambda: _cpu("500m", tolerations=[TOLERATION]), lambda: _cpu("2"),
              lambda: _cpu("3")]   # the last fits nowhere
    assumed: list[str] = []
    seen: list[tuple[Any, ...]] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.6:
            p = rng.choice(shapes)()
            random.seed(step)   # the same ties broken the same way in both runs
            chosen, message = _place(sched, p)
            seen.append((chosen, message, sched._search.next_start))
            if chosen is not None:
                sched.nodes.assume_pod(p, chosen)
                assumed.append(p["metadata"]["uid"])
        elif roll < 0.75 and assumed:
            sched.nodes.forget_pod(assumed.pop(rng.randrange(len(assumed))))
        elif roll < 0.9:
            name = rng.choice(names)
            sched.nodes.set_node(node(name, allocatable=ALLOC, taints=[TAINT] if rng.random() < 0.5 else None))
        elif roll < 0.95:
            sched.nodes.remove_node(rng.choice(names))
        else:
            sched.nodes.set_node(node(rng.choice(names), allocatable=ALLOC))
    return seen


@pytest.mark.parametrize("seed", range(4))
def test_the_index_chooses_as_the_scan_does(seed: int) -> None:
    """300 nodes (a window of 144), shapes that fit many, some and no nodes, and every kind of
    change between the cycles: the index gives the node, the failure message and the rotation a
    scan gives."""
    indexed, scanned = _scheduler(indexed=True), _scheduler()
    history = _random_history(seed, indexed, 600)
    assert history == _random_history(seed, scanned, 600)
    assert any(table.index is not None for table in indexed._search._fit_memo._tables.values())
    assert not any(table.index is not None for table in scanned._search._fit_memo._tables.values())
    assert sum(chosen is None for chosen, _, _ in history) > 10


def test_the_index_is_used_and_filters_only_changed_nodes() -> None:
    sched = _scheduler(*(node(f"n{i:03d}", allocatable=ALLOC) for i in range(300)), indexed=True)
    seen = _filtered(sched)
    scored = _scored(sched)
    taken = set()   # the nodes pods went to: each changed since it was last scored
    for _ in range(3):   # windows of 144 from a rotating start: every node is filtered once
        first = _cpu("1")
        taken.add(chosen := _place(sched, first)[0])
        sched.nodes.assume_pod(first, chosen)
    assert sorted(set(seen)) == sorted(n.name for n in sched.nodes.nodes())
    seen.clear()
    _place(sched, _cpu("1"))   # builds the index: the node the last pod took is filtered again
    second = _cpu("1")
    taken.add(chosen := _place(sched, second)[0])
    sched.nodes.assume_pod(second, chosen)
    seen.clear()
    scored.clear()
    _place(sched, _cpu("1"))
    assert seen == [chosen]
    assert set(scored) <= taken   # the index keeps the scores of the others
    assert any(table.index is not None for table in sched._search._fit_memo._tables.values())


def test_the_index_keeps_the_scores_it_computed() -> None:
    sched = _scheduler(*(node(f"n{i:03d}", allocatable=ALLOC) for i in range(300)), indexed=True)
    sched._search._percentage = 100   # every node in every window
    scored = _scored(sched)
    for _ in range(2):   # a scan, then the index: each pod's node is scored again after
        first = _cpu("1")
        sched.nodes.assume_pod(first, _place(sched, first)[0])
    _place(sched, _cpu("1"))
    scored.clear()
    _place(sched, _cpu("1"))
    assert scored == []
