"""The benchmarks' timing helpers: percentiles, repetition, markdown tables."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bench import common
from bench.common import (
    BareProbe,
    RunningWatch,
    bare_handler,
    child_pids,
    cpu_seconds,
    is_running_and_ready,
    machine_description,
    markdown_table,
    median_of,
    percentile,
    probed,
    replace_generated,
    rss_kib,
)


@pytest.mark.parametrize(("samples", "q", "expected"), [
    ([5.0], 50, 5.0),
    ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
    ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
    ([4.0, 1.0, 3.0, 2.0], 50, 2.5),
    (list(range(101)), 99, 99.0),
    ([0.0, 10.0], 99, 9.9),
], ids=["single", "min", "max", "unsorted-median-interpolated", "exact-rank", "interpolated-p99"])
def test_percentile(samples: list[float], q: float, expected: float) -> None:
    assert percentile(samples, q) == pytest.approx(expected)


@pytest.mark.parametrize(("samples", "q"), [([], 50), ([1.0], -1), ([1.0], 101)],
                         ids=["empty", "below-0", "above-100"])
def test_percentile_rejects(samples: list[float], q: float) -> None:
    with pytest.raises(ValueError):
        percentile(samples, q)


async def test_median_of_runs_in_sequence() -> None:
    values = iter([3.0, 1.0, 2.0])

    async def measure() -> float:
        return next(values)

    assert await median_of(3, measure) == (2.0, [3.0, 1.0, 2.0])


def test_markdown_table_aligns_numbers_right_and_escapes_pipes() -> None:
    table = markdown_table(["load", "req/s"], [["a|b", 10], ["c", 2.5]])
    assert table.splitlines() == ["| load | req/s |", "|---|---:|", "| a\\|b | 10 |", "| c | 2.5 |"]


def test_markdown_table_rejects_ragged_rows() -> None:
    with pytest.raises(ValueError, match="expected 2"):
        markdown_table(["a", "b"], [[1]])


def test_machine_description_names_python_and_cpus() -> None:
    import platform

    text = machine_description()
    assert platform.python_version() in text and "CPUs" in text


BEGIN, END = "<!-- demo:begin -->", "<!-- demo:end -->"


@pytest.mark.parametrize(("before", "after"), [
    (f"{BEGIN}\nold\n{END}", f"{BEGIN}\nnew\n{END}"),
    (f"# B\n\nprose\n\n{BEGIN}\nold\nlines\n{END}\n\nmore\n\n<!-- other:begin -->\nx\n<!-- other:end -->\n",
     f"# B\n\nprose\n\n{BEGIN}\nnew\n{END}\n\nmore\n\n<!-- other:begin -->\nx\n<!-- other:end -->\n"),
], ids=["only-the-block", "keeps-prose-and-other-blocks"])
def test_replace_generated(tmp_path: Path, before: str, after: str) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(before)
    replace_generated("demo", "new", path)
    assert path.read_text() == after


@pytest.mark.parametrize("content", [
    "no markers", f"{BEGIN}\nonly the start\n", f"{END}\n{BEGIN}\n", f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
], ids=["none", "no-end", "end-first", "twice"])
def test_replace_generated_needs_one_block(tmp_path: Path, content: str) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(content)
    with pytest.raises(ValueError, match="demo:begin"):
        replace_generated("demo", "new", path)
    assert path.read_text() == content


def test_rss_and_children_of_a_real_child() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert child.pid in child_pids()
        assert child_pids(child.pid) == []
        assert 0 < rss_kib(child.pid) < rss_kib(os.getpid()) + 1024 * 1024
    finally:
        child.communicate(b"")
    assert child.pid not in child_pids()


def test_cpu_seconds_counts_this_process_work() -> None:
    before = cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:  # burn 50 ms of CPU
        pass
    assert cpu_seconds(os.getpid()) - before >= 0.03  # clock-tick resolution (10 ms)


def test_rss_kib_of_a_missing_process() -> None:
    with pytest.raises(FileNotFoundError):
        rss_kib(2**22 + 1)  # above Linux's pid_max limit: never a process


READY = {"type": "Ready", "status": "True"}


@pytest.mark.parametrize(("status", "expected"), [
    ({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, READY]}, True),
    ({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}, False),
    ({"phase": "Running"}, False),
    ({"phase": "Pending", "conditions": [READY]}, False),
    (None, False),
], ids=["running-ready", "running-not-ready", "no-conditions", "pending", "no-status"])
def test_is_running_and_ready(status: dict | None, expected: bool) -> None:
    assert is_running_and_ready({"metadata": {"name": "p"}, "status": status}) is expected


def pod(name: str, phase: str, ready: bool) -> dict:
    return {"metadata": {"name": name}, "status": {"phase": phase, "conditions": [READY] if ready else []}}


class ScriptedWatch:
    """Stands in for ``ApiClient.watch``: yields the given events, then waits to be cancelled."""

    def __init__(self, events: list[dict]) -> None:
        self.events = events
        self.asked: tuple = ()

    async def watch(self, gvr: str, namespace: str, *, resource_version: str) -> AsyncIterator[dict]:
        self.asked = (gvr, namespace, resource_version)
        for event in self.events:
            await asyncio.sleep(0)
            yield event
        await asyncio.Event().wait()


async def test_running_watch_stamps_each_pod_once_when_it_first_runs() -> None:
    api = ScriptedWatch([
        {"type": "ADDED", "object": pod("a", "Pending", False)},
        {"type": "MODIFIED", "object": pod("a", "Running", False)},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
        {"type": "MODIFIED", "object": pod("a", "Running", True)},
        {"type": "ADDED", "object": pod("b", "Running", True)},
        {"type": "MODIFIED", "object": pod("a", "Running", True)},
    ])
    watch = RunningWatch()
    task = asyncio.create_task(watch.run(api, "pods", "default", "5"))
    try:
        await watch.wait_for(2, timeout=5)
        first = dict(watch.running_at)
        await asyncio.sleep(0.01)  # the last event (a again) has been handled: a keeps its first stamp
        assert watch.running_at == first and list(first) == ["a", "b"] and first["a"] <= first["b"]
        assert api.asked == ("pods", "default", "5")
        with pytest.raises(TimeoutError):
            await watch.wait_for(3, timeout=0.05)
    finally:
        task.cancel()


async def test_bare_probe_times_one_post_at_a_time_to_its_server() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.004)
        return await bare_handler(request)

    async with BareProbe() as bare, BareProbe(slow) as slowed:
        fast_us, slow_us = await bare.batch(9), await slowed.batch(9)
        assert slow_us >= 4000 and 0 < fast_us < slow_us  # the server's time is in each figure
        await bare.batch(3)
    assert bare.batches[0] == fast_us and len(bare.batches) == 2 and slowed.batches == [slow_us]


async def test_probed_runs_between_the_batches_of_its_own_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "PROBE_REQUESTS", 3)
    seen: list[str] = []

    async def run() -> str:
        seen.append("ran")
        return "measured"

    result, bare_us = await probed(run())
    assert (result, seen) == ("measured", ["ran"]) and bare_us > 0


async def test_bare_probe_around_a_run_is_the_mean_of_a_batch_before_and_one_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "PROBE_REQUESTS", 5)
    delay = [0.002]

    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(delay[0])
        return await bare_handler(request)

    async def run() -> str:  # the host slows down while it runs
        delay[0] = 0.006
        return "measured"

    async with BareProbe(handler) as probe:
        result, bare_us = await probe.around(run())
    before, after = probe.batches
    assert result == "measured" and 2000 <= before < after and after >= 6000 and bare_us == (before + after) / 2


async def test_bare_probe_refuses_an_answer_that_is_not_ok() -> None:
    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=503)

    async with BareProbe(failing) as probe:
        with pytest.raises(RuntimeError, match="answered 503"):
            await probe.batch(1)
    assert probe.batches == []
