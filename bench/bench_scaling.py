"""How cost grows: the DRA template workload over a grid of cluster sizes, with a plot.

For every point of the grid (nodes 100, 500, 2,000, 5,000 x devices per node 8, 32, 128) a fresh
child process runs ``FakeCluster(control_plane="process")`` (API server and this client in one
process, scheduler, controllers and kubelet emulation in another: the layout of ``fakeapi
serve``) with the workload of ``bench_scheduler.py``: one ResourceSlice per node, one
DeviceClass, one ResourceClaimTemplate, each pod one template claim.  Per point:

- **pods/s**: ``--pods`` pods created by 32 client tasks; from the first POST until the client's
  pod watch has shown every one of them Running and Ready (claim generated, allocated and
  reserved, pod bound, started by the kubelet emulation).
- **create -> Running latency** p50/p99: then ``--latency-pods`` pods created one at a time, each
  from just before its POST until the client's pod watch delivers it Running and Ready (as in
  ``bench_latency.py``): what one pod costs once the cluster holds the first phase's pods.
- **CPU per pod**: CPU time (user + system) each process spent in the throughput phase, divided
  by its pods: the figure to compare on a busy machine, as it leaves out waiting for a core.  It
  includes what the background below does meanwhile.
- **background CPU**: both processes' CPU use before any pod, over one node-lease renewal
  interval (10 s; every node's heartbeat, as each kubelet renews its lease), in % of one core.
- **memory per pod + claim**: RSS growth over the throughput phase divided by its pods, for
  the API server's process (store, event log; the client in it keeps only names and times) and
  for the control plane's (informer caches, allocator state).

    python bench/bench_scaling.py [--quick] [--write] [--plot PATH] [--point NODESxDEVICES ...]

Full mode writes the plot (matplotlib, the ``bench`` extra) to ``bench/scaling.png``; ``--write``
replaces the generated block of BENCHMARKS.md's "How cost grows" section.  ``--quick`` (the CI
smoke) runs two small points and plots into a temporary file, or says it skips the plot when
matplotlib is not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import dataclasses
import gc
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.nodelease import RENEW_INTERVAL

from bench.common import (
    BENCHMARKS_MD,
    RunningWatch,
    child_pids,
    cpu_seconds,
    create_all,
    create_dra_workload,
    dra_pod,
    machine_description,
    markdown_table,
    percentile,
    replace_generated,
    rss_kib,
)
from fakeapi.cluster import FakeCluster

HERE = Path(__file__).resolve().parent
PLOT = HERE / "scaling.png"
SECTION = "bench_scaling"
IMAGE_ALT = "pods/s, CPU per pod, background CPU, create to Running latency and memory per pod against nodes"
FULL_GRID = [(nodes, devices) for nodes in (100, 500, 2000, 5000) for devices in (8, 32, 128)]
QUICK_GRID = [(20, 8), (100, 8)]
WAIT = 600.0  # seconds a phase may take before the run fails


@dataclass
class Point:
    """The figures of one grid point, measured in one child process."""

    nodes: int
    devices: int
    pods: int
    setup_s: float
    background_cpu_percent: float  # both processes with no pods being created, % of one core
    pods_per_s: float
    latencies_ms: list[float]
    server_cpu_ms_per_pod: float
    control_plane_cpu_ms_per_pod: float
    server_kib_per_pod: float
    control_plane_kib_per_pod: float


async def _settle(pid: int, timeout: float = 120.0) -> None:
    """Wait until process ``pid`` uses under 10 ms of CPU in 200 ms (the control plane has absorbed
    the setup's events: informers, the allocator's device index), or ``timeout`` seconds: with
    thousands of nodes their lease renewals may keep it busy for good."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while True:
                before = cpu_seconds(pid)
                await asyncio.sleep(0.2)
                if cpu_seconds(pid) - before < 0.01:
                    return


async def _background_cpu(pids: tuple[int, ...], seconds: float) -> list[float]:
    """Each process's CPU use with no pods being created, in CPU seconds per second, over
    ``seconds`` (one node-lease renewal interval covers every node's heartbeat once)."""
    before = [cpu_seconds(pid) for pid in pids]
    await asyncio.sleep(seconds)
    return [(cpu_seconds(pid) - b) / seconds for pid, b in zip(pids, before, strict=True)]


def _release_free_memory() -> None:
    """Collect garbage and hand freed heap back to the OS, so that RSS counts live objects: without
    it the memory freed after the setup's large requests hides part of the pods' growth."""
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # glibc


