"""Secure serving benchmark: what ``FakeCluster(secure=True)`` costs at start and per request.

    python bench/bench_secure.py [--quick]

- **Start-up**: ``FakeCluster(control_plane=False)`` entered and left, open against secure (a
  fresh CA, the serving and admin certificates, the TLS context, the bootstrap RBAC objects),
  alternating in one run; and the certificate generation alone.
- **Requests**: sequential ``GET`` of one ConfigMap on a kept-alive connection, open (plain
  HTTP, no authentication) against secure (TLS, the admin's client certificate, authorization).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import sys
import time
from pathlib import Path

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine_description, markdown_table, percentile
from fakeapi.auth.tls import SecureServing, client_context
from fakeapi.cluster import FakeCluster
from fakeapi.machinery.pem import KeyPair

CONFIGMAP = "/api/v1/namespaces/default/configmaps/bench"


async def start_stop_ms(secure: bool) -> float:
    start = time.perf_counter()
    async with FakeCluster(control_plane=False, secure=secure):
        pass
    return (time.perf_counter() - start) * 1000


def _session(cluster: FakeCluster) -> aiohttp.ClientSession:
    """A client configured from the cluster's kubeconfig (CA and client certificate when secure)."""
    cluster_entry = yaml.safe_load(cluster.kubeconfig_path.read_text())
    ca = cluster_entry["clusters"][0]["cluster"].get("certificate-authority-data")
    user = cluster_entry["users"][0]["user"]
    if ca is None:
        return aiohttp.ClientSession()
    pair = KeyPair(base64.b64decode(user["client-certificate-data"]), base64.b64decode(user["client-key-data"]))
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_context(base64.b64decode(ca), pair)))


async def request_latencies_ms(secure: bool, n: int) -> list[float]:
    async with FakeCluster(control_plane=False, secure=secure) as cluster, _session(cluster) as session:
        async with session.post(cluster.url + "/api/v1/namespaces/default/configmaps",
                                json={"metadata": {"name": "bench"}, "data": {"k": "v"}}) as resp:
            assert resp.status == 201, await resp.text()
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            async with session.get(cluster.url + CONFIGMAP) as resp:
                await resp.read()
            samples.append((time.perf_counter() - start) * 1000)
        return samples


async def main(quick: bool) -> None:
    runs, n = (5, 200) if quick else (30, 3000)
    starts: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for secure in (False, True):
            starts[secure].append(await start_stop_ms(secure))
    generate = []
    for _ in range(runs):
        start = time.perf_counter()
        SecureServing.generate("127.0.0.1")
        generate.append((time.perf_counter() - start) * 1000)
    latencies = {secure: await request_latencies_ms(secure, n) for secure in (False, True)}
    print(f"Measured with `python bench/bench_secure.py` on {machine_description()}.\n")
    print(markdown_table(["start and stop", "median ms", "p90 ms"], [
        ["open", round(statistics.median(starts[False]), 1), round(percentile(starts[False], 90), 1)],
        ["secure", round(statistics.median(starts[True]), 1), round(percentile(starts[True], 90), 1)],
        ["certificates alone (SecureServing.generate)", round(statistics.median(generate), 2),
         round(percentile(generate, 90), 2)]]))
    print()
    print(markdown_table([f"GET ConfigMap ({n} sequential)", "p50 ms", "p99 ms"], [
        [name, round(percentile(latencies[secure], 50), 3), round(percentile(latencies[secure], 99), 3)]
        for name, secure in (("open (HTTP)", False), ("secure (TLS, admin certificate)", True))]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (a few seconds)")
    asyncio.run(main(parser.parse_args().quick))
