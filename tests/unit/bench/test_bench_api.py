"""The API benchmark's pure parts: latency aggregation, the lean watch reader, the BENCHMARKS.md section update."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from bench.bench_api import (
    BEGIN,
    END,
    QUICK,
    STAMP,
    Latency,
    LeanWatch,
    Rate,
    Throughput,
    WatchReader,
    throughput_report,
    write_section,
)


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


def _chunk(*events: dict) -> bytes:
    data = b"".join(orjson.dumps(e) + b"\n" for e in events)
    return b"%x\r\n%b\r\n" % (len(data), data)


def _added(name: str, stamp: int) -> dict:
    return {"type": "ADDED", "object": {"metadata": {"name": name, "annotations": {STAMP: str(stamp)}}}}


async def test_a_lean_watch_reads_chunks_split_anywhere_and_is_done_after_the_expected_events() -> None:
    reader = WatchReader(expected=3)
    watch = LeanWatch(reader, b"GET / HTTP/1.1\r\n\r\n")
    wire = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunk(_added("a", 0))
            + _chunk(_added("b", 0), _added("c", 0)))
    for i in range(0, len(wire), 7):  # the head and the chunks arrive in pieces
        watch.data_received(wire[i:i + 7])
    assert watch.opened.done() and watch.opened.exception() is None
    assert sorted(reader.latencies_ns) == ["a", "b", "c"] and all(ns > 0 for ns in reader.latencies_ns.values())
    assert reader.done.is_set()


async def test_a_lean_watch_answered_with_an_error_fails_its_opening() -> None:
    class Transport:
        closed = False

        def close(self) -> None:
            self.closed = True

    watch = LeanWatch(WatchReader(expected=1), b"")
    watch.transport = Transport()  # type: ignore[assignment]
    watch.data_received(b"HTTP/1.1 410 Gone\r\nContent-Length: 2\r\n\r\n")
    watch.data_received(b"{}")  # its body is not taken for chunks
    with pytest.raises(RuntimeError, match="410"):
        watch.opened.result()
    assert watch.transport.closed  # type: ignore[attr-defined]