async def measure_point(nodes: int, devices: int, pods: int, latency_pods: int, background_s: float) -> Point:
    """One grid point in a fresh cluster (see the module docstring for what each figure means)."""
    start = time.perf_counter()
    async with FakeCluster(control_plane="process") as cluster, ApiClient(cluster.url) as api:
        (control_plane,) = child_pids()
        await create_dra_workload(api, nodes, devices)
        watch = RunningWatch()
        rv = (await api.list(PODS, "default", limit=1))["metadata"]["resourceVersion"]
        watcher = asyncio.create_task(watch.run(api, PODS, "default", rv))
        try:
            await _settle(control_plane)
            setup_s = time.perf_counter() - start
            pids = (os.getpid(), control_plane)
            background = await _background_cpu(pids, background_s)
            _release_free_memory()
            server_before, control_plane_before = rss_kib(os.getpid()), rss_kib(control_plane)
            cpu_before = [cpu_seconds(pid) for pid in pids]
            start = time.perf_counter()
            await create_all(api, PODS, "default", [dra_pod(f"bulk-{i}") for i in range(pods)])
            await watch.wait_for(pods, WAIT)
            elapsed = time.perf_counter() - start
            pods_per_s = pods / elapsed
            # Gross: the background (node heartbeats) cannot be subtracted, as it slows down while
            # pods compete for the same loops (measured: subtracting it left ~0 at 5,000 nodes).
            server_cpu_ms, control_plane_cpu_ms = ((cpu_seconds(pid) - before) * 1000 / pods
                                                   for pid, before in zip(pids, cpu_before, strict=True))
            _release_free_memory()
            server_kib = (rss_kib(os.getpid()) - server_before) / pods
            control_plane_kib = (rss_kib(control_plane) - control_plane_before) / pods
            latencies = []
            for i in range(latency_pods):
                sent = time.perf_counter()
                await api.create(PODS, "default", dra_pod(f"one-{i}"))
                await watch.wait_for(pods + i + 1, WAIT)
                latencies.append((watch.running_at[f"one-{i}"] - sent) * 1000)
        finally:
            watcher.cancel()
    return Point(nodes, devices, pods, setup_s, round(sum(background) * 100, 1), pods_per_s, latencies,
                 server_cpu_ms, control_plane_cpu_ms, server_kib, control_plane_kib)


def run_point(nodes: int, devices: int, pods: int, latency_pods: int, background_s: float) -> Point:
    """:func:`measure_point` in a child process, so its RSS figures are its own."""
    argv = [sys.executable, __file__, "--child", *map(str, (nodes, devices, pods, latency_pods, background_s))]
    out = subprocess.run(argv, check=True, stdout=subprocess.PIPE).stdout
    return Point(**orjson.loads(out))


def table(points: list[Point]) -> str:
    """The figures of every point as a markdown table."""
    rows = [[f"{p.nodes:,}", p.devices, p.pods, round(p.pods_per_s, 1), round(p.server_cpu_ms_per_pod, 2),
             round(p.control_plane_cpu_ms_per_pod, 2), round(percentile(p.latencies_ms, 50), 1),
             round(percentile(p.latencies_ms, 99), 1), round(p.server_kib_per_pod, 1),
             round(p.control_plane_kib_per_pod, 1), p.background_cpu_percent, round(p.setup_s, 1)] for p in points]
    return markdown_table(["nodes", "devices/node", "pods", "pods/s", "server CPU ms/pod", "control plane CPU ms/pod",
                           "p50 ms", "p99 ms", "server KiB/pod", "control plane KiB/pod", "background CPU %",
                           "setup s"], rows)


def series(points: list[Point], value: str) -> dict[int, tuple[list[int], list[float]]]:
    """Per devices-per-node, the node counts and one figure of each point, in node order: one
    plotted line.  ``value`` names a :class:`Point` field, or ``p50``/``p99`` of the latencies."""
    lines: dict[int, tuple[list[int], list[float]]] = {}
    for p in sorted(points, key=lambda p: (p.devices, p.nodes)):
        xs, ys = lines.setdefault(p.devices, ([], []))
        xs.append(p.nodes)
        ys.append(percentile(p.latencies_ms, int(value[1:])) if value in ("p50", "p99") else getattr(p, value))
    return lines


