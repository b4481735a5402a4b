"""API server benchmarks: start-up, request throughput, watch fan-out, a slow watcher.

    python bench/bench_api.py [--quick] [--runs N] [--profile] [--write] [--uvloop] [--throughput | --fanout]

Everything runs in this process and on one event loop, as ``FakeCluster`` is used in tests: the
HTTP client's own cost is inside every figure.  That is why throughput is compared, in the same
run and with the same client, against a bare aiohttp server whose handler does no work: the
ratio (and the extra CPU microseconds per request) is the cost fakeapi adds over aiohttp itself.

1. start-up: ``FakeCluster(control_plane=False)`` entered until ``GET /version`` is answered.
2. throughput: create and get of ConfigMaps and Pods by ``CONCURRENCY`` client tasks over
   keep-alive connections, against fakeapi and against the bare server.
3. watch fan-out: 100 and then 1,000 watches on ConfigMaps (``Mode.fanout_watchers``); one writer
   creates ConfigMaps in sequence, each stamped with ``time.perf_counter_ns()``; the latency is
   stamp → line parsed by a watcher.  Then the 1,000 watchers in a child process, read once with
   aiohttp and once with lean readers (``LeanWatch``), so the server's delivery is seen apart from
   one Python process's parsing of 1,000 lines.
4. slow watcher: concurrent writers create ConfigMaps while one watcher never reads.  Runs with
   and without it, each in a fresh child process (``--slow-run``) so RSS growth is its own; the
   slow one must end with a 410 ERROR, and the other watchers' latency is compared across runs.

``--write`` replaces the generated part of the "API server" section of BENCHMARKS.md; ``--uvloop``
runs everything (the child processes too) on uvloop's event loop instead of asyncio's;
``--throughput`` runs phase 2 alone and adds each fakeapi load's collections per 1,000 requests;
``--fanout`` runs phase 3 alone.

``--instructions`` measures something else, deterministically: valgrind's callgrind counts the
instructions of one request (client included) on one keep-alive connection, for the bare server
and fakeapi's loads, each in a child process under valgrind with counting switched on around the
measured requests only (``bench.common.callgrind_counting``), CPython's collector off.  With
``--cache-sim`` it also simulates one core's L1 and L2 caches and counts their misses: a request's
code and data do not fit in L2, so every distinct line a path touches costs a miss, which the
instruction count does not see and which the CPU ratio pays.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import functools
import gc
import io
import os
import pstats
import re
import resource
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.callgrind import callgrind_cache_counts, callgrind_counting, callgrind_instructions
from bench.common import machine_description, markdown_table, median_of, percentile, run_loop, start_bare_server
from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions

CONCURRENCY = 8
STAMP = "bench.fakeapi.io/written-ns"
# Big slow-phase objects make the server's socket buffers fill after ~1k events, not ~6k.
SLOW_PAYLOAD = 4096
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
JSON = {"Content-Type": "application/json", "Accept": "application/json"}
BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
BEGIN, END = "<!-- bench_api:begin -->", "<!-- bench_api:end -->"
DEADLINE = 120.0  # seconds any one phase may take before the benchmark fails loudly


@dataclass(frozen=True)
class Mode:
    """Sizes of one benchmark run."""

    runs: int
    startup_runs: int
    requests: int
    fanout_writes: int
    fanout_watchers: tuple[int, ...]
    child_pause: float  # seconds between writes when the watchers run in a child process
    slow_writes: int
    slow_limit: int  # the server's per-watcher backlog limit in the slow-watcher phase
    slow_others: int
    slow_pairs: int  # runs without and with the slow watcher, alternating order


FULL = Mode(runs=5, startup_runs=15, requests=3000, fanout_writes=200, fanout_watchers=(100, 1000), child_pause=0.2,
            slow_writes=20_000, slow_limit=10_000, slow_others=10, slow_pairs=2)
# The smoke (make bench-smoke, after the test suite in make test) proves every phase still runs;
# its figures mean nothing, so the fan-out opens 10 and 100 watches rather than 100 and 1,000
# (about 2 s of CPU and 4 s of wall time less).
QUICK = Mode(runs=1, startup_runs=3, requests=300, fanout_writes=10, fanout_watchers=(10, 100), child_pause=0.02,
             slow_writes=2_000, slow_limit=300, slow_others=10, slow_pairs=1)


def configmap(name: str, stamp_ns: int | None = None, payload: int = 64) -> dict[str, Any]:
    annotations = {STAMP: str(stamp_ns)} if stamp_ns is not None else {}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "annotations": annotations},
            "data": {"key": "value", "payload": "x" * payload}}


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def _check(status: int, what: str) -> None:
    if status >= 300:
        raise RuntimeError(f"{what}: HTTP {status}")


# -- 1. start-up ------------------------------------------------------------------------------


async def startup_ms(session: aiohttp.ClientSession) -> float:
    """Milliseconds from entering ``FakeCluster`` to the answer of ``GET /version``."""
    start = time.perf_counter()
    async with FakeCluster(control_plane=False) as cluster:
        async with session.get(cluster.url + "/version") as resp:
            await resp.read()
            elapsed = time.perf_counter() - start
            _check(resp.status, "GET /version")
    return elapsed * 1000


# -- 2. throughput ----------------------------------------------------------------------------

Request = tuple[str, str, bytes | None]


@dataclass(frozen=True)
class Rate:
    """Requests per second of wall-clock time and per second of this process's CPU time.

    The CPU rate hardly moves when other processes compete for the machine, so ratios between
    two servers are taken from it.
    """

    wall: float
    cpu: float


async def drive(session: aiohttp.ClientSession, base: str, requests: list[Request]) -> Rate:
    """Send ``requests`` from ``CONCURRENCY`` tasks and measure the rate."""
    async def worker(first: int) -> None:
        for method, path, body in requests[first::CONCURRENCY]:
            async with session.request(method, base + path, data=body, headers=JSON) as resp:
                await resp.read()
                _check(resp.status, f"{method} {path}")

    start, cpu_start = time.perf_counter(), time.process_time()
    async with asyncio.timeout(DEADLINE), asyncio.TaskGroup() as tasks:
        for first in range(CONCURRENCY):
            tasks.create_task(worker(first))
    return Rate(len(requests) / (time.perf_counter() - start), len(requests) / (time.process_time() - cpu_start))


@dataclass
class Throughput:
    """Rates per load, one per run, and the collector's collections per generation during each load."""

    runs: dict[str, list[Rate]] = field(default_factory=dict)
    collections: dict[str, list[int]] = field(default_factory=dict)

    def add(self, load: str, rate: Rate, collections: list[int] | None = None) -> None:
        self.runs.setdefault(load, []).append(rate)
        if collections is not None:
            totals = self.collections.setdefault(load, [0, 0, 0])
            totals[:] = [a + b for a, b in zip(totals, collections, strict=True)]

    def wall(self, load: str) -> float:
        return statistics.median(r.wall for r in self.runs[load])

    def cpu(self, load: str) -> float:
        return statistics.median(r.cpu for r in self.runs[load])

    def cpu_ratios(self, load: str, bare: str) -> list[float]:
        """fakeapi / bare CPU rate per run (both measured back to back in the run)."""
        return [f.cpu / b.cpu for f, b in zip(self.runs[load], self.runs[bare], strict=True)]


