"""Scheduling at scale: 5,000 nodes x 8 devices, 50,000 pods end to end through the API.

The layout of ``fakeapi serve``: API server (and this client) in one process, scheduler,
controllers and kubelet emulation in another (``FakeCluster(control_plane="process")``).  The
workload of ``bench_scheduler.py`` (one ResourceSlice per node, one DeviceClass, one
ResourceClaimTemplate, every pod one template claim), grown: 5,000 nodes with 8 devices each
(40,000 devices) and 50,000 pods.  More pods than devices, so pods do not run forever: each
carries ``fakeapi.dev/run-for`` (default 10 s) and, with ``restartPolicy: Never``, ends
``Succeeded``; the ResourceClaim controller then deletes its claim and the device serves a later
pod.  With 10 s the cluster never fills up; with ``--run-for 60s`` it does, and the pods that
fit nowhere dominate (see BENCHMARKS.md, "Scheduling at scale").  Measured from the first
pod created to the last one bound:

- **pods/s** scheduled end to end (claim generated, allocated, reserved, pod bound);
- **CPU per pod** of each process (robust to a busy machine);
- **peak RSS** of each process, sampled every half second.

    python bench/bench_scale.py [--quick] [--serve] [--writes] [--nodes N] [--devices D] [--pods P] [--run-for DURATION]

``--writes`` adds to each progress line the changes the last interval made to pods, claims and
Events (one watch of each kind; what the release pipeline and failure reports write, by kind).

``--quick`` (the CI smoke, under ~10 s): 100 nodes x 8 devices, 300 pods that run for 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import EVENTS, GVR, PODS, RESOURCE_CLAIMS, ApiClient

from bench.bench_scheduler import BoundCounter
from bench.common import (
    child_pids,
    cpu_seconds,
    create_all,
    create_dra_workload,
    dra_pod,
    machine_description,
    probed,
    rss_kib,
    run_loop,
)
from fakeapi.cluster import FakeCluster
from fakeapi.config import tune_gc_for_server

RUN_FOR = "fakeapi.dev/run-for"


class PeakRss:
    """The largest resident set of each process seen while :meth:`run` samples them."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.peak_kib = dict.fromkeys(pids, 0)

    def sample(self) -> None:
        for name, pid in self.pids.items():
            self.peak_kib[name] = max(self.peak_kib[name], rss_kib(pid))

    async def run(self, interval: float = 0.5) -> None:
        while True:
            self.sample()
            await asyncio.sleep(interval)


def _running_pod(i: int, run_for: str) -> dict[str, Any]:
    """A pod of the workload that ends ``Succeeded`` after ``run_for`` (``Never`` restarts it)."""
    pod = dra_pod(f"pod-{i}")
    pod["metadata"]["annotations"] = {RUN_FOR: run_for}
    pod["spec"]["restartPolicy"] = "Never"
    return pod


