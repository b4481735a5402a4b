"""Idle connections: does the server stay responsive, and what does one cost in memory?

    python bench/bench_connections.py [--quick] [--runs N] [--idle N]

Each run starts ``fakeapi serve --no-control-plane`` in a child process (so the server's RSS
and event loop are its own), opens ``--idle`` keep-alive connections that each make one
``GET /version`` and then stay silent, and times sequential ``GET /version`` requests over one
more keep-alive connection.  Runs with 0 and with ``--idle`` connections alternate; the table
gives the median over runs of each run's p50/p99, and the server's RSS growth per idle
connection (VmRSS before opening them and once the server holds them all).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from yarl import URL

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine_description, markdown_table, percentile, rss_kib

DEADLINE = 60.0  # seconds any one step may take before the benchmark fails loudly
VERSION = b"GET /version HTTP/1.1\r\nHost: fakeapi\r\n\r\n"


@dataclass(frozen=True)
class Run:
    """One server process, ``idle`` silent connections, latencies of the timed requests."""

    idle: int
    latencies_ms: list[float]
    rss_growth_kib: int


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _idle_connection(url: URL) -> socket.socket:
    """A connection that made one request, read the answer and then stays silent."""
    sock = socket.create_connection((url.host, url.port), timeout=DEADLINE)
    sock.sendall(VERSION)
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)
    return sock


async def _until(condition: Callable[[], bool], what: str) -> None:
    try:
        async with asyncio.timeout(DEADLINE):
            while True:
                if condition():
                    return
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise TimeoutError(f"timed out waiting for {what}") from None


async def one_run(idle: int, requests: int) -> Run:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "fakeapi", "serve", "--no-control-plane",
                                                stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), DEADLINE)).decode().strip()
    url = URL(line.removeprefix("serving on "))
    sockets: list[socket.socket] = []
    try:
        async with aiohttp.ClientSession(base_url=url) as session:
            for _ in range(200):  # warm-up: imports, caches, the session's connection
                async with session.get("/version") as resp:
                    await resp.read()
            before_fds, before_rss = _open_fds(proc.pid), rss_kib(proc.pid)
            sockets = [_idle_connection(url) for _ in range(idle)]
            await _until(lambda: _open_fds(proc.pid) >= before_fds + idle, f"the server to hold {idle} connections")
            rss_growth = rss_kib(proc.pid) - before_rss
            latencies = []
            for _ in range(requests):
                started = time.perf_counter()
                async with session.get("/version") as resp:
                    await resp.read()
                latencies.append((time.perf_counter() - started) * 1e3)
            assert _open_fds(proc.pid) >= before_fds + idle, "idle connections were closed during the run"
    finally:
        for sock in sockets:
            sock.close()
        proc.terminate()
        await asyncio.wait_for(proc.wait(), DEADLINE)
    return Run(idle, latencies, rss_growth)


def report(runs: list[Run], idle: int, requests: int) -> str:
    rows = []
    for count in (0, idle):
        mine = [r for r in runs if r.idle == count]
        p50 = statistics.median(percentile(r.latencies_ms, 50) for r in mine)
        p99 = statistics.median(percentile(r.latencies_ms, 99) for r in mine)
        worst = max(max(r.latencies_ms) for r in mine)
        rows.append([count, round(p50, 3), round(p99, 3), round(worst, 2)])
    growth = statistics.median(r.rss_growth_kib / idle for r in runs if r.idle == idle)
    table = markdown_table(["idle connections", "p50 ms", "p99 ms", "max ms (all runs)"], rows)
    runs_each = len(runs) // 2
    return (f"Measured with `python bench/bench_connections.py` on {machine_description()}; "
            f"{requests} sequential `GET /version` per run on one keep-alive connection, median of "
            f"{runs_each} runs each.\n\n{table}\n\nServer RSS growth per idle connection: "
            f"**{growth:.1f} KiB** (median of {runs_each} runs with {idle} connections; kernel socket "
            "buffers not included).")


async def main(runs: int, idle: int, requests: int) -> None:
    # This process holds the idle sockets; the server inherits the raised limit too.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 2 * idle + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = []
    for i in range(runs):
        for count in ((0, idle) if i % 2 == 0 else (idle, 0)):  # alternate to spread machine noise
            results.append(await one_run(count, requests))
    print(report(results, idle, requests))


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 run each, 300 requests")
    parser.add_argument("--runs", type=int, default=5, help="runs with and without idle connections")
    parser.add_argument("--idle", type=int, default=500, help="idle connections in the loaded runs")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _parse_args()
    asyncio.run(main(1 if args.quick else args.runs, args.idle, 300 if args.quick else 2000))