def _loads(run: int, n: int) -> dict[str, list[Request]]:
    cms = [f"cm-{run}-{i}" for i in range(n)]
    pods = [f"pod-{run}-{i}" for i in range(n)]
    return {
        "create ConfigMap": [("POST", CONFIGMAPS, orjson.dumps(configmap(name))) for name in cms],
        "get ConfigMap": [("GET", f"{CONFIGMAPS}/{name}", None) for name in cms],
        "create Pod": [("POST", PODS, orjson.dumps(pod(name))) for name in pods],
        "get Pod": [("GET", f"{PODS}/{name}", None) for name in pods],
    }


BARE_EQUIVALENT = {"create ConfigMap": "bare POST", "get ConfigMap": "bare GET",
                   "create Pod": "bare POST", "get Pod": "bare GET"}


def _collections() -> list[int]:
    """CPython's collections so far, per generation."""
    return [generation["collections"] for generation in gc.get_stats()]


async def throughput(mode: Mode, profile: cProfile.Profile | None) -> Throughput:
    """Alternate bare and fakeapi loads within every run, so drift hits both alike."""
    result = Throughput()
    bare_runner, bare_url = await start_bare_server()
    connector = aiohttp.TCPConnector(limit=2 * CONCURRENCY)
    try:
        async with FakeCluster(control_plane=False) as cluster, aiohttp.ClientSession(connector=connector) as session:
            warm = _loads(-1, 200)
            for requests in warm.values():  # open the keep-alive connections, warm caches
                await drive(session, cluster.url, requests)
                await drive(session, bare_url, requests)
            for run in range(mode.runs):
                loads = _loads(run, mode.requests)
                result.add("bare POST", await drive(session, bare_url, loads["create ConfigMap"]))
                result.add("bare GET", await drive(session, bare_url, loads["get ConfigMap"]))
                last = run == mode.runs - 1
                for name, requests in loads.items():
                    if profile is not None and last:
                        profile.enable()
                    before = _collections()
                    rate = await drive(session, cluster.url, requests)
                    result.add(name, rate, [b - a for a, b in zip(before, _collections(), strict=True)])
                    if profile is not None and last:
                        profile.disable()
    finally:
        await bare_runner.cleanup()
    return result