class ChangeCounter:
    """Watch events (ADDED, MODIFIED, DELETED) of pods, claims and Events since the last :meth:`take`."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    async def run(self, api: ApiClient, resource_version: str) -> None:
        await asyncio.gather(*(self._watch(api, gvr, resource_version) for gvr in (PODS, RESOURCE_CLAIMS, EVENTS)))

    async def _watch(self, api: ApiClient, gvr: GVR, resource_version: str) -> None:
        async for event in api.watch(gvr, "default", resource_version=resource_version, allow_bookmarks=False):
            self.counts[f"{gvr.plural} {event['type'].lower()}"] += 1

    def take(self) -> str:
        taken, self.counts = self.counts, collections.Counter()
        return ", ".join(f"{key} {n}" for key, n in sorted(taken.items()))


async def _progress(counter: BoundCounter, total: int, changes: ChangeCounter | None,
                    interval: float = 10.0) -> None:
    """A line on stderr every ``interval`` seconds: long runs show how far they got."""
    start = time.perf_counter()
    while True:
        await asyncio.sleep(interval)
        line = f"  {time.perf_counter() - start:.0f} s: {len(counter.bound)}/{total} bound"
        print(f"{line} ({changes.take()})" if changes else line, file=sys.stderr, flush=True)


async def run(nodes: int, devices: int, pods: int, run_for: str, writes: bool = False) -> dict[str, Any]:
    """One fresh cluster: set it up, then time ``pods`` pods from the first create to the last bind;
    with the wall time per pod in bare POSTs timed around it."""
    result, bare_us = await probed(_run(nodes, devices, pods, run_for, writes))
    return {**result, "bare_us": bare_us, "bare_posts_per_pod": result["seconds"] * 1e6 / pods / bare_us}


async def _run(nodes: int, devices: int, pods: int, run_for: str, writes: bool) -> dict[str, Any]:
    async with FakeCluster(control_plane="process") as cluster, ApiClient(cluster.url) as api:
        [control_plane] = child_pids()
        processes = {"API server (+ client)": os.getpid(), "control plane": control_plane}
        setup = time.perf_counter()
        await create_dra_workload(api, nodes, devices)
        setup = time.perf_counter() - setup
        counter = BoundCounter()
        rv = (await api.list(PODS, "default", limit=1))["metadata"]["resourceVersion"]
        rss = PeakRss(processes)
        changes = ChangeCounter() if writes else None
        tasks = [asyncio.create_task(counter.run(api, rv)), asyncio.create_task(rss.run()),
                 asyncio.create_task(_progress(counter, pods, changes))]
        if changes:
            tasks.append(asyncio.create_task(changes.run(api, rv)))
        try:
            cpu = {name: cpu_seconds(pid) for name, pid in processes.items()}
            start = time.perf_counter()
            await create_all(api, PODS, "default", [_running_pod(i, run_for) for i in range(pods)])
            await counter.wait_for(pods, timeout=3600)
            elapsed = time.perf_counter() - start
            cpu = {name: cpu_seconds(pid) - cpu[name] for name, pid in processes.items()}
            rss.sample()
        finally:
            for task in tasks:
                task.cancel()
    return {"setup_s": setup, "seconds": elapsed, "pods_per_s": pods / elapsed,
            "cpu_ms_per_pod": {name: 1000 * seconds / pods for name, seconds in cpu.items()},
            "peak_rss_mib": {name: kib / 1024 for name, kib in rss.peak_kib.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100 nodes x 8 devices, 300 pods running 1 s")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--run-for", default="10s", help="how long each pod runs (a Go duration)")
    parser.add_argument("--serve", action="store_true",
                        help="set this process (API server and client) up as fakeapi serve sets up its own: "
                             "uvloop and tune_gc_for_server")
    parser.add_argument("--writes", action="store_true",
                        help="count the changes to pods, claims and Events per progress interval")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.devices, args.pods, args.run_for = 100, 8, 300, "1s"
    if args.serve:
        tune_gc_for_server()
    result = run_loop(run(args.nodes, args.devices, args.pods, args.run_for, args.writes), args.serve)
    print(f"{args.nodes} nodes x {args.devices} devices, {args.pods} pods running {args.run_for} "
          f"(setup {result['setup_s']:.1f} s): {result['seconds']:.1f} s, {result['pods_per_s']:.1f} pods/s")
    for name, ms in result["cpu_ms_per_pod"].items():
        print(f"  {name}: {ms:.2f} ms CPU per pod, peak RSS {result['peak_rss_mib'][name]:.0f} MiB")
    print(f"  peak RSS together: {sum(result['peak_rss_mib'].values()):.0f} MiB")
    print(f"  baseline: a bare POST took {result['bare_us']:.0f} µs around the run (BareProbe); "
          f"{result['bare_posts_per_pod']:.2f} bare POSTs of wall time per pod")
    print(machine_description())


if __name__ == "__main__":
    main()
