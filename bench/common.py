"""Helpers shared by the benchmarks: repetition, percentiles, markdown output, process memory,
the generated blocks of BENCHMARKS.md, a pod watch that times pods to Running, the bare aiohttp
server that is the baseline of every ratio (and its probe of the host's speed), and instruction
counts under valgrind's callgrind.

Nothing here imports fakeapi, so the unit tests check these helpers without a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``samples``, linearly interpolated between ranks.

    Interpolation (numpy's default) keeps p99 meaningful for a few hundred samples, where
    nearest-rank would just return the maximum.
    """
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} outside 0..100")
    ordered = sorted(samples)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


async def median_of(runs: int, measure: Callable[[], Awaitable[float]]) -> tuple[float, list[float]]:
    """Await ``measure()`` ``runs`` times in sequence; return the median and every value."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    values = [await measure() for _ in range(runs)]
    return statistics.median(values), values


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; numbers are right-aligned, everything else left-aligned."""
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|")

    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}: {row!r}")
    numeric = [bool(rows) and all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_description() -> str:
    """One line naming the machine a figure was measured on: CPUs, Python, OS, date."""
    today = datetime.date.today().isoformat()
    return (f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}, {today}")


BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def replace_generated(name: str, text: str, path: Path = BENCHMARKS_MD) -> None:
    """Put ``text`` between the ``<!-- name:begin -->`` and ``<!-- name:end -->`` markers of
    ``path``, leaving the rest of the file (other sections, the prose around the block) alone."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    content = path.read_text()
    if content.count(begin) != 1 or content.count(end) != 1 or content.index(begin) > content.index(end):
        raise ValueError(f"{path} needs one {begin} ... {end} block")
    head, rest = content.split(begin)
    path.write_text(f"{head}{begin}\n{text}\n{end}{rest.split(end)[1]}")


def rss_kib(pid: int) -> int:
    """The resident set size of process ``pid`` now, in KiB (Linux procfs)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process ``pid`` has used so far, in seconds (Linux procfs): unlike
    wall time, it does not grow while the process waits for a core on a busy machine."""
    # Fields after the parenthesised command name (which may hold spaces): utime and stime are
    # the 12th and 13th, in clock ticks.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int | None = None) -> list[int]:
    """The running children of process ``pid`` (default this one), from procfs."""
    children: list[int] = []
    for task in Path(f"/proc/{pid or os.getpid()}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended since the listing
            children += map(int, (task / "children").read_text().split())
    return sorted(children)


def is_running_and_ready(pod: dict[str, Any]) -> bool:
    """Whether a pod's status says phase Running with condition Ready=True."""
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


class RunningWatch:
    """One watch stamping when each pod first shows Running and Ready (``perf_counter``), for
    benchmarks that time pods to Running; ``api`` is a ``fakeapi.scheduler.client.ApiClient``."""

    def __init__(self) -> None:
        self.running_at: dict[str, float] = {}
        self._changed = asyncio.Event()

    async def run(self, api: Any, gvr: Any, namespace: str, resource_version: str) -> None:
        """Follow the watch from ``resource_version`` until cancelled."""
        async for event in api.watch(gvr, namespace, resource_version=resource_version):
            name = event["object"].get("metadata", {}).get("name")
            if event["type"] != "BOOKMARK" and name not in self.running_at and is_running_and_ready(event["object"]):
                self.running_at[name] = time.perf_counter()
                self._changed.set()

    async def wait_for(self, count: int, timeout: float) -> None:
        """Return once ``count`` pods have been seen Running; TimeoutError after ``timeout`` s."""
        async with asyncio.timeout(timeout):
            while len(self.running_at) < count:
                self._changed.clear()
                await self._changed.wait()


# -- the baseline: a bare aiohttp server ------------------------------------------------------

BARE_BODY = b'{"kind":"Status","apiVersion":"v1","status":"Success"}'
# BareProbe.around: the POSTs of each batch it times, after a few it does not.
PROBE_REQUESTS = 200
PROBE_WARM_UP = 10
T = TypeVar("T")


async def bare_handler(request: web.Request) -> web.Response:
    """The bare server's only handler: a fixed JSON body, nothing read or checked."""
    return web.Response(body=BARE_BODY, content_type="application/json")


async def start_bare_server(handler: Handler = bare_handler) -> tuple[web.AppRunner, str]:
    """An aiohttp server, configured like fakeapi's, answering every path with ``handler``;
    returns its runner (to clean up) and base URL."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, handler_cancellation=True)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    return runner, f"http://{host}:{port}"


class BareProbe:
    """The host's speed in the minutes a figure is measured: POSTs from aiohttp's client to the
    bare server, one at a time, in this process (``async with``).

    This shared machine's speed moves by half within an hour (bench_latency's p50 measured 5.0 and
    8.9 ms ten minutes apart), so a benchmark with an absolute target times batches around each
    run it measures (:meth:`around`) and reports its figures also in bare POSTs of those minutes:
    a ratio to a baseline measured in the same run, which the hour's speed moves far less.
    """

    def __init__(self, handler: Handler = bare_handler) -> None:
        self._handler = handler
        self.batches: list[float] = []  # the median µs of each batch, in order

    async def __aenter__(self) -> BareProbe:
        self._runner, self._url = await start_bare_server(self._handler)
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._session.close()
        await self._runner.cleanup()

    async def batch(self, requests: int) -> float:
        """Send ``requests`` POSTs one after another; the median wall-clock µs of one (also kept
        in :attr:`batches`)."""
        self.batches.append(statistics.median(await self._timed(requests)))
        return self.batches[-1]

    async def around(self, run: Awaitable[T]) -> tuple[T, float]:
        """Await ``run`` between two batches of :data:`PROBE_REQUESTS` POSTs; its result and the
        mean of the two batches' medians (µs).  Outside the run, so that the batches time the host
        and not the run's own processes; each after a few POSTs not kept (the keep-alive
        connection may have been closed while idle)."""
        await self._timed(PROBE_WARM_UP)
        before = await self.batch(PROBE_REQUESTS)
        result = await run
        await self._timed(PROBE_WARM_UP)
        return result, (before + await self.batch(PROBE_REQUESTS)) / 2

    async def _timed(self, requests: int) -> list[float]:
        took = []
        for _ in range(requests):
            start = time.perf_counter()
            async with self._session.post(self._url + "/probe", data=BARE_BODY) as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"the bare server answered {resp.status}")
            took.append((time.perf_counter() - start) * 1e6)
        return took


async def probed(run: Awaitable[T]) -> tuple[T, float]:
    """``run`` between the batches of a fresh :class:`BareProbe` (:meth:`BareProbe.around`): its
    result and a bare POST's µs in its minutes."""
    async with BareProbe() as probe:
        return await probe.around(run)