# -- 3./4. watches ----------------------------------------------------------------------------


@dataclass
class WatchReader:
    """Reads one watch stream; records the delivery latency of each stamped object by name."""

    expected: int
    latencies_ns: dict[str, int] = field(default_factory=dict)
    line_bytes: int = 0
    error: dict[str, Any] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def take(self, line: bytes, now: int) -> bool:
        """Record one watch line read at ``now``; True when the stream has given all it will."""
        self.line_bytes += len(line)
        event = orjson.loads(line)
        if event["type"] == "ERROR":
            self.error = event["object"]
            return True
        meta = event["object"]["metadata"]
        stamp = meta.get("annotations", {}).get(STAMP)
        if stamp is not None:
            self.latencies_ns[meta["name"]] = now - int(stamp)
        return len(self.latencies_ns) >= self.expected

    async def read(self, resp: aiohttp.ClientResponse) -> None:
        try:
            async for line in resp.content:
                if self.take(line, time.perf_counter_ns()):
                    break
        finally:
            self.done.set()


class LeanWatch(asyncio.Protocol):
    """A watch read without a task: the chunked framing and each line's JSON are decoded in the
    connection's callback, which costs a few µs per line where aiohttp's stream reader and task
    wake-up cost ~30.  A compiled client (client-go) reads at about this cost, so a child process of
    these measures the server's delivery rather than one Python process's parsing."""

    def __init__(self, reader: WatchReader, request: bytes) -> None:
        self.reader = reader
        self.request = request
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self._buffer = b""
        self._head = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter_ns()
        if self._head and self.opened.done():
            return  # answered with an error: the rest is its body
        buffer = self._buffer + data
        if self._head:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self._buffer = buffer
                return
            status = int(buffer.split(b" ", 2)[1])
            if status != 200:
                self.opened.set_exception(RuntimeError(f"watch answered {status}"))
                self._buffer = b""
                if self.transport is not None:
                    self.transport.close()
                return
            self._head, buffer = False, buffer[end + 4:]
            self.opened.set_result(None)
        while (end := buffer.find(b"\r\n")) >= 0:
            size = int(buffer[:end], 16)
            if len(buffer) < end + size + 4:
                break
            for line in buffer[end + 2:end + 2 + size].splitlines():
                if self.reader.take(line, now):
                    self.reader.done.set()
            buffer = buffer[end + size + 4:]
        self._buffer = buffer

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionResetError("watch closed before its answer"))
        self.reader.done.set()


async def open_watch(session: aiohttp.ClientSession, url: str, rv: str) -> aiohttp.ClientResponse:
    """Open a ConfigMap watch from ``rv``; when this returns the server has registered it."""
    resp = await session.get(f"{url}{CONFIGMAPS}?watch=1&resourceVersion={rv}")
    _check(resp.status, "watch")
    return resp


async def current_rv(session: aiohttp.ClientSession, url: str) -> str:
    async with session.get(url + CONFIGMAPS + "?limit=1") as resp:
        _check(resp.status, "list")
        return (await resp.json())["metadata"]["resourceVersion"]


async def write_stamped(session: aiohttp.ClientSession, url: str, names: list[str], payload: int = 64,
                        pause: float = 0.0) -> None:
    """Create ConfigMaps in sequence, each stamped just before it is sent, ``pause`` seconds apart."""
    for i, name in enumerate(names):
        if pause and i:
            await asyncio.sleep(pause)
        body = orjson.dumps(configmap(name, time.perf_counter_ns(), payload))
        async with session.post(url + CONFIGMAPS, data=body, headers=JSON) as resp:
            await resp.read()
            _check(resp.status, "create")


@dataclass
class Latency:
    """Delivery latencies in milliseconds: every (write, watcher) pair, and per write the slowest."""

    deliveries: list[float]
    per_write_max: list[float]
    cpu_us_per_delivery: float = 0.0  # CPU time of this process over the writes, per delivery

    @classmethod
    def of(cls, readers: list[WatchReader]) -> Latency:
        by_write: dict[str, list[int]] = {}
        for reader in readers:
            for name, ns in reader.latencies_ns.items():
                by_write.setdefault(name, []).append(ns)
        return cls([ns / 1e6 for lat in by_write.values() for ns in lat],
                   [max(lat) / 1e6 for lat in by_write.values()])


