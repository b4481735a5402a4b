"""The API benchmark's pure parts: latency aggregation and the BENCHMARKS.md section update."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bench.bench_api import BEGIN, END, QUICK, Latency, Rate, Throughput, WatchReader, throughput_report, write_section


def reader(**latencies_ns: int) -> WatchReader:
    r = WatchReader(expected=len(latencies_ns))
    r.latencies_ns.update(latencies_ns)
    return r


def test_latency_keeps_every_delivery_and_the_slowest_watcher_per_write() -> None:
    latency = Latency.of([reader(a=1_000_000, b=4_000_000), reader(a=3_000_000, b=2_000_000)])
    assert sorted(latency.deliveries) == [1.0, 2.0, 3.0, 4.0]
    assert sorted(latency.per_write_max) == [3.0, 4.0]


@pytest.mark.parametrize(("before", "after"), [
    ("", f"## API server\n\n{BEGIN}\nnew\n{END}\n"),
    ("# Benchmarks\n\nintro\n", f"# Benchmarks\n\nintro\n\n## API server\n\n{BEGIN}\nnew\n{END}\n"),
    (f"# B\n\n## API server\n\nnotes\n\n{BEGIN}\nold\n{END}\n\nmore notes\n\n## Scheduler\n\nkept\n",
     f"# B\n\n## API server\n\nnotes\n\n{BEGIN}\nnew\n{END}\n\nmore notes\n\n## Scheduler\n\nkept\n"),
], ids=["no-file-content", "appends-section", "replaces-only-generated-block"])
def test_write_section(tmp_path: Path, before: str, after: str) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(before)
    write_section("new", path)
    assert path.read_text() == after


def test_throughput_report_gives_collections_per_thousand_requests() -> None:
    tp = Throughput()
    for run, collections in enumerate(([30, 3, 0], [20, 2, 1])):
        for load in ("create ConfigMap", "get ConfigMap", "create Pod", "get Pod", "bare POST", "bare GET"):
            fakeapi = not load.startswith("bare")
            tp.add(load, Rate(wall=1000.0 + run, cpu=2000.0 + run), collections if fakeapi else None)
    report = throughput_report(dataclasses.replace(QUICK, runs=2, requests=500), tp)
    assert "create Pod: collections (gen 0/1/2) per 1,000 requests 50.0/5.0/1.0" in report
    assert "bare POST: collections" not in report
    assert "| create ConfigMap | 1000 | bare POST | 1000 | 100% | 100% (100%–100%) | 0 |" in report