def plot(points: list[Point], path: Path, title: str) -> None:
    """Pods/s, CPU, background CPU, latency and memory against nodes, one line per devices-per-node,
    into a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # no display: render straight to the file
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, ((rate, cpu, background), (latency, memory, unused)) = plt.subplots(2, 3, figsize=(18, 9),
                                                                           layout="constrained")
    fig.delaxes(unused)
    colours = dict(zip(sorted({p.devices for p in points}), ("tab:blue", "tab:orange", "tab:green", "tab:red"),
                       strict=False))

    def lines(ax: Any, styled: tuple[tuple[str, str, str], ...]) -> None:
        for value, style, label in styled:
            for devices, (xs, ys) in series(points, value).items():
                ax.plot(xs, ys, style, color=colours[devices], label=f"{label}{devices} devices/node")

    lines(rate, (("pods_per_s", "o-", ""),))
    lines(cpu, (("server_cpu_ms_per_pod", "o-", "API server, "), ("control_plane_cpu_ms_per_pod", "s--",
                                                                  "control plane, ")))
    lines(background, (("background_cpu_percent", "o-", ""),))
    lines(latency, (("p50", "o-", "p50, "), ("p99", "s--", "p99, ")))
    lines(memory, (("server_kib_per_pod", "o-", "API server, "), ("control_plane_kib_per_pod", "s--",
                                                                   "control plane, ")))
    rate.set(title="Throughput, 32 client tasks", ylabel="pods/s, create to Running", ylim=(0, None))
    cpu.set(title="CPU per pod in the throughput phase", ylabel="CPU ms per pod", ylim=(0, None))
    background.set(title="Background: node heartbeats, no pods created", ylabel="CPU, % of one core",
                   ylim=(0, None))
    latency.set(title="One pod at a time", ylabel="create to Running, ms", yscale="log")
    latency.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 3, 5)))  # 5, 10, 20, 30 ms ...
    latency.yaxis.set_major_formatter(ticker.ScalarFormatter())  # ... rather than 10^1
    latency.yaxis.set_minor_locator(ticker.NullLocator())
    memory.set(title="Memory per pod + its claim", ylabel="RSS growth per pod, KiB", ylim=(0, None))
    nodes = sorted({p.nodes for p in points})
    for ax in (rate, cpu, background, latency, memory):
        ax.set(xscale="log", xlabel="nodes")
        ax.set_xticks(nodes, [f"{n:,}" for n in nodes])
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.margins(x=0.08)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(points: list[Point], command: str, pods: int, latency_pods: int, image: bool) -> str:
    """The markdown printed and, with ``--write``, put into BENCHMARKS.md (``image``: with the plot)."""
    return "\n".join([
        f"Measured with `{command}` on {machine_description()}, a shared machine with other work "
        f"running (figures move by ±30 % between runs); each point in a fresh process, {pods} pods in the "
        f"throughput phase, then {latency_pods} one at a time.",
        "",
        table(points),
        "",
        f"![{IMAGE_ALT}]({PLOT.relative_to(BENCHMARKS_MD.parent)})"
        if image else "",
    ]).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="CI smoke: two small points, a few seconds")
    parser.add_argument("--point", action="append", metavar="NODESxDEVICES", help="only these grid points")
    parser.add_argument("--pods", type=int, help="pods per point in the throughput phase (default 500, quick 40)")
    parser.add_argument("--latency-pods", type=int, help="pods created one at a time (default 100, quick 10)")
    parser.add_argument("--plot", type=Path, help=f"where the PNG goes (default {PLOT.relative_to(HERE.parent)})")
    parser.add_argument("--write", action="store_true", help="update the How cost grows section of BENCHMARKS.md")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)  # one point, in a child process
    args = parser.parse_args()
    if args.child:
        *sizes, background_s = args.child
        point = asyncio.run(measure_point(*map(int, sizes), float(background_s)))
        sys.stdout.buffer.write(orjson.dumps(dataclasses.asdict(point)))
        return
    grid = ([tuple(int(n) for n in p.lower().split("x")) for p in args.point] if args.point
            else QUICK_GRID if args.quick else FULL_GRID)
    pods = args.pods or (40 if args.quick else 500)
    latency_pods = args.latency_pods or (10 if args.quick else 100)
    points = []
    for nodes, devices in grid:
        points.append(run_point(nodes, devices, pods, latency_pods, 1.0 if args.quick else RENEW_INTERVAL))
        print(table(points).splitlines()[-1], flush=True)
    command = "python bench/bench_scaling.py" + (" --quick" if args.quick else "")
    plotted = None
    try:
        with tempfile.TemporaryDirectory() as tmp:  # --quick: render the plot to check it works, keep none
            target = args.plot or (Path(tmp) / "scaling.png" if args.quick else PLOT)
            plot(points, target, f"DRA template workload, control plane in its own process ({command})")
            plotted = target
        print(f"plot: {plotted}")
    except ImportError:
        print("plot: skipped, matplotlib is not installed (pip install -e '.[bench]', or make bench)")
    text = report(points, command, pods, latency_pods, image=plotted == PLOT)
    print(text)
    if args.write:
        replace_generated(SECTION, text)


if __name__ == "__main__":
    main()