async def read_watches(url: str, rv: str, watchers: int, writes: int,
                       ready: Callable[[], Awaitable[None]]) -> list[WatchReader]:
    """Open ``watchers`` watches from ``rv`` with aiohttp, await ``ready()`` (the writes), read every event."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        responses = await asyncio.gather(*(open_watch(session, url, rv) for _ in range(watchers)))
        readers = [WatchReader(writes) for _ in responses]
        tasks = [asyncio.create_task(r.read(resp)) for r, resp in zip(readers, responses, strict=True)]
        try:
            async with asyncio.timeout(DEADLINE):
                await ready()
                await asyncio.gather(*tasks)
        finally:
            for resp in responses:
                resp.close()
    return _complete(readers, writes)


async def read_lean_watches(url: str, rv: str, watchers: int, writes: int,
                            ready: Callable[[], Awaitable[None]]) -> list[WatchReader]:
    """:func:`read_watches` with :class:`LeanWatch` readers."""
    loop = asyncio.get_running_loop()
    address = urlsplit(url)
    request = f"GET {CONFIGMAPS}?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: {address.netloc}\r\n\r\n".encode()
    readers = [WatchReader(writes) for _ in range(watchers)]
    watches = [LeanWatch(reader, request) for reader in readers]
    try:
        async with asyncio.timeout(DEADLINE):
            for watch in watches:
                await loop.create_connection(functools.partial(_same, watch), address.hostname, address.port)
            await asyncio.gather(*(w.opened for w in watches))  # each answered: each is registered
            await ready()
            await asyncio.gather(*(r.done.wait() for r in readers))
    finally:
        for watch in watches:
            if watch.transport is not None:
                watch.transport.close()
    return _complete(readers, writes)


def _same(watch: LeanWatch) -> LeanWatch:
    return watch


def _complete(readers: list[WatchReader], writes: int) -> list[WatchReader]:
    missing = [r for r in readers if len(r.latencies_ns) < writes]
    if missing:
        raise RuntimeError(f"{len(missing)} watchers missed events")
    return readers


# How a child process reads its watches (``--fanout-child``).
CHILD_READERS = {"aiohttp": read_watches, "lean": read_lean_watches}


async def watch_fanout(mode: Mode, watchers: int, child: str | None = None) -> Latency:
    """``watchers`` watchers, one sequential writer of ``fanout_writes`` stamped ConfigMaps; the
    watchers run in this process, or in a child process (``--fanout-child``) reading with
    ``child`` (a :data:`CHILD_READERS` key), as an informer's client would (``perf_counter_ns`` is
    the system's monotonic clock in both).  There the writes are ``child_pause`` apart: one Python
    process parses a line per watcher and write more slowly than the server sends them, so unpaced
    writes would measure its backlog rather than one write's fan-out."""
    names = [f"fan-{i}" for i in range(mode.fanout_writes)]
    async with FakeCluster(control_plane=False) as cluster, aiohttp.ClientSession() as session:
        rv = await current_rv(session, cluster.url)

        cpu = [0.0]

        async def write() -> None:
            cpu[0] = -time.process_time()
            await write_stamped(session, cluster.url, names, pause=mode.child_pause if child else 0.0)

        def per_delivery(latency: Latency) -> Latency:
            latency.cpu_us_per_delivery = cpu[0] * 1e6 / (watchers * mode.fanout_writes)
            return latency

        if not child:
            readers = await read_watches(cluster.url, rv, watchers, mode.fanout_writes, write)
            cpu[0] += time.process_time()  # every watcher has read every event
            return per_delivery(Latency.of(readers))
        # The figures come back in a file: uvloop may close a child's pipe before it is drained.
        with tempfile.NamedTemporaryFile(prefix="fanout-", suffix=".json") as figures:
            argv = [__file__, "--fanout-child", child, cluster.url, rv, str(watchers), str(mode.fanout_writes),
                    figures.name, *_loop_flags()]
            proc = await asyncio.create_subprocess_exec(sys.executable, *argv, stdout=asyncio.subprocess.PIPE)
            assert proc.stdout is not None
            async with asyncio.timeout(DEADLINE):
                if await proc.stdout.readline() != b"ready\n":
                    raise RuntimeError("fan-out child failed to open its watches")
                await write()
                if await proc.wait() != 0:
                    raise RuntimeError(f"fan-out child failed with exit code {proc.returncode}")
                cpu[0] += time.process_time()  # the child has read every event and saved its figures
            out = figures.read()  # the child wrote it through its own descriptor, from the start
    readers = []
    for latencies in orjson.loads(out):
        reader = WatchReader(mode.fanout_writes)
        reader.latencies_ns.update(latencies)
        readers.append(reader)
    return per_delivery(Latency.of(readers))


