"""The API benchmark's pure parts: latency aggregation and the BENCHMARKS.md section update."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.bench_api import BEGIN, END, Latency, WatchReader, write_section


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
