"""Memory: what one stored object costs, and what churning 1 MiB objects holds.

    python bench/bench_memory.py [--quick] [--runs N]

Every measurement runs in a fresh child process (this script with ``--child``), so the RSS it
reports is its own; each figure is the median of ``--runs`` runs.  Writes go through the
registry's write pipeline, the path HTTP writes take, with no client in the process.

- Per stored object: RSS growth over ``count`` creates of a kind, divided by ``count``.  Twice in
  the same run: with the event log keeping the creates (the default byte budget), and with a
  budget of 0 bytes, where the log keeps only the newest event; the difference is the log's share.
- Churn: a 1 MiB ConfigMap created and deleted ``cycles`` times, with the default byte budget and
  without one (the 100,000-event window alone, as before the budget existed).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine_description, markdown_table
from fakeapi.config import ServerOptions
from fakeapi.registry.writes import WriteOptions
from fakeapi.server.app import create_app
from fakeapi.server.state import REGISTRY

DEFAULT_BUDGET_MIB = ServerOptions().event_window_bytes / 2**20 if ServerOptions().event_window_bytes else 0


@dataclasses.dataclass(frozen=True)
class Mode:
    runs: int
    count: int  # objects per per-object run
    cycles: int  # create/delete pairs per churn run
    step: int  # cycles between two churn samples


FULL = Mode(runs=3, count=3000, cycles=240, step=60)
QUICK = Mode(runs=1, count=200, cycles=10, step=5)


def configmap(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"cm-{i}", "labels": {"app": "bench"}},
            "data": {"mode": "fast", "replicas": "3", "endpoint": f"http://svc-{i}.default:8080"}}


def pod(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"pod-{i}", "labels": {"app": "trainer", "index": str(i)}},
            "spec": {"containers": [{"name": "main", "image": "registry.example/trainer:1.4",
                                     "command": ["python", "train.py"], "args": ["--epochs", "10"],
                                     "resources": {"requests": {"cpu": "2", "memory": "4Gi"},
                                                   "claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}


def claim(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"claim-{i}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com", "count": 2,
                "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].memory >= 40"}}]}}]}}}


# kind -> (group, version, plural, object builder)
KINDS = {"ConfigMap": ("", "v1", "configmaps", configmap), "Pod": ("", "v1", "pods", pod),
         "ResourceClaim": ("resource.k8s.io", "v1", "resourceclaims", claim)}


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _registry(window_bytes: int | None) -> Any:
    return create_app(ServerOptions(event_window_bytes=window_bytes))[REGISTRY]


def per_object(kind: str, count: int, window_bytes: int | None) -> dict[str, float]:
    """RSS per stored object of ``kind`` and the JSON size of one (child process)."""
    group, version, plural, make = KINDS[kind]
    registry = _registry(window_bytes)
    rt = registry.kinds.resource(group, version, plural)
    bodies = [make(i) for i in range(count)]
    opts = WriteOptions(manager="bench")
    gc.collect()
    before = _rss_bytes()
    for body in bodies:
        registry.writes.create(rt, "default", body, opts)
    del bodies
    gc.collect()
    stored = registry.reads.get(rt, "default", make(0)["metadata"]["name"])
    return {"rss_per_object": (_rss_bytes() - before) / count, "json_bytes": len(orjson.dumps(stored))}


def churn(cycles: int, step: int, window_bytes: int | None) -> dict[str, Any]:
    """RSS growth (MiB) every ``step`` create/delete cycles of a 1 MiB ConfigMap (child process)."""
    registry = _registry(window_bytes)
    rt = registry.kinds.resource("", "v1", "configmaps")
    opts = WriteOptions(manager="bench")
    gc.collect()
    before = _rss_bytes()
    growth = []
    for i in range(cycles):
        blob = f"{i:08}".ljust(1 << 20, "x")  # a string of its own, as every request body brings
        registry.writes.create(rt, "default", {"metadata": {"name": f"big-{i}"}, "data": {"v": blob}}, opts)
        registry.writes.delete(rt, "default", f"big-{i}", {})
        if (i + 1) % step == 0:
            gc.collect()
            growth.append((_rss_bytes() - before) / 2**20)
    return {"growth_mib": growth, "log_mib": registry.store.log.bytes / 2**20}


async def _child(*args: str) -> Any:
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--child", *args,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} failed with exit code {proc.returncode}")
    return orjson.loads(out)


def _budget(value: int | None) -> str:
    return "none" if value is None else str(value)


async def measure(mode: Mode) -> str:
    default = ServerOptions().event_window_bytes
    rows = []
    for kind in KINDS:
        kept, bare = [], []
        for _ in range(mode.runs):  # alternate the two configurations run by run
            kept.append(await _child("object", kind, str(mode.count), _budget(default)))
            bare.append(await _child("object", kind, str(mode.count), "0"))
        with_log = statistics.median(r["rss_per_object"] for r in kept)
        store_only = statistics.median(r["rss_per_object"] for r in bare)
        rows.append([kind, kept[0]["json_bytes"], round(with_log / 1024, 1), round(store_only / 1024, 1),
                     round((with_log - store_only) / 1024, 1)])
    per_object_table = markdown_table(
        ["kind", "stored JSON bytes", "KiB per object", "KiB per object, log compacted", "of which the log"], rows)
    bounded, unbounded = [], []
    for _ in range(mode.runs):
        bounded.append(await _child("churn", str(mode.cycles), str(mode.step), _budget(default)))
        unbounded.append(await _child("churn", str(mode.cycles), str(mode.step), "none"))
    churn_rows = [[(i + 1) * mode.step, round(statistics.median(r["growth_mib"][i] for r in bounded)),
                   round(statistics.median(r["growth_mib"][i] for r in unbounded))]
                  for i in range(mode.cycles // mode.step)]
    churn_table = markdown_table(["create/delete cycles", f"RSS growth MiB, {DEFAULT_BUDGET_MIB:g} MiB budget",
                                  "RSS growth MiB, no byte budget"], churn_rows)
    return "\n\n".join([
        f"Measured with `python bench/bench_memory.py{' --quick' if mode is QUICK else ''}` on "
        f"{machine_description()}; each figure the median of {mode.runs} run(s), each run in a fresh process.",
        f"**Per stored object**: RSS growth over {mode.count} creates, per object; \"log compacted\" is the "
        "same run with an event-log budget of 0 bytes, so the log keeps only the newest event.",
        per_object_table,
        f"**Churn**: a 1 MiB ConfigMap created and deleted {mode.cycles} times, no watcher open.",
        churn_table,
        f"The log held {statistics.median(r['log_mib'] for r in bounded):.0f} MiB of watch lines at the end "
        f"with the budget, {statistics.median(r['log_mib'] for r in unbounded):.0f} MiB without it.",
    ])


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (a few seconds)")
    parser.add_argument("--runs", type=int, help="runs per figure (median)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)  # one measurement, in a child process
    return parser.parse_args(argv)


def _run_child(args: list[str]) -> Any:
    budget = None if args[-1] == "none" else int(args[-1])
    if args[0] == "object":
        return per_object(args[1], int(args[2]), budget)
    return churn(int(args[1]), int(args[2]), budget)


if __name__ == "__main__":
    options = _parse_args()
    if options.child:
        sys.stdout.buffer.write(orjson.dumps(_run_child(options.child)))
    else:
        chosen = QUICK if options.quick else FULL
        if options.runs:
            chosen = dataclasses.replace(chosen, runs=options.runs)
        print(asyncio.run(measure(chosen)))