async def fanout_child(readers: str, url: str, rv: str, watchers: int, writes: int) -> list[dict[str, int]]:
    """The child's side: say ``ready`` once the watches are open, return each one's latencies."""
    async def ready() -> None:
        sys.stdout.buffer.write(b"ready\n")
        sys.stdout.buffer.flush()

    return [r.latencies_ns for r in await CHILD_READERS[readers](url, rv, watchers, writes, ready)]


def _small_rcvbuf_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    # The slow watcher's receive buffer is kept small so that the kernel holds little of what it
    # does not read; the server's send buffer still absorbs a few MiB before writes block.
    family, type_, proto = addr_info[:3]
    sock = socket.socket(family, type_, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    return sock


def _rss_mib() -> float:
    # procfs is served from memory: reading it does not block the loop in any meaningful way.
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


@dataclass
class SlowRun:
    """One slow-watcher phase run, measured in a fresh process so its RSS is its own."""

    writes_per_s: float
    cpu_us_per_write: float  # CPU time of the process (server and clients) per write
    rss_growth_mib: float  # RSS after the writes minus RSS before them
    rss_peak_growth_mib: float  # peak RSS of the process minus RSS before the writes
    p50_ms: float  # delivery latency of the reading watchers
    p99_ms: float
    line_bytes: float  # mean size of one watch event line
    slow_events: int | None = None  # events the slow watcher got before its stream ended
    slow_error: dict[str, Any] | None = None


async def slow_watcher_run(mode: Mode, with_slow: bool) -> SlowRun:
    """``slow_writes`` creates from ``CONCURRENCY`` writers, ``slow_others`` reading watchers and,
    if ``with_slow``, one watcher that reads nothing until every write is done."""
    options = ServerOptions(watcher_queue_limit=mode.slow_limit)
    slow_connector = aiohttp.TCPConnector(socket_factory=_small_rcvbuf_socket)
    async with FakeCluster(control_plane=False, options=options) as cluster, \
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session, \
            aiohttp.ClientSession(connector=slow_connector, read_bufsize=16 * 1024) as slow_session:
        rv = await current_rv(session, cluster.url)
        responses = [await open_watch(session, cluster.url, rv) for _ in range(mode.slow_others)]
        readers = [WatchReader(mode.slow_writes) for _ in responses]
        tasks = [asyncio.create_task(r.read(resp)) for r, resp in zip(readers, responses, strict=True)]
        slow = await open_watch(slow_session, cluster.url, rv) if with_slow else None
        names = [f"slow-{i}" for i in range(mode.slow_writes)]
        rss_before = _rss_mib()
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            async with asyncio.timeout(DEADLINE):
                await asyncio.gather(*(write_stamped(session, cluster.url, names[w::CONCURRENCY], SLOW_PAYLOAD)
                                       for w in range(CONCURRENCY)))
                await asyncio.gather(*tasks)
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
                latency = Latency.of(readers)
                run = SlowRun(mode.slow_writes / seconds, cpu * 1e6 / mode.slow_writes,
                              _rss_mib() - rss_before, _peak_rss_mib() - rss_before,
                              percentile(latency.deliveries, 50), percentile(latency.deliveries, 99),
                              statistics.mean(r.line_bytes / len(r.latencies_ns) for r in readers))
                if slow is not None:
                    reader = WatchReader(mode.slow_writes)
                    await reader.read(slow)
                    run.slow_events, run.slow_error = len(reader.latencies_ns), reader.error
        finally:
            for resp in [*responses, *([slow] if slow else [])]:
                resp.close()
    return run


def _loop_flags() -> list[str]:
    """A child process runs on the event loop this one runs on."""
    return ["--uvloop"] if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else []


async def slow_watcher(quick: bool, with_slow: bool) -> SlowRun:
    """Run :func:`slow_watcher_run` in a child process (this script with ``--slow-run``)."""
    argv = [__file__, "--slow-run", "with" if with_slow else "without", *(["--quick"] if quick else []),
            *_loop_flags()]
    proc = await asyncio.create_subprocess_exec(sys.executable, *argv, stdout=asyncio.subprocess.PIPE)
    async with asyncio.timeout(DEADLINE):
        out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"slow-watcher run failed with exit code {proc.returncode}")
    return SlowRun(**orjson.loads(out))


# -- 5. instructions per request ------------------------------------------------------------

INSTRUCTION_LOADS = ("bare POST", "bare GET", "create ConfigMap", "create Pod", "get Pod")
WARM_REQUESTS = 200


