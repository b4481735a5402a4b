"""``fakeapi demo``: the KEP-5729 story end to end, on an embedded cluster.

1. A GPU cluster appears (DeviceClass, two nodes, one ResourceSlice of four GPUs each).
2. A PodGroup names a ResourceClaimTemplate: the ResourceClaim controller generates ONE claim
   for the group and records it in ``status.resourceClaimStatuses``.
3. Three pods join the group: the scheduler allocates the claim once, reserves it for the
   PodGroup (not per pod), and binds every pod to the node holding the devices; the kubelet
   emulation starts them.
4. The pods finish and go away: the claim stays allocated, still reserved for the group.
5. The PodGroup is deleted: the reservation is released, the allocation cleared, and the
   garbage collector removes the generated claim.

Every step is observed through the public API, exactly as a user's test would.
"""

from __future__ import annotations

import sys
import time
from importlib import resources
from typing import Any

import yaml

from fakeapi.cluster import FakeCluster
from fakeapi.config import FeatureGates
from fakeapi.demo.render import placement
from fakeapi.fixtures.waiting import WaitTimeout, wait_for
from fakeapi.scheduler.client import (
    GVR,
    NODES,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    ApiClient,
)

NS = "default"
# Read as package data, so the demo works from an installed wheel as well as from a checkout.
MANIFEST = resources.files("fakeapi.fixtures") / "manifests" / "gpu-cluster.yaml"
GROUP = "training"
POD_COUNT = 3

TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "two-a100"},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.example.com", "count": 2,
        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "A100"'}}]}}]}}},
}
PODGROUP = {
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"name": GROUP},
    "spec": {"schedulingPolicy": {"gang": {"minCount": POD_COUNT}},
             "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-a100"}]},
}


def worker(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"worker-{i}"},
            "spec": {"schedulingGroup": {"podGroupName": GROUP},
                     "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-a100"}],
                     "containers": [{"name": "train", "image": "trainer:latest",
                                     "resources": {"claims": [{"name": "gpus"}]}}]}}


class StoryFailed(Exception):
    """The cluster did something a real one would not; the demo exits non-zero."""


def step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def _kind_gvr(obj: dict[str, Any]) -> GVR:
    table = {"DeviceClass": "deviceclasses", "Node": "nodes", "ResourceSlice": "resourceslices"}
    group, _, version = obj["apiVersion"].rpartition("/")
    return GVR(group, version, table[obj["kind"]], False)


async def _claims(api: ApiClient) -> list[dict[str, Any]]:
    return (await api.list(RESOURCE_CLAIMS, NS))["items"]


async def run_story(api: ApiClient) -> None:
    started = time.perf_counter()
    step("A GPU cluster appears: a DeviceClass, 2 nodes, one ResourceSlice of 4 GPUs per node")
    for obj in yaml.safe_load_all(MANIFEST.read_text()):
        if obj:
            await api.create(_kind_gvr(obj), None, obj)
    slices = (await api.list(RESOURCE_SLICES))["items"]
    print(f"    {len((await api.list(NODES))['items'])} nodes, "
          f"{sum(len(s['spec'].get('devices', [])) for s in slices)} devices published")

    step("A PodGroup names a ResourceClaimTemplate (2 x A100): one claim is generated for the group")
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, TEMPLATE)
    await api.create(PODGROUPS, NS, PODGROUP)

    async def generated() -> str | None:
        pg = await api.get(PODGROUPS, NS, GROUP)
        statuses = (pg.get("status") or {}).get("resourceClaimStatuses") or []
        return statuses[0].get("resourceClaimName") if statuses else None

    claim_name = await wait_for(generated, message="the PodGroup's generated claim")
    claim = await api.get(RESOURCE_CLAIMS, NS, claim_name)
    owner = claim["metadata"]["ownerReferences"][0]
    print(f"    claim {claim_name} owned by {owner['kind']}/{owner['name']}, allocated: "
          f"{bool((claim.get('status') or {}).get('allocation'))}")

    step(f"{POD_COUNT} pods join the group: the claim is allocated once and reserved for the PodGroup")
    for i in range(POD_COUNT):
        await api.create(PODS, NS, worker(i))

    async def all_running() -> list[dict[str, Any]] | None:
        pods = (await api.list(PODS, NS))["items"]
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        return pods if len(running) == POD_COUNT else None

    pods = await wait_for(all_running, message="all pods Running")
    claim = await api.get(RESOURCE_CLAIMS, NS, claim_name)
    reserved = claim["status"]["reservedFor"]
    print(f"    reservedFor: {[(r['resource'], r['name']) for r in reserved]}")
    if [r["resource"] for r in reserved] != ["podgroups"]:
        raise StoryFailed(f"expected one PodGroup reservation, got {reserved}")
    if len(await _claims(api)) != 1:
        raise StoryFailed("pods must share the PodGroup's claim, not get their own")
    print(placement((await api.list(NODES))["items"], slices, await _claims(api), pods))

    step("The pods finish and are deleted: the claim stays allocated for the group")
    for p in pods:
        p = await api.get(PODS, NS, p["metadata"]["name"])
        p["status"]["phase"] = "Succeeded"
        await api.update(PODS, NS, p, subresource="status")
        await api.delete(PODS, NS, p["metadata"]["name"])

    async def pods_gone() -> bool:
        return not (await api.list(PODS, NS))["items"]

    await wait_for(pods_gone, message="pods deleted")
    claim = await api.get(RESOURCE_CLAIMS, NS, claim_name)
    if not (claim.get("status") or {}).get("allocation"):
        raise StoryFailed("deleting pods must not deallocate a PodGroup claim")
    print(f"    claim {claim_name} still allocated, reservedFor "
          f"{[r['name'] for r in claim['status']['reservedFor']]}")

    step("The PodGroup is deleted: reservation released, allocation cleared, claim collected")
    await api.delete(PODGROUPS, NS, GROUP)

    async def claim_gone() -> bool:
        return not await _claims(api)

    await wait_for(claim_gone, message="the generated claim to be released and garbage-collected")
    print("    claim deallocated and deleted")
    print(f"\nKEP-5729 story complete in {time.perf_counter() - started:.2f}s")


async def run_demo(gates: FeatureGates | None = None) -> int:
    """Start an embedded cluster, run the story, return the exit code."""
    async with FakeCluster(feature_gates=gates or FeatureGates()) as cluster:
        print(f"fakeapi serving on {cluster.url} (kubeconfig {cluster.kubeconfig_path})")
        async with ApiClient(cluster.url) as api:
            try:
                await run_story(api)
            except (StoryFailed, WaitTimeout) as exc:
                print(f"\nstory failed: {exc}", file=sys.stderr)
                return 1
    return 0