# The DRA template workload of scheduler_perf's SchedulingWithResourceClaimTemplate, shared by the
# benchmarks that run it: nodes with one ResourceSlice each, one DeviceClass selecting the driver's
# devices, one ResourceClaimTemplate, pods with one claim from that template.

DRIVER = "test-driver.cdi.k8s.io"
CREATE_CONCURRENCY = 32
DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "test-claim-template"},
            "spec": {"spec": {"devices": {"requests": [{"name": "req-0",
                                                        "exactly": {"deviceClassName": "test-class"}}]}}}}


def dra_node(i: int) -> dict[str, Any]:
    """Node ``i`` of the workload (4 CPUs, 32 GiB, 110 pods)."""
    name = f"scheduler-perf-dra-{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


def dra_slice(i: int, devices: int) -> dict[str, Any]:
    """The one ResourceSlice of node ``i``: ``devices`` GPUs with four attributes and a capacity."""
    node = f"scheduler-perf-dra-{i}"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-slice"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"device-{d}",
                                  "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                 "driverVersion": {"version": "1.2.3"}, "numa": {"int": d}},
                                  "capacity": {"memory": {"value": "1Gi"}}}
                                 for d in range(devices)]}}


def dra_pod(name: str) -> dict[str, Any]:
    """A pod with one claim from :data:`TEMPLATE`."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "resource"}]}}],
                     "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}}


async def create_dra_workload(api: Any, nodes: int, devices: int) -> None:
    """The workload's cluster through ``api``: ``nodes`` nodes with ``devices`` devices each, the
    DeviceClass and the ResourceClaimTemplate (the pods are each benchmark's own)."""
    from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES

    await create_all(api, NODES, None, [dra_node(i) for i in range(nodes)])
    await create_all(api, RESOURCE_SLICES, None, [dra_slice(i, devices) for i in range(nodes)])
    await api.create(DEVICE_CLASSES, None, DEVICE_CLASS)
    await api.create(RESOURCE_CLAIM_TEMPLATES, "default", TEMPLATE)


async def create_all(api: Any, gvr: Any, namespace: str | None, bodies: list[dict[str, Any]]) -> None:
    """Create ``bodies`` through ``api`` (an ``ApiClient``), :data:`CREATE_CONCURRENCY` at a time."""
    sem = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(body: dict[str, Any]) -> None:
        async with sem:
            await api.create(gvr, namespace, body)

    await asyncio.gather(*(one(b) for b in bodies))


def run_loop(main: Any, uvloop: bool) -> Any:
    """Run coroutine ``main`` in a new event loop: uvloop's (as ``fakeapi serve`` runs) or asyncio's."""
    from fakeapi.config import run_main

    return run_main(main) if uvloop else asyncio.run(main)