async def counted_requests(load: str, n: int) -> None:
    """The child's side of ``--instructions``: warm up, then send ``n`` requests of ``load`` one
    after another with counting on."""
    bare_runner, bare_url = await start_bare_server()
    try:
        async with FakeCluster(control_plane=False) as cluster, aiohttp.ClientSession() as session:
            url = bare_url if load.startswith("bare") else cluster.url
            kind = {"bare POST": "create ConfigMap", "bare GET": "get ConfigMap"}.get(load, load)
            warm, measured = (_loads(run, n if run else WARM_REQUESTS) for run in (0, 1))
            for requests in (warm, measured):  # gets need their objects; the measured ones' too
                creates = kind.replace("get", "create")
                if kind != creates and url == cluster.url:
                    await drive(session, cluster.url, requests[creates])
            for method, path, body in warm[kind]:
                async with session.request(method, url + path, data=body, headers=JSON) as resp:
                    await resp.read()
                    _check(resp.status, f"{method} {path}")
            gc.disable()
            with callgrind_counting():
                for method, path, body in measured[kind]:
                    async with session.request(method, url + path, data=body, headers=JSON) as resp:
                        await resp.read()
            gc.enable()
    finally:
        await bare_runner.cleanup()


def _count_argv(load: str, n: int, uvloop: bool) -> list[str]:
    return [sys.executable, __file__, "--count-child", load, str(n), *(["--uvloop"] if uvloop else [])]


def count_instructions(load: str, n: int, uvloop: bool) -> float:
    """Instructions per request of ``load``, by callgrind, in a child process."""
    return callgrind_instructions(_count_argv(load, n, uvloop), env={"PYTHONHASHSEED": "0"}) / n


def instructions_report(n: int, uvloop: bool, loads: tuple[str, ...] = INSTRUCTION_LOADS) -> str:
    counts = {load: count_instructions(load, n, uvloop) for load in loads}
    rows = [[load, f"{counts[load] / 1000:,.1f}k",
             f"{counts[bare] / counts[load]:.0%}" if (bare := BARE_EQUIVALENT.get(load)) in counts else "-"]
            for load in loads]
    return (f"Instructions per request by callgrind, {n} requests after {WARM_REQUESTS} of warm-up, one "
            f"keep-alive connection, client included, {'uvloop' if uvloop else 'asyncio'} event loop:\n\n"
            + markdown_table(["load", "instructions", "bare / fakeapi"], rows))


def cache_report(n: int, uvloop: bool, loads: tuple[str, ...] = INSTRUCTION_LOADS) -> str:
    """``--instructions --cache-sim``: the same requests with callgrind's cache simulation."""
    counts = {load: callgrind_cache_counts(_count_argv(load, n, uvloop), env={"PYTHONHASHSEED": "0"})
              for load in loads}
    rows = []
    for load in loads:
        c = counts[load]
        bare = counts.get(BARE_EQUIVALENT.get(load, ""))
        rows.append([load, f"{c.instructions / n / 1000:,.1f}k", f"{c.l1_misses / n / 1000:,.2f}k",
                     f"{c.ll_misses / n:,.0f}", "-" if bare is None else f"{(c.ll_misses - bare.ll_misses) / n:+,.0f}"])
    return (f"Per request under callgrind's cache simulation (one core's L1 caches and L2 as sysfs describes "
            f"them; no prefetching), {n} requests after {WARM_REQUESTS} of warm-up, client included, "
            f"{'uvloop' if uvloop else 'asyncio'} event loop:\n\n"
            + markdown_table(["load", "instructions", "L1 misses", "L2 misses", "L2 misses over bare"], rows))


# -- report -----------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q), 2)


def _throughput_table(tp: Throughput) -> str:
    rows: list[list[object]] = []
    for load, bare in BARE_EQUIVALENT.items():
        ratios = tp.cpu_ratios(load, bare)
        extra_us = (1 / tp.cpu(load) - 1 / tp.cpu(bare)) * 1e6
        rows.append([load, round(tp.wall(load)), bare, round(tp.wall(bare)), f"{tp.wall(load) / tp.wall(bare):.0%}",
                     f"{statistics.median(ratios):.0%} ({min(ratios):.0%}–{max(ratios):.0%})", round(extra_us)])
    return markdown_table(["load", "fakeapi req/s", "bare aiohttp", "bare req/s", "ratio, wall",
                           "ratio, CPU (range)", "extra CPU µs/req"], rows)


def throughput_report(mode: Mode, tp: Throughput) -> str:
    """The throughput table alone (``--throughput``), with each fakeapi load's collections."""
    lines = [f"Throughput, {mode.requests} requests per load, {mode.runs} runs:", "", _throughput_table(tp), ""]
    lines += [f"{load}: collections (gen 0/1/2) per 1,000 requests "
              + "/".join(f"{count * 1000 / (mode.requests * mode.runs):.1f}" for count in counts)
              for load, counts in tp.collections.items()]
    return "\n".join(lines)


