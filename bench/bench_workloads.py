"""Workload controllers end to end: a Deployment of N replicas with claims vs N bare pods, and a rollout.

150 nodes with one ResourceSlice of 10 devices each (1,500 devices: room for the surge), one DeviceClass, one
ResourceClaimTemplate.  Each run, in a fresh ``FakeCluster`` (API server, control plane and this
client in one process and event loop):

1. **bare pods**: N pods with one template claim each, created by this client (32 at a time),
   until all are Running (claims generated, allocated, pods bound and started);
2. **Deployment**: one Deployment of N replicas with the same pod template, from its create
   until ``availableReplicas == N`` (the ReplicaSet creates the pods in slow-start batches);
3. **rollout**: a template change of that Deployment (RollingUpdate 25 %/25 %) until every
   replica is updated and available again (2N pod creations and deletions, claims freed and
   allocated again).

    python bench/bench_workloads.py [--quick] [--runs N] [--replicas N]

Reports pods/s for 1 and 2 and seconds for 3 (median over runs).  ``--quick`` is 40 replicas,
one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import (
    DEVICE_CLASSES,
    GVR,
    NODES,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_SLICES,
    ApiClient,
)

from bench.common import machine_description, markdown_table
from fakeapi.cluster import FakeCluster

DRIVER = "bench.example.com"
DEPLOYMENTS = GVR("apps", "v1", "deployments", True)
NODE_COUNT, DEVICES_PER_NODE = 150, 10
CREATE_CONCURRENCY = 32


def _node(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
            "status": {"capacity": {"cpu": "64", "pods": "110"}, "allocatable": {"cpu": "64", "pods": "110"}}}


def _slice(i: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": f"node-{i}",
                     "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{d}"} for d in range(DEVICES_PER_NODE)]}}


POD_SPEC = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
            "containers": [{"name": "main", "image": "trainer:1", "resources": {"claims": [{"name": "gpu"}]}}]}


async def _setup(api: ApiClient) -> None:
    await api.create(DEVICE_CLASSES, None, {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await api.create(RESOURCE_CLAIM_TEMPLATES, "default", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}})
    for i in range(NODE_COUNT):
        await api.create(NODES, None, _node(i))
        await api.create(RESOURCE_SLICES, None, _slice(i))


async def _running(api: ApiClient, label: str) -> int:
    pods = (await api.list(PODS, "default", label_selector=label))["items"]
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp"))


async def _until(check: Any, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not await check():
        if time.perf_counter() > deadline:
            raise TimeoutError("benchmark phase did not finish")
        await asyncio.sleep(0.05)


async def _bare_pods(api: ApiClient, n: int) -> float:
    start = time.perf_counter()
    semaphore = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def create(i: int) -> None:
        async with semaphore:
            await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                               "metadata": {"name": f"bare-{i}", "labels": {"app": "bare"}},
                                               "spec": POD_SPEC})
    await asyncio.gather(*(create(i) for i in range(n)))

    async def done() -> bool:
        return await _running(api, "app=bare") == n
    await _until(done, 600)
    return time.perf_counter() - start


async def _available(api: ApiClient, n: int, generation: int) -> bool:
    status = (await api.get(DEPLOYMENTS, "default", "train")).get("status") or {}
    return (status.get("availableReplicas") == n and status.get("updatedReplicas") == n
            and status.get("replicas") == n and status.get("observedGeneration") == generation)


async def _deployment(api: ApiClient, n: int) -> float:
    start = time.perf_counter()
    await api.create(DEPLOYMENTS, "default", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train"},
        "spec": {"replicas": n, "selector": {"matchLabels": {"app": "train"}},
                 "template": {"metadata": {"labels": {"app": "train"}}, "spec": POD_SPEC}}})
    await _until(lambda: _available(api, n, 1), 600)
    return time.perf_counter() - start


async def _rollout(api: ApiClient, n: int) -> float:
    start = time.perf_counter()
    await api.patch(DEPLOYMENTS, "default", "train", {"spec": {"template": {"metadata": {
        "annotations": {"restartedAt": "now"}}}}})
    await _until(lambda: _available(api, n, 2), 600)
    return time.perf_counter() - start


async def _run(n: int) -> tuple[float, float, float]:
    async with FakeCluster() as cluster, ApiClient(cluster.url) as api:
        await _setup(api)
        bare = await _bare_pods(api, n)
        for pod in (await api.list(PODS, "default", label_selector="app=bare"))["items"]:
            await api.delete(PODS, "default", pod["metadata"]["name"])

        async def freed() -> bool:
            return not (await api.list(PODS, "default", label_selector="app=bare"))["items"]
        await _until(freed, 600)
        deployed = await _deployment(api, n)
        rolled = await _rollout(api, n)
        return bare, deployed, rolled


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="40 replicas, one run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=1000)
    args = parser.parse_args()
    n, runs = (40, 1) if args.quick else (args.replicas, args.runs)
    results = [await _run(n) for _ in range(runs)]
    bare = statistics.median(r[0] for r in results)
    deployed = statistics.median(r[1] for r in results)
    rolled = statistics.median(r[2] for r in results)
    print(f"Measured with `python bench/bench_workloads.py{' --quick' if args.quick else ''}` on "
          f"{machine_description()}; {n} replicas, median of {runs} run(s); each pod has one template claim "
          f"on {NODE_COUNT} nodes x {DEVICES_PER_NODE} devices.\n")
    print(markdown_table(["phase", "seconds", "pods/s", "runs (s)"], [
        [f"{n} bare pods, create to all Running", f"{bare:.2f}", f"{n / bare:.0f}",
         ", ".join(f"{r[0]:.2f}" for r in results)],
        [f"Deployment of {n}, create to all available", f"{deployed:.2f}", f"{n / deployed:.0f}",
         ", ".join(f"{r[1]:.2f}" for r in results)],
        [f"rollout of {n} (25%/25%), to all updated and available", f"{rolled:.2f}", f"{n / rolled:.0f}",
         ", ".join(f"{r[2]:.2f}" for r in results)],
    ]))


if __name__ == "__main__":
    asyncio.run(main())
