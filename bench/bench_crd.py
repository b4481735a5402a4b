"""CustomResourceDefinition benchmark: how soon a new CRD serves, and custom-object creates
against built-in ConfigMap creates in the same run.

    python bench/bench_crd.py [--quick]

- **CRD create → first served request**: in a fresh ``FakeCluster(control_plane=False)``, POST
  a CRD (schema with defaults, a CEL rule, status and scale), then GET its collection until the
  answer is 200; median of several clusters.
- **Create throughput**: ``CONCURRENCY`` client tasks POST custom objects (validated, pruned and
  defaulted by the structural schema, with the CEL rule) and, alternately in the same run,
  ConfigMaps; median of the runs.  Client and server share one process and event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine_description, markdown_table
from fakeapi.cluster import FakeCluster
from tests.crds import CRDS, CRONTABS, crontab, crontab_crd

CONCURRENCY = 8
JSON = {"Content-Type": "application/json"}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


async def install_crd(session: aiohttp.ClientSession, base: str) -> float:
    """POST the CronTab CRD and poll its collection until served; returns the milliseconds taken."""
    start = time.perf_counter()
    async with session.post(base + CRDS, data=orjson.dumps(crontab_crd()), headers=JSON) as resp:
        assert resp.status == 201, await resp.text()
    status = 0
    while status != 200:  # the API has no notification to wait on: clients poll as this does
        async with session.get(base + CRONTABS) as resp:
            await resp.read()
            status = resp.status
    return (time.perf_counter() - start) * 1000


async def first_served_ms(session: aiohttp.ClientSession) -> float:
    """Milliseconds from POSTing a CRD to the first 200 on its collection, in a fresh cluster."""
    async with FakeCluster(control_plane=False) as cluster:
        return await install_crd(session, cluster.url)


async def create_rate(session: aiohttp.ClientSession, base: str, path: str, bodies: list[bytes]) -> float:
    """Creates per second of ``bodies`` POSTed to ``path`` from ``CONCURRENCY`` tasks."""
    async def worker(first: int) -> None:
        for body in bodies[first::CONCURRENCY]:
            async with session.post(base + path, data=body, headers=JSON) as resp:
                await resp.read()
                assert resp.status == 201, resp.status

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tasks:
        for first in range(CONCURRENCY):
            tasks.create_task(worker(first))
    return len(bodies) / (time.perf_counter() - start)


async def throughput(session: aiohttp.ClientSession, runs: int, n: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {"CronTab (custom)": [], "ConfigMap (built-in)": []}
    async with FakeCluster(control_plane=False) as cluster:
        await install_crd(session, cluster.url)
        for run in range(runs):
            custom = [orjson.dumps(crontab(f"c{run}-{i}", replicas=i % 5, tags=["a", "b"])) for i in range(n)]
            builtin = [orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": f"m{run}-{i}"}, "data": {"a": "b"}}) for i in range(n)]
            order: list[tuple[str, str, list[bytes]]] = [("CronTab (custom)", CRONTABS, custom),
                                                         ("ConfigMap (built-in)", CONFIGMAPS, builtin)]
            for label, path, bodies in order if run % 2 == 0 else reversed(order):
                rates[label].append(await create_rate(session, cluster.url, path, bodies))
    return rates


def report(served: list[float], rates: dict[str, list[float]], n: int) -> str:
    lines = [f"Measured with `python bench/bench_crd.py` on {machine_description()}."]
    lines.append(f"\n**CRD create → first served request** (median of {len(served)} fresh clusters): "
                 f"**{statistics.median(served):.1f} ms** (min {min(served):.1f}, max {max(served):.1f}). "
                 f"envtest starts etcd and kube-apiserver in about 7 s before the first CRD can be created.")
    base = statistics.median(rates["ConfigMap (built-in)"])
    rows: list[list[object]] = [[label, round(statistics.median(values)), f"{statistics.median(values) / base:.0%}"]
                                for label, values in rates.items()]
    lines.append(f"\n**Creates**, {CONCURRENCY} client tasks, {n} objects per load, median of "
                 f"{len(rates['ConfigMap (built-in)'])} runs, loads alternating in one cluster:\n")
    lines.append(markdown_table(["load", "creates/s", "vs ConfigMap"], rows))
    return "\n".join(lines)


async def main(quick: bool) -> None:
    async with aiohttp.ClientSession() as session:
        served = [await first_served_ms(session) for _ in range(3 if quick else 15)]
        n = 200 if quick else 2000
        rates = await throughput(session, 2 if quick else 5, n)
    print(report(served, rates, n))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (a few seconds)")
    asyncio.run(main(parser.parse_args().quick))