def _fanout_table(fanout: Latency) -> str:
    measures = (("each delivery", fanout.deliveries), ("last watcher per write", fanout.per_write_max))
    rows = [[f"{label} ({len(values)})", _ms(values, 50), _ms(values, 99), round(max(values), 2)]
            for label, values in measures]
    return markdown_table(["latency, ms", "p50", "p99", "max"], rows)


def _slow_table(base: list[SlowRun], slow: list[SlowRun]) -> str:
    def med(runs: list[SlowRun], name: str, digits: int) -> float:
        value = statistics.median(getattr(r, name) for r in runs)
        return round(value, digits) if digits else round(value)

    rows = [[label, med(runs, "writes_per_s", 0), med(runs, "cpu_us_per_write", 0),
             med(runs, "rss_growth_mib", 0), med(runs, "rss_peak_growth_mib", 0),
             med(runs, "p50_ms", 2), med(runs, "p99_ms", 2)]
            for label, runs in (("without slow watcher", base), ("with slow watcher", slow))]
    return markdown_table(["run", "writes/s", "CPU µs/write", "RSS growth MiB", "peak RSS growth MiB", "others p50 ms",
                           "others p99 ms"], rows)


def _slow_endings(slow: list[SlowRun]) -> str:
    endings = [f"ERROR {r.slow_error.get('code')} {r.slow_error.get('reason')} after {r.slow_events} events"
               if r.slow_error else f"NO ERROR, stream ended after {r.slow_events} events" for r in slow]
    return "; ".join(endings)


def fanout_report(mode: Mode, fanouts: dict[str, Latency]) -> str:
    """The fan-out tables, with what they measure."""
    parts = [f"**Watch fan-out**: watches on ConfigMaps, {mode.fanout_writes} creates by one sequential writer; "
             f"latency runs from the `perf_counter_ns` stamp taken before the POST to the watch line being parsed "
             f"by the watcher. In a child process the watchers read with aiohttp (a stream reader and a task "
             f"per watch) or with lean readers (`LeanWatch`: a protocol decoding each line in its callback, at "
             f"about a compiled client's cost), and the writes are {mode.child_pause:g} s apart.", ""]
    for label, latency in fanouts.items():
        whose = "server and writer" if "child" in label else "server, writer and watchers"
        parts += [f"{label} (CPU of the {whose}: {latency.cpu_us_per_delivery:.1f} µs per delivery):", "",
                  _fanout_table(latency), ""]
    return "\n".join(parts)


def report(mode: Mode, startup: list[float], tp: Throughput, fanouts: dict[str, Latency],
           base: list[SlowRun], slow: list[SlowRun], loop: str) -> str:
    """The markdown written to stdout and, with ``--write``, into BENCHMARKS.md."""
    per_write_kib = statistics.median(r.rss_growth_mib for r in base) * 1024 / mode.slow_writes
    flags = (" --quick" if mode is QUICK else "") + (" --uvloop" if loop == "uvloop" else "")
    return "\n".join([
        f"Measured with `python bench/bench_api.py{flags}` ({loop} event loop) on {machine_description()}, "
        f"a shared machine where other work was running: compare figures within one run. Client and server "
        f"share one process and one event loop, so every figure includes the client's own cost.",
        "",
        f"**Start-up**, `FakeCluster(control_plane=False)` entered until `GET /version` is answered "
        f"(median of {len(startup)}): **{statistics.median(startup):.1f} ms** (min {min(startup):.1f}, "
        f"max {max(startup):.1f}). For context, envtest starts etcd and kube-apiserver in about 7 s.",
        "",
        f"**Throughput**: {CONCURRENCY} client tasks on keep-alive connections, {mode.requests} requests per load, "
        f"median of {mode.runs} runs; the bare server is aiohttp with a handler that returns a fixed JSON body, "
        f"driven by the same client in the same run. The CPU ratio divides requests per CPU-second of this "
        f"process (robust to other load on the machine); *extra* is the CPU time fakeapi adds to one request.",
        "",
        _throughput_table(tp),
        "",
        fanout_report(mode, fanouts),
        f"**Slow watcher**: {mode.slow_writes} creates of {SLOW_PAYLOAD // 1024} KiB ConfigMaps from {CONCURRENCY} "
        f"writers, {mode.slow_others} reading watchers, server backlog limit {mode.slow_limit} events per watcher; "
        f"each run in a fresh process, RSS growth measured over the writes, median of {mode.slow_pairs} "
        f"run(s) each, alternating order.",
        "",
        _slow_table(base, slow),
        "",
        f"The watcher that read nothing until the last write was done, per run: {_slow_endings(slow)} "
        f"(the events it got were those already in socket buffers). Watch lines are "
        f"{statistics.median(r.line_bytes for r in base):.0f} bytes; RSS grows by {per_write_kib:.1f} KiB per "
        f"write with or without the slow watcher: the store and the event log hold that, not the watcher.",
    ])


