"""Remembered failed attempts: a pod of a shape whose last attempt fit nowhere re-filters only the
nodes changed since, and gets exactly what a full evaluation gives: every kind of change a
verdict depends on (the node, its usage, its pools' allocations, the device index, the node set)
is seen, and an unrelated change costs one node's filters, not every node's."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.scheduler.attempts import FailedAttempts
from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code, NodeStatuses, Status, unresolvable, unschedulable
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.journal import ChangeJournal
from fakeapi.scheduler.scheduler import Scheduler

from fakeapi.config import FeatureGates

from .builders import allocation, claim, node, pod

DRIVER = "gpu.example.com"
ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "10"}
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}


class _Recorder:
    def event(self, *args: Any, **kwargs: Any) -> None:
        pass


def _slice(node_name: str, devices: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-slice", "uid": f"slice-{node_name}", "resourceVersion": str(devices)},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": devices, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{d}"} for d in range(devices)]}}


def _gpu_pod(name: str, cpu: str = "1") -> dict[str, Any]:
    return pod(name, uid=f"uid-{name}", requests={"cpu": cpu},
               claims=[{"name": "gpu", "resourceClaimName": f"{name}-gpu"}])


class _Cluster:
    """A scheduler fed through its informers: n0..n3 with one device each (n3 tainted), and
    n4 whose cpu a device-less pod takes; then n0..n2 filled by pods of the workload.  ``spare``
    more nodes without devices make room for more changes between attempts (a quarter of the
    nodes at most are filtered again)."""

    def __init__(self, spare: int = 0) -> None:
        self.factory = InformerFactory(None)   # type: ignore[arg-type]   # fed by hand
        self.sched = Scheduler(None, self.factory, FeatureGates(), _Recorder())   # type: ignore[arg-type]
        self.sched._spawn = lambda coro: coro.close()   # type: ignore[method-assign]   # no API
        self.apply(DEVICE_CLASSES, "ADDED", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                             "metadata": {"name": DRIVER, "uid": "class", "resourceVersion": "1"},
                                             "spec": {}})
        for i in range(5):
            self.apply(NODES, "ADDED", node(f"n{i}", allocatable=ALLOC, taints=[TAINT] if i == 3 else None))
            self.apply(RESOURCE_SLICES, "ADDED", _slice(f"n{i}"))
        for i in range(spare):
            self.apply(NODES, "ADDED", node(f"spare-{i}", allocatable=ALLOC))
        self.sched.nodes.assume_pod(pod("hog", uid="hog", requests={"cpu": "4"}), "n4")
        for i in range(3):
            assert self.place(f"filler-{i}") is not None
        self.seen: list[str] = []
        run = self.sched.framework._filter

        def counting(plugins: Any, state: Any, p: Any, info: Any) -> Any:
            self.seen.append(info.name)
            return run(plugins, state, p, info)

        self.sched.framework._filter = counting   # type: ignore[method-assign]

    def apply(self, gvr: Any, event: str, obj: dict[str, Any]) -> None:
        self.factory.informer(gvr).apply(event, obj)

    def add_pod(self, name: str) -> dict[str, Any]:
        self.apply(RESOURCE_CLAIMS, "ADDED", claim(f"{name}-gpu", requests=[
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]))
        p = _gpu_pod(name)
        self.apply(PODS, "ADDED", p)
        return p

    def place(self, name: str) -> str | None:
        """A pod's scheduling cycle up to Reserve (its claim's allocation is then pending)."""
        p = self.add_pod(name)
        state = CycleState()
        result = self.sched._schedule_pod(state, p)
        if result.node is not None:
            self.sched.nodes.assume_pod(p, result.node)
            assert self.sched.framework.run_reserve(state, p, result.node).is_success
        return result.node

    def find(self, p: dict[str, Any], *, remembered: bool = True
             ) -> tuple[str | None, dict[str, Status], Status | None]:
        """``_find_node`` for ``p``; ``remembered=False``: as if no attempt had been remembered."""
        sched = self.sched
        kept = sched._search.failed_attempts
        if not remembered:
            sched._search.failed_attempts = FailedAttempts(sched.nodes, sched.index, sched.claims.allocated)
        try:
            state = CycleState()
            assert sched.framework.run_pre_filter(state, p, sched.nodes.nodes()).is_success
            chosen, statuses, failed = sched._find_node(state, p, sched.nodes.nodes())
        finally:
            sched._search.failed_attempts = kept
        return chosen, dict(statuses), failed


def _set_node(cluster: _Cluster, name: str, **kw: Any) -> None:
    cluster.apply(NODES, "MODIFIED", {**node(name, allocatable=ALLOC, **kw),
                                      "metadata": {**node(name, **kw)["metadata"], "resourceVersion": "2"}})


def _foreign_claim(cluster: _Cluster, event: str, allocated: bool, rv: str) -> None:
    """A claim allocated on n2's device by someone else: only n2's pool changes, not n2."""
    obj = claim("foreign", rv=rv, allocation=allocation("gpu-0", pool="n2") if allocated else None)
    cluster.apply(RESOURCE_CLAIMS, event, obj)


def _filler_on(cluster: _Cluster, node_name: str) -> str:
    return next(name for name in ("filler-0", "filler-1", "filler-2")
                if cluster.sched.nodes.node_of(f"uid-{name}") == node_name)


def _drop_pending_allocation_on(cluster: _Cluster, node_name: str) -> None:
    cluster.sched._dra._drop_pending(f"claim-{_filler_on(cluster, node_name)}-gpu")


def _free_n2_from_a_foreign_claim(cluster: _Cluster) -> None:
    filler = _filler_on(cluster, "n2")
    cluster.sched.nodes.forget_pod(f"uid-{filler}")
    cluster.sched._dra._drop_pending(f"claim-{filler}-gpu")   # n2's device: now only the foreign claim's
    _foreign_claim(cluster, "ADDED", True, "5")


# Each case: what changes after a pod of the workload fit nowhere, and where the next pod of
# that shape must go (None: still nowhere).
CASES: dict[str, tuple[Callable[[_Cluster], Any], Callable[[_Cluster], Any] | None, str | None]] = {
    "claim-deallocated-in-a-pool": (_free_n2_from_a_foreign_claim,
                                    lambda c: _foreign_claim(c, "MODIFIED", False, "6"), "n2"),
    "claim-deleted": (_free_n2_from_a_foreign_claim, lambda c: _foreign_claim(c, "DELETED", True, "6"), "n2"),
    "pending-allocation-dropped": (None, lambda c: _drop_pending_allocation_on(c, "n1"), "n1"),
    "slice-grown": (None, lambda c: c.apply(RESOURCE_SLICES, "MODIFIED", _slice("n0", devices=2)), "n0"),
    "taint-removed": (None, lambda c: _set_node(c, "n3"), "n3"),
    "cpu-freed": (None, lambda c: c.sched.nodes.forget_pod("hog"), "n4"),
    "node-added": (None, lambda c: (c.apply(NODES, "ADDED", node("n5", allocatable=ALLOC)),
                                    c.apply(RESOURCE_SLICES, "ADDED", _slice("n5"))), "n5"),
    "node-deleted": (None, lambda c: c.apply(NODES, "DELETED", node("n3")), None),
    "unrelated-label": (None, lambda c: _set_node(c, "n1", labels={"zone": "b"}), None),
    "unrelated-slice-untouched": (None, lambda c: c.apply(RESOURCE_SLICES, "MODIFIED", _slice("n0")), None),
}


@pytest.mark.parametrize(("prepare", "change", "want"), list(CASES.values()), ids=list(CASES))
def test_next_attempt_of_a_shape_sees_every_change(prepare, change, want) -> None:
    cluster = _Cluster()
    if prepare is not None:
        prepare(cluster)
    first = cluster.add_pod("first")
    assert cluster.find(first)[0] is None   # remembered: fits nowhere
    change(cluster)
    second = cluster.add_pod("second")
    full = cluster.find(second, remembered=False)
    remembered = cluster.find(second)
    assert full[0] == want, full[1]
    # A pod that fits gets a full evaluation (which nodes it tried before, in random score
    # order, may differ); one that does not gets every node's status, as a full evaluation.
    assert remembered[::2] == full[::2] and (want is not None or remembered[1] == full[1])


def test_an_unrelated_change_filters_only_the_changed_node() -> None:
    cluster = _Cluster()
    first = cluster.add_pod("first")
    full = cluster.find(first)
    assert full[0] is None
    cluster.seen.clear()
    assert cluster.find(cluster.add_pod("second")) == full   # nothing changed: no node filtered
    assert cluster.seen == []
    _set_node(cluster, "n1", labels={"zone": "b"})
    third = cluster.add_pod("third")
    remembered = cluster.find(third)
    assert set(cluster.seen) == {"n1"}
    assert remembered == cluster.find(third, remembered=False)


def test_a_cycle_that_fits_nowhere_keeps_the_rotation_and_explains_every_node() -> None:
    cluster = _Cluster()
    cluster.sched._search.next_start = 2
    first = cluster.add_pod("first")
    result = cluster.sched._schedule_pod(CycleState(), first)
    assert result.node is None and cluster.sched._search.next_start == 2
    assert result.message == ("0/5 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), "
                              "3 cannot allocate all claims. no new claims to deallocate, "
                              "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
                              "4 Preemption is not helpful for scheduling..")
    again = cluster.sched._schedule_pod(CycleState(), cluster.add_pod("second"))
    assert again.message == result.message and again.rejected_by == result.rejected_by


# --- the pieces ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("touches", "stamp", "limit", "want"), [
    ([], 0, 5, []),
    (["a", "b", "a"], 0, 5, ["a", "b"]),
    (["a", "b", "a"], 2, 5, ["a"]),
    (["a", "b", "c"], 1, 5, ["c", "b"]),
    (["a", "b", "c"], 3, 5, []),
    (["a", "b", "c"], 0, 2, None),
], ids=["nothing", "each-key-once-newest-first", "after-a-stamp", "older-changes-left-out", "up-to-date",
        "over-the-limit"])
def test_journal_since(touches: list[str], stamp: int, limit: int, want: list[str] | None) -> None:
    journal: ChangeJournal[str] = ChangeJournal()
    for key in touches:
        journal.touch(key)
    assert journal.since(stamp, limit) == want


NO_CPU = unschedulable("Fit", "Insufficient cpu")
NO_DEVICE = unresolvable("DRA", "cannot allocate all claims")
TAINTED = unresolvable("Taint", "node(s) had untolerated taint(s)")


@pytest.mark.parametrize("puts", [
    [("n1", NO_DEVICE)],
    [("n1", NO_CPU), ("n2", NO_CPU)],
    [("n4", TAINTED)],
    [("n1", NO_DEVICE), ("n1", NO_CPU), ("n2", TAINTED)],
], ids=["unschedulable-to-unresolvable", "unresolvable-to-unschedulable", "new-node", "several-times"])
def test_node_statuses_counts_follow_puts(puts: list[tuple[str, Status]]) -> None:
    statuses = NodeStatuses({"n1": NO_CPU, "n2": NO_DEVICE, "n3": TAINTED})
    statuses.reasons()   # counted now: later puts must keep the counts right
    for name, status in puts:
        statuses.put(name, status)
    fresh = NodeStatuses(statuses)
    assert (dict(statuses.reasons()), statuses.plugins(), statuses.unschedulable()) == (
        dict(fresh.reasons()), fresh.plugins(), fresh.unschedulable())
    assert statuses.unschedulable() == {n for n, s in statuses.items() if s.code == Code.UNSCHEDULABLE}


def test_a_freed_node_is_found_without_filtering_the_unchanged_ones_again() -> None:
    cluster = _Cluster()
    cluster.sched.nodes.assume_pod(pod("busy", uid="busy", requests={"cpu": "2"}), "n2")   # n2 scores last
    assert cluster.find(cluster.add_pod("first"))[0] is None
    _drop_pending_allocation_on(cluster, "n2")   # n2's pool changes, n2 itself does not
    cluster.seen.clear()
    assert cluster.find(cluster.add_pod("second"))[0] == "n2"
    assert set(cluster.seen) == {"n2"}   # n0 and n1, tried first, answered from the remembered attempt


def test_an_attempt_that_fit_is_brought_up_to_date_too() -> None:
    """Once a pod fit on a changed node, the next attempt filters that node again and what changed
    since, not everything changed since the cluster was first found full."""
    cluster = _Cluster(spare=8)
    assert cluster.find(cluster.add_pod("first"))[0] is None
    _set_node(cluster, "n1", labels={"zone": "b"})
    _drop_pending_allocation_on(cluster, "n2")
    assert cluster.place("second") == "n2"
    cluster.seen.clear()
    third = cluster.add_pod("third")
    remembered = cluster.find(third)
    assert set(cluster.seen) == {"n2"}   # not n1, re-filtered (and rejected) by the second pod already
    assert remembered == cluster.find(third, remembered=False) and remembered[0] is None


def test_a_node_that_fit_but_was_not_chosen_is_filtered_again() -> None:
    """Two nodes freed, one pod placed: the other node is unchanged since it was found to fit, and
    the next pod of the shape must still find it."""
    cluster = _Cluster(spare=8)
    assert cluster.find(cluster.add_pod("first"))[0] is None
    _drop_pending_allocation_on(cluster, "n1")
    _drop_pending_allocation_on(cluster, "n2")
    taken = cluster.place("second")
    assert taken in ("n1", "n2")
    left = "n2" if taken == "n1" else "n1"
    third = cluster.add_pod("third")
    full = cluster.find(third, remembered=False)
    assert full[0] == left
    assert cluster.place("third") == left
    fourth = cluster.add_pod("fourth")
    assert cluster.find(fourth) == cluster.find(fourth, remembered=False)


def test_re_filtering_stops_at_the_first_node_that_fits() -> None:
    """Devices freed on several nodes: the attempt's re-filtering stops at the first that fits,
    and the evaluation filters in score order only the nodes whose rejection is not known; it
    chooses as a full evaluation does."""
    cluster = _Cluster(spare=8)
    assert cluster.find(cluster.add_pod("first"))[0] is None
    for name in ("n0", "n1", "n2"):
        _drop_pending_allocation_on(cluster, name)
    runs: list[str] = []
    deferred = cluster.sched.framework.run_deferred_filter

    def counting(state: Any, p: Any, info: Any) -> Any:
        runs.append(info.name)
        return deferred(state, p, info)

    cluster.sched.framework.run_deferred_filter = counting   # type: ignore[method-assign]
    second = cluster.add_pod("second")
    chosen = cluster.find(second)[0]
    assert runs[0] == "n0" and len(runs) == 2   # the re-filtering's first, then the best of the three
    assert chosen == runs[1] and chosen in ("n0", "n1", "n2")
    runs.clear()
    assert cluster.find(second, remembered=False)[0] in ("n0", "n1", "n2")


@pytest.mark.parametrize("seed", range(3))
def test_a_full_cluster_freeing_devices_at_random_answers_as_a_full_evaluation(seed: int) -> None:
    """24 more one-device nodes; pods of the shape come one at a time while placed ones finish a
    few at a time (the cluster fills and frees): every attempt fits (or not) as a full evaluation
    does, rejects as it does when it does not fit, and lands on a node whose device is free."""
    rng = random.Random(seed)
    cluster = _Cluster()
    for i in range(24):
        cluster.apply(NODES, "ADDED", node(f"d{i}", allocatable=ALLOC))
        cluster.apply(RESOURCE_SLICES, "ADDED", _slice(f"d{i}"))
    placed: list[str] = []
    fits = misses = 0
    for step in range(120):
        for name in rng.sample(placed, min(len(placed), rng.choice((0, 0, 0, 1, 2)))):
            placed.remove(name)
            cluster.sched.nodes.forget_pod(f"uid-{name}")
            cluster.sched._dra._drop_pending(f"claim-{name}-gpu")
        name = f"pod-{step}"
        p = cluster.add_pod(name)
        full = cluster.find(p, remembered=False)
        remembered = cluster.find(p)
        assert (remembered[0] is None) == (full[0] is None), step
        if full[0] is None:
            misses += 1
            assert remembered[1:] == full[1:], step
        state = CycleState()
        result = cluster.sched._schedule_pod(state, p)
        assert (result.node is None) == (full[0] is None), step
        if result.node is not None:
            fits += 1
            cluster.sched.nodes.assume_pod(p, result.node)
            assert cluster.sched.framework.run_reserve(state, p, result.node).is_success, step
            placed.append(name)
    assert fits > 15 and misses > 15, (fits, misses)
