"""Pod-group scheduling end to end (the 1.37 pod-group cycle), in upstream's scheduler_perf shapes.

Every shape runs through the HTTP API on a fresh ``FakeCluster`` (API server, control plane and
this client in one process and one event loop): the client creates the groups and their pods,
the ResourceClaim controller generates claims, the scheduler places and binds, the kubelet
emulation starts the pods.  Measured: pods/s from the first pod created to the last one bound,
and the duration of each pod-group cycle (``Scheduler.schedule_group``, timed in-process) —
upstream reports ``scheduler_podgroup_scheduling_attempt_duration_seconds``.

    python bench/bench_podgroups.py [--quick] [--shape NAME ...] [--control-plane-process]

``--control-plane-process`` runs the control plane in its own process (the layout of ``fakeapi
serve``); the cycles are then not timed (they run in the other process).

Shapes:
- ``workloadresourceclaims-1x1000``: 1 PodGroup x 1,000 pods sharing one PodGroup claim, 10 nodes
  (dra/workloadresourceclaims; the issue's target is under 5 s); the devices are network-attached
  (one ``allNodes`` slice), so a shared claim does not pin its 1,000 pods to one node;
- ``workloadresourceclaims-1x10000``: the same with 10,000 pods on 50 nodes (250 pods each); the
  issue's target is under 30 s;
- ``workloadresourceclaims-100x50``: 100 PodGroups x 50 pods, one shared claim each, 50 nodes;
- ``gangscheduling-1000x3``: 1,000 gangs x 3 pods on 500 nodes (podgroup/gangscheduling; upstream
  reports 4-6 ms average per gang attempt on 5,000 nodes);
- ``gang-size-N``: one gang of N pods (10, 100, 1,000) on 100 nodes: how a cycle grows with size;
- ``group-constraint-100-blocks``: 100 v1alpha1 pod-group instances x 8 pods, each pod its own
  claim, the group-level matchAttribute over 100 blocks of 8 devices (fakeapi's draft extension).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import (
    DEVICE_CLASSES,
    NODES,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_SLICES,
    WORKLOADS_V1ALPHA1,
    ApiClient,
)
from fakeapi.scheduler.scheduler import Scheduler

from bench.bench_scheduler import BoundCounter
from bench.common import (
    DEVICE_CLASS,
    DRIVER,
    TEMPLATE,
    create_all,
    machine_description,
    markdown_table,
    percentile,
    probed,
)
from fakeapi.cluster import FakeCluster

BLOCK = f"{DRIVER}/block"
CLAIM_TEMPLATE = TEMPLATE["metadata"]["name"]


def _node(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "250"}}}


def _slice(i: int, devices: int, blocks: int = 0) -> dict[str, Any]:
    """``devices`` on node i; with ``blocks``, consecutive runs of devices form that many blocks."""
    per_block = devices // blocks if blocks else devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i}"},
            "spec": {"driver": DRIVER, "nodeName": f"node-{i}",
                     "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"device-{d}",
                                  "attributes": {BLOCK: {"string": f"block-{i}-{d // per_block}"}}}
                                 for d in range(devices)]}}


def _network_slices(devices: int) -> list[dict[str, Any]]:
    """``devices`` reachable from every node: one pool, in slices of at most 128 devices."""
    count = -(-devices // 128)
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"network-{s}"},
             "spec": {"driver": DRIVER, "allNodes": True,
                      "pool": {"name": "network", "generation": 1, "resourceSliceCount": count},
                      "devices": [{"name": f"device-{d}"} for d in range(s * 128, min(devices, (s + 1) * 128))]}}
            for s in range(count)]


def _pod_group(name: str, min_count: int, shared_claim: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if shared_claim:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": CLAIM_TEMPLATE}]
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def _pod(name: str, claim: bool, **group: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "10m"}}}
    spec: dict[str, Any] = {"containers": [container], **group}
    if claim:
        container["resources"]["claims"] = [{"name": "dev"}]
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": CLAIM_TEMPLATE}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


class CycleTimer:
    """Times ``Scheduler.schedule_group`` for the runs of this process."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, float]] = []   # (pending members, seconds)
        original = Scheduler.schedule_group

        def timed(sched: Scheduler, group: Any) -> None:
            members = len(group.members)
            start = time.perf_counter()
            original(sched, group)
            self.samples.append((members, time.perf_counter() - start))
        Scheduler.schedule_group = timed   # type: ignore[method-assign]

    def reset(self) -> None:
        self.samples.clear()


async def run_shape(timer: CycleTimer, **shape: Any) -> dict[str, Any]:
    """One shape on a fresh cluster: pods/s and the cycle durations (none with ``separate``), and
    the shape's time in bare POSTs timed around it."""
    result, bare_us = await probed(_run_shape(timer, **shape))
    return {**result, "bare_us": bare_us, "bare_posts": result["seconds"] * 1e6 / bare_us}