def write_section(text: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace the generated block of the API server section, leaving the rest of the file alone."""
    block = f"{BEGIN}\n{text}\n{END}"
    content = path.read_text() if path.exists() else ""
    if BEGIN in content and END in content:
        content = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, content, flags=re.S)
    else:
        head = content.rstrip() + "\n\n" if content.strip() else ""
        content = f"{head}## API server\n\n{block}\n"
    path.write_text(content)


async def fanout(mode: Mode) -> dict[str, Latency]:
    """Phase 3: the watchers in this process, then the most of them in a child process with each
    kind of reader."""
    fanouts = {f"{watchers} watchers": await watch_fanout(mode, watchers) for watchers in mode.fanout_watchers}
    watchers = max(mode.fanout_watchers)
    for readers in CHILD_READERS:
        fanouts[f"{watchers} watchers in a child process, {readers} readers"] = await watch_fanout(
            mode, watchers, child=readers)
    return fanouts


async def main(mode: Mode, profile: bool, write: bool, uvloop: bool) -> None:
    profiler = cProfile.Profile() if profile else None
    async with aiohttp.ClientSession() as session:
        startup = (await median_of(mode.startup_runs, lambda: startup_ms(session)))[1]
    tp = await throughput(mode, profiler)
    fanouts = await fanout(mode)
    base: list[SlowRun] = []
    slow: list[SlowRun] = []
    for pair in range(mode.slow_pairs):
        for with_slow in (False, True) if pair % 2 == 0 else (True, False):
            (slow if with_slow else base).append(await slow_watcher(mode is QUICK, with_slow))
    text = report(mode, startup, tp, fanouts, base, slow, "uvloop" if uvloop else "asyncio")
    print(text)
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats("fakeapi/", 30)
        print("\ncProfile of the fakeapi loads of the last throughput run (total includes the client):\n",
              out.getvalue())
    if write:
        write_section(text)


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (under ~20 s)")
    parser.add_argument("--runs", type=int, help="repetitions of the throughput loads")
    parser.add_argument("--profile", action="store_true", help="cProfile the last run of the fakeapi loads")
    parser.add_argument("--write", action="store_true", help="update the API server section of BENCHMARKS.md")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop's event loop")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per request with callgrind instead (needs valgrind)")
    parser.add_argument("--cache-sim", action="store_true",
                        help="with --instructions: simulate this machine's L1 and L2 caches and count their misses too")
    parser.add_argument("--throughput", action="store_true",
                        help="run only the throughput loads (with --runs, --quick, --uvloop)")
    parser.add_argument("--fanout", action="store_true", help="run only the watch fan-out (with --quick, --uvloop)")
    parser.add_argument("--loads", default=",".join(INSTRUCTION_LOADS),
                        help="with --instructions: the loads to count, comma-separated")
    parser.add_argument("--slow-run", choices=("with", "without"), help=argparse.SUPPRESS)  # child process
    # child: READERS URL RV WATCHERS WRITES FILE
    parser.add_argument("--fanout-child", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--count-child", nargs=2, help=argparse.SUPPRESS)  # child: LOAD N
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _parse_args()
    chosen = QUICK if args.quick else FULL
    if args.fanout_child:
        readers, url, rv, watchers, writes, path = args.fanout_child
        figures = run_loop(fanout_child(readers, url, rv, int(watchers), int(writes)), args.uvloop)
        Path(path).write_bytes(orjson.dumps(figures))
    elif args.count_child:
        load, n = args.count_child
        run_loop(counted_requests(load, int(n)), args.uvloop)
    elif args.instructions:
        loads = tuple(args.loads.split(","))
        if unknown := set(loads) - set(INSTRUCTION_LOADS):
            raise SystemExit(f"unknown loads: {', '.join(sorted(unknown))}")
        report = cache_report if args.cache_sim else instructions_report
        print(report(30 if args.quick else 300, args.uvloop, loads))
    elif args.slow_run:
        result = run_loop(slow_watcher_run(chosen, with_slow=args.slow_run == "with"), args.uvloop)
        sys.stdout.buffer.write(orjson.dumps(dataclasses.asdict(result)))
    else:
        if args.runs:
            chosen = dataclasses.replace(chosen, runs=args.runs)
        if args.throughput:
            print(throughput_report(chosen, run_loop(throughput(chosen, None), args.uvloop)))
        elif args.fanout:
            print(fanout_report(chosen, run_loop(fanout(chosen), args.uvloop)))
        else:
            run_loop(main(chosen, args.profile, args.write, args.uvloop), args.uvloop)
