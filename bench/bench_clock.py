"""What a ``ManualClock`` advance costs now that it settles the cluster after every timer.

    python bench/bench_clock.py [--quick] [--runs N]

An in-process ``FakeCluster`` on a ``ManualClock`` with N Ready nodes (each renews its Lease every
10 s, the node lifecycle controller passes every 5 s, the pod garbage collector every 20 s) is
advanced by a span of simulated time in one call; the figure is CPU seconds per advance (median
of ``--runs``), and the timers it ran.  Each timer's work (a Lease renewal is an HTTP PUT) now
happens at its own time, before the next timer fires, so the cost grows with the simulated span
times the nodes: what a test pays to skip an hour.  Results go to BENCHMARKS.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import NODES, ApiClient
from fakeapi.scheduler.clock import ManualClock

from fakeapi.cluster import FakeCluster

CAPACITY = {"cpu": "8", "memory": "16Gi", "pods": "110"}


def node(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "status": {"capacity": CAPACITY, "allocatable": CAPACITY,
                                                    "conditions": [{"type": "Ready", "status": "True"}]}}


async def advance_cost(nodes: int, seconds: float) -> tuple[float, int]:
    """(CPU seconds of one advance, timers run during it) on a fresh cluster."""
    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster, ApiClient(cluster.url) as api:
        for i in range(nodes):
            await api.create(NODES, None, node(f"node-{i}"))
        await cluster.settle()
        fired = 0
        original = clock.call_later

        def counted(delay: float, callback):  # type: ignore[no-untyped-def]
            nonlocal fired
            fired += 1
            return original(delay, callback)

        clock.call_later = counted  # type: ignore[method-assign]
        cpu = time.process_time()
        await clock.advance(seconds)
        return time.process_time() - cpu, fired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short advance (CI smoke)")
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median)")
    args = parser.parse_args()
    cases = [(2, 60.0)] if args.quick else [(2, 300.0), (10, 300.0), (10, 3600.0), (50, 3600.0)]
    runs = 1 if args.quick else args.runs
    print("| nodes | simulated span | timers armed | CPU s per advance (median) | CPU ms per timer |")
    print("|---:|---:|---:|---:|---:|")
    for nodes, seconds in cases:
        results = [asyncio.run(advance_cost(nodes, seconds)) for _ in range(runs)]
        cpu = statistics.median(r[0] for r in results)
        timers = int(statistics.median(r[1] for r in results))
        print(f"| {nodes} | {seconds:.0f} s | {timers} | {cpu:.2f} | {cpu / max(timers, 1) * 1000:.2f} |")


if __name__ == "__main__":
    main()