async def _run_shape(timer: CycleTimer, *, nodes: int, devices: int, blocks: int, groups: int, size: int,
                     claims: str, workload: bool = False, separate: bool = False) -> dict[str, Any]:
    timer.reset()
    async with FakeCluster(control_plane="process" if separate else True) as cluster, ApiClient(cluster.url) as api:
        await create_all(api, NODES, None, [_node(i) for i in range(nodes)])
        if devices:
            slices = (_network_slices(devices * nodes) if claims == "group"
                      else [_slice(i, devices, blocks) for i in range(nodes)])
            await create_all(api, RESOURCE_SLICES, None, slices)
            await api.create(DEVICE_CLASSES, None, DEVICE_CLASS)
            await api.create(RESOURCE_CLAIM_TEMPLATES, "default", TEMPLATE)
        pods: list[dict[str, Any]] = []
        if workload:
            await api.create(WORKLOADS_V1ALPHA1, "default", {
                "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": size}}, "resourceClaims": [
                    {"name": "dev", "resourceClaimTemplateName": CLAIM_TEMPLATE,
                     "constraints": [{"matchAttribute": BLOCK}]}]}]}})
            pods = [_pod(f"g{g}-{i}", True, workloadRef={"name": "w", "podGroup": "g", "podGroupReplicaKey": f"r{g}"})
                    for g in range(groups) for i in range(size)]
        else:
            await create_all(api, PODGROUPS, "default",
                              [_pod_group(f"g{g}", size, claims == "group") for g in range(groups)])
            pods = [_pod(f"g{g}-{i}", claims != "none", schedulingGroup={"podGroupName": f"g{g}"})
                    for g in range(groups) for i in range(size)]
        counter = BoundCounter()
        rv = (await api.list(PODS, "default", limit=1))["metadata"]["resourceVersion"]
        watcher = asyncio.create_task(counter.run(api, rv))
        try:
            start = time.perf_counter()
            await create_all(api, PODS, "default", pods)
            await counter.wait_for(len(pods), timeout=900)
            elapsed = time.perf_counter() - start
        finally:
            watcher.cancel()
    cycles = [seconds for members, seconds in timer.samples if members]
    timed = cycles or [float("nan")]   # a control plane in its own process is not timed
    return {"pods": len(pods), "seconds": elapsed, "pods_per_s": len(pods) / elapsed, "cycles": len(cycles),
            "p50_ms": percentile(timed, 50) * 1000, "p99_ms": percentile(timed, 99) * 1000,
            "ms_per_member": 1000 * sum(s for _, s in timer.samples) / max(1, sum(m for m, _ in timer.samples))}


SHAPES: dict[str, Callable[[bool], dict[str, Any]]] = {
    "workloadresourceclaims-1x1000": lambda quick: dict(nodes=10, devices=10, blocks=0, groups=1,
                                                        size=50 if quick else 1000, claims="group"),
    "workloadresourceclaims-1x10000": lambda quick: dict(nodes=10 if quick else 50, devices=10, blocks=0, groups=1,
                                                         size=100 if quick else 10000, claims="group"),
    "workloadresourceclaims-100x50": lambda quick: dict(nodes=50, devices=10, blocks=0, groups=4 if quick else 100,
                                                        size=50, claims="group"),
    "gangscheduling-1000x3": lambda quick: dict(nodes=20 if quick else 500, devices=0, blocks=0,
                                                groups=30 if quick else 1000, size=3, claims="none"),
    "gang-size-10": lambda quick: dict(nodes=100, devices=0, blocks=0, groups=1, size=10, claims="none"),
    "gang-size-100": lambda quick: dict(nodes=100, devices=0, blocks=0, groups=1, size=100, claims="none"),
    "gang-size-1000": lambda quick: dict(nodes=100, devices=0, blocks=0, groups=1, size=200 if quick else 1000,
                                         claims="none"),
    "group-constraint-100-blocks": lambda quick: dict(nodes=10 if quick else 50, devices=16, blocks=2,
                                                      groups=4 if quick else 100, size=8, claims="own",
                                                      workload=True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller shapes")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="run only these shapes")
    parser.add_argument("--control-plane-process", action="store_true",
                        help="run the control plane in a child process (cycles are not timed)")
    args = parser.parse_args()
    timer = CycleTimer()
    rows = []
    for name in args.shape or list(SHAPES):
        params = SHAPES[name](args.quick)
        result = asyncio.run(run_shape(timer, **params, separate=args.control_plane_process))
        rows.append([name, result["pods"], round(result["seconds"], 2), round(result["pods_per_s"], 1),
                     result["cycles"], round(result["p50_ms"], 2), round(result["p99_ms"], 2),
                     round(result["ms_per_member"], 3), round(result["bare_us"]), round(result["bare_posts"])])
        print(f"{name}: {result['pods']} pods in {result['seconds']:.2f} s = {result['pods_per_s']:.1f} pods/s, "
              f"{result['cycles']} cycles p50 {result['p50_ms']:.2f} ms p99 {result['p99_ms']:.2f} ms, "
              f"{result['ms_per_member']:.3f} ms per member; {result['bare_posts']:.0f} bare POSTs of "
              f"{result['bare_us']:.0f} µs", flush=True)
    print(machine_description())
    print(markdown_table(["shape", "pods", "s", "pods/s", "cycles", "cycle p50 ms", "cycle p99 ms",
                          "ms per member", "bare POST µs", "s in bare POSTs"], rows))


if __name__ == "__main__":
    main()
