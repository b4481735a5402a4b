"""The scheduling cycle alone: the DRA template workload's pods through ``Scheduler.schedule_one``
with no HTTP, no informers' watches and no binding, to see what one cycle costs and how that
grows with the cluster.

N nodes with one ResourceSlice of D devices each (``bench_scheduler``'s shapes), one
DeviceClass; every pod has one generated claim.  Objects reach the scheduler through its
informers' event handlers (as a watch would deliver them); each pod is popped from the
scheduling queue and scheduled (PreFilter, Filter, Score, the DRA allocator, Reserve, Permit);
its binding cycle is not run, so every placed pod stays assumed with its claim's allocation
pending, as between a cycle and its API writes.  Reports microseconds of CPU per pod (median of
the runs) and the nodes each cycle filtered and scored.

``--at-capacity ROUNDS`` measures what ``bench_scale`` spends most of its at-capacity minute on:
more pods than devices, every placed pod "bound" (its claim's allocation and the pod's node
delivered through the informers, as the API writes would come back), then ROUNDS rounds of:
``--free K`` running pods finish and their claims are deallocated and deleted (each
deallocation wakes every pod rejected for devices, as upstream's hint does), and the queue is
drained: K pods take the freed devices, every other woken pod is retried and fails again.
Reports CPU µs per retried attempt.

    python bench/bench_cycle.py [--quick] [--nodes N] [--devices D] [--pods P] [--runs R] [--profile]
                                [--at-capacity ROUNDS [--free K]]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.plugins.dynamic_resources import NAME as DYNAMIC_RESOURCES
from fakeapi.scheduler.queue.entities import QueuedPodInfo
from fakeapi.scheduler.scheduler import Scheduler

from bench.common import DEVICE_CLASS, TEMPLATE, dra_node, dra_pod, dra_slice
from fakeapi.config import FeatureGates


class _Recorder:
    def event(self, *args: Any, **kwargs: Any) -> None:
        pass


def _claim(pod: dict[str, Any]) -> dict[str, Any]:
    name = f"{pod['metadata']['name']}-resource"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                                              "uid": pod["metadata"]["uid"], "controller": True}]},
            "spec": TEMPLATE["spec"]["spec"], "status": {}}


def _pending_pod(i: int) -> dict[str, Any]:
    pod = dra_pod(f"pod-{i}")
    pod["metadata"].update(namespace="default", uid=f"uid-pod-{i}", resourceVersion="1")
    pod["spec"]["schedulerName"] = "default-scheduler"
    pod["status"] = {"phase": "Pending", "resourceClaimStatuses": [
        {"name": "resource", "resourceClaimName": f"pod-{i}-resource"}]}
    return pod


def _scheduler(nodes: int, devices: int) -> tuple[Scheduler, InformerFactory]:
    factory = InformerFactory(None)   # type: ignore[arg-type]   # fed by hand, never started
    sched = Scheduler(None, factory, FeatureGates(), _Recorder())   # type: ignore[arg-type]
    sched._start_binding = lambda info, state, node: None   # type: ignore[method-assign]
    sched._spawn = lambda coro: coro.close()   # type: ignore[method-assign]   # no API: pods that fit nowhere are not told
    for i in range(nodes):
        node = dra_node(i)
        node["metadata"].update(uid=f"uid-node-{i}", resourceVersion="1")
        factory.informer(NODES).apply("ADDED", node)
        sl = dra_slice(i, devices)
        sl["metadata"].update(uid=f"uid-slice-{i}", resourceVersion="1")
        factory.informer(RESOURCE_SLICES).apply("ADDED", sl)
    factory.informer(DEVICE_CLASSES).apply("ADDED", {**DEVICE_CLASS, "metadata": {
        **DEVICE_CLASS["metadata"], "uid": "uid-class", "resourceVersion": "1"}})
    return sched, factory


def run_once(nodes: int, devices: int, pods: int, profiler: cProfile.Profile | None) -> tuple[float, float]:
    """(CPU µs per scheduled pod, nodes filtered per pod) for ``pods`` pods in a fresh scheduler."""
    sched, factory = _scheduler(nodes, devices)
    filtered = 0
    run_filter = sched.framework._filter

    def counting(plugins: Any, state: Any, pod: Any, info: Any) -> Any:
        nonlocal filtered
        filtered += 1
        return run_filter(plugins, state, pod, info)

    sched.framework._filter = counting   # type: ignore[method-assign]
    for i in range(pods):
        pod = _pending_pod(i)
        factory.informer(RESOURCE_CLAIMS).apply("ADDED", _claim(pod))
        factory.informer(PODS).apply("ADDED", pod)
    if profiler is not None:
        profiler.enable()
    scheduled = 0
    start = time.process_time()
    while (entity := sched.queue.pop_nowait()) is not None:
        assert isinstance(entity, QueuedPodInfo)
        sched.schedule_one(entity)
        scheduled += sched.nodes.is_assumed(entity.uid)
    cpu = time.process_time() - start
    if profiler is not None:
        profiler.disable()
    if scheduled != min(pods, nodes * devices):
        raise RuntimeError(f"scheduled {scheduled} of {pods} pods")
    return cpu / pods * 1e6, filtered / pods


class _Cluster:
    """Stands in for the API server and the binding cycle (``--at-capacity``): a placed pod's claim
    allocation and its node come back through the informers as the API writes would; a finished
    pod's claim is deallocated and deleted as the ResourceClaim controller does."""

    def __init__(self, sched: Scheduler, factory: InformerFactory) -> None:
        self._sched = sched
        self._pods = factory.informer(PODS)
        self._claims = factory.informer(RESOURCE_CLAIMS)
        self._rv = 1
        self.running: deque[tuple[dict[str, Any], dict[str, Any]]] = deque()
        self.bound = 0

    def _next(self, obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
        self._rv += 1
        return {**obj, **changes, "metadata": {**obj["metadata"], "resourceVersion": str(self._rv)}}

    def bind(self, info: QueuedPodInfo, state: CycleState, node: str) -> None:
        [claim_info] = state.read(DYNAMIC_RESOURCES).infos
        claim = self._next(claim_info.claim, status={"allocation": claim_info.allocation,
                                                     "reservedFor": [claim_info.consumer]})
        self._claims.apply("MODIFIED", claim)
        self._sched._dra._drop_pending(claim["metadata"]["uid"])
        pod = self._next(info.pod, spec={**info.pod["spec"], "nodeName": node})
        self._pods.apply("MODIFIED", pod)
        self.running.append((pod, claim))
        self.bound += 1

    def finish_oldest(self) -> None:
        pod, claim = self.running.popleft()
        self._pods.apply("MODIFIED", self._next(pod, status={**pod["status"], "phase": "Succeeded"}))
        self._claims.apply("MODIFIED", self._next(claim, status={}))
        self._claims.apply("DELETED", claim)
        self._pods.apply("DELETED", pod)


def run_at_capacity(nodes: int, devices: int, pods: int, rounds: int, free: int,
                    profiler: cProfile.Profile | None) -> tuple[float, float]:
    """(CPU µs per retried attempt, attempts per round) once the cluster is full: ``rounds``
    times, ``free`` pods finish and the woken pods are retried until the queue is empty."""
    if pods <= nodes * devices + free * rounds:
        raise ValueError("--at-capacity needs more pods than devices plus the ones the rounds place")
    sched, factory = _scheduler(nodes, devices)
    cluster = _Cluster(sched, factory)
    sched._start_binding = cluster.bind   # type: ignore[method-assign]
    for i in range(pods):
        pod = _pending_pod(i)
        factory.informer(RESOURCE_CLAIMS).apply("ADDED", _claim(pod))
        factory.informer(PODS).apply("ADDED", pod)
    while (entity := sched.queue.pop_nowait()) is not None:
        sched.schedule_one(entity)   # type: ignore[arg-type]
    if cluster.bound != nodes * devices:
        raise RuntimeError(f"filled {cluster.bound} of {nodes * devices} devices")
    if profiler is not None:
        profiler.enable()
    attempts = 0
    start = time.process_time()
    for _ in range(rounds):
        for _ in range(free):
            cluster.finish_oldest()
        while (entity := sched.queue.pop_nowait()) is not None:
            sched.schedule_one(entity)   # type: ignore[arg-type]
            attempts += 1
    cpu = time.process_time() - start
    if profiler is not None:
        profiler.disable()
    if cluster.bound != nodes * devices + free * rounds:
        raise RuntimeError(f"bound {cluster.bound}, expected {nodes * devices + free * rounds}")
    return cpu / attempts * 1e6, attempts / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="100 nodes, 500 pods, one run; then 100 nodes x 2 devices, 300 pods, 2 rounds at capacity")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--pods", type=int, default=2500)
    parser.add_argument("--runs", type=int, default=None, help="runs (default 3, quick 1)")
    parser.add_argument("--profile", action="store_true", help="cProfile the last run")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--at-capacity", type=int, default=0, metavar="ROUNDS",
                        help="fill the cluster, then ROUNDS rounds of freeing --free devices and retrying")
    parser.add_argument("--free", type=int, default=10, help="devices freed per --at-capacity round")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.devices, args.pods = (100, 2, 300) if args.at_capacity else (100, args.devices, 500)
    runs = args.runs or (1 if args.quick else 3)
    results = []
    profiler = None
    if args.at_capacity:
        _at_capacity(args.nodes, args.devices, args.pods, args.at_capacity, args.free, runs, args.profile, args.top)
        return
    for i in range(runs):
        profiler = cProfile.Profile() if args.profile and i == runs - 1 else None
        results.append(run_once(args.nodes, args.devices, args.pods, profiler))
        print(f"run {i + 1}/{runs}: {results[-1][0]:.0f} µs CPU per pod, {results[-1][1]:.0f} node filters per pod")
    print(f"scheduling cycle, {args.nodes} nodes x {args.devices} devices, {args.pods} pods: median "
          f"{statistics.median(r[0] for r in results):.0f} µs CPU per pod "
          f"({statistics.median(r[1] for r in results):.0f} node filters per pod)")
    _print_profile(profiler, args.top)
    if args.quick:   # the smoke covers the at-capacity mode too
        _at_capacity(100, 2, 300, 2, 10, 1, False, args.top)


def _at_capacity(nodes: int, devices: int, pods: int, rounds: int, free: int, runs: int, profile: bool,
                 top: int) -> None:
    results = []
    profiler = None
    for i in range(runs):
        profiler = cProfile.Profile() if profile and i == runs - 1 else None
        results.append(run_at_capacity(nodes, devices, pods, rounds, free, profiler))
        print(f"run {i + 1}/{runs}: {results[-1][0]:.0f} µs CPU per retried attempt, "
              f"{results[-1][1]:.0f} attempts per round")
    print(f"at capacity, {nodes} nodes x {devices} devices, {pods} pods, {rounds} rounds of {free} freed: median "
          f"{statistics.median(r[0] for r in results):.0f} µs CPU per retried attempt "
          f"({statistics.median(r[1] for r in results):.0f} attempts per round)")
    _print_profile(profiler, top)


def _print_profile(profiler: cProfile.Profile | None, top: int) -> None:
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)


if __name__ == "__main__":
    main()
