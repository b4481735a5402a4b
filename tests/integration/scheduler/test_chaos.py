"""Chaos: the control plane's connections are reset at random while it schedules DRA pods.

The control plane runs in-process against a :class:`FaultProxy` that resets random connections
every 0.05-0.25 s, loses the answer to one write in ten after the server committed it and delays
watch events by up to 50 ms (informers lag, which widens every race with a lost answer).  The
end state must be the one a run without faults reaches: every pod Running, one generated claim
per pod and per PodGroup entry and no other, every claim allocated, no device in two claims, each
claim reserved for exactly its pod or group.  The proxy's randomness comes from a seed, printed
so a failure can be replayed: ``FAKEAPI_CHAOS_SEED=<seed> pytest -k chaos``.
"""

from __future__ import annotations

import asyncio
import copy
import os
import random
import time
from collections import Counter
from typing import Any

import yaml
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import PODGROUPS, PODS, RESOURCE_CLAIMS, ApiClient
from fakeapi.scheduler.controlplane import ControlPlane
from sched_helpers import MANIFESTS, create, pod_obj, template_obj

from fakeapi.cluster import FakeCluster
from tests.fault_proxy import FaultProxy

NODES = 25              # x 4 GPUs of the manifest's node
SINGLE_PODS = 80        # one generated claim each
GROUPS = 2              # gangs of GROUP_SIZE pods sharing one generated claim
GROUP_SIZE = 3
DEADLINE = 12.0         # seconds for every pod to run


def gpu_cluster(nodes: int) -> list[dict[str, Any]]:
    """The manifest's DeviceClass, and its first Node and ResourceSlice repeated ``nodes`` times."""
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "gpu-cluster.yaml").read_text()) if d]
    device_class = next(d for d in docs if d["kind"] == "DeviceClass")
    node = next(d for d in docs if d["kind"] == "Node")
    slice_ = next(d for d in docs if d["kind"] == "ResourceSlice")
    objects = [device_class]
    for i in range(nodes):
        name = f"gpu-node-{i}"
        n = copy.deepcopy(node)
        n["metadata"]["name"] = name
        n["metadata"]["labels"]["kubernetes.io/hostname"] = name
        s = copy.deepcopy(slice_)
        s["metadata"]["name"] = f"{name}-gpu.example.com"
        s["spec"]["nodeName"] = name
        s["spec"]["pool"]["name"] = name
        objects += [n, s]
    return objects


def pod_group(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": GROUP_SIZE}},
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "tmpl"}]}}


def workload() -> list[dict[str, Any]]:
    objects = [template_obj("tmpl")]
    objects += [pod_obj(f"single-{i}", template="tmpl") for i in range(SINGLE_PODS)]
    for g in range(GROUPS):
        objects += [pod_obj(f"gang-{g}-{i}", template="tmpl", schedulingGroup={"podGroupName": f"gang-{g}"})
                    for i in range(GROUP_SIZE)]
    return objects


async def end_state_problems(api: ApiClient) -> list[str]:
    """Everything that differs from a fault-free run's end state (empty when none)."""
    pods = {p["metadata"]["name"]: p for p in (await api.list(PODS, "default"))["items"]}
    groups = {g["metadata"]["name"]: g for g in (await api.list(PODGROUPS, "default"))["items"]}
    claims = {c["metadata"]["name"]: c for c in (await api.list(RESOURCE_CLAIMS, "default"))["items"]}
    problems = [f"pod {name} is {p['status'].get('phase')}" for name, p in pods.items()
                if p["status"].get("phase") != "Running"]

    def recorded(obj: dict[str, Any]) -> list[str]:
        return [s["resourceClaimName"] for s in (obj.get("status") or {}).get("resourceClaimStatuses") or ()]

    expected: dict[str, dict[str, Any]] = {}   # claim name -> the object it must be owned by and reserved for
    for owner in [*groups.values(), *(p for p in pods.values() if "schedulingGroup" not in p["spec"])]:
        names = recorded(owner)
        if len(names) != 1:
            problems.append(f"{owner['kind']} {owner['metadata']['name']} records claims {names}")
        expected.update(dict.fromkeys(names, owner))
    for p in pods.values():
        group = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
        if group is not None and recorded(p) != recorded(groups[group]):
            problems.append(f"pod {p['metadata']['name']} records {recorded(p)}, its group {recorded(groups[group])}")

    devices: Counter[str] = Counter()
    for name, claim in claims.items():
        owner = expected.get(name)
        owners = [r["uid"] for r in claim["metadata"].get("ownerReferences") or ()]
        if owner is None:
            problems.append(f"claim {name} of {owners} is recorded by nobody (duplicate or orphan)")
            continue
        if owners != [owner["metadata"]["uid"]]:
            problems.append(f"claim {name} is owned by {owners}, not {owner['metadata']['name']}")
        status = claim.get("status") or {}
        reserved = [(r["resource"], r["name"]) for r in status.get("reservedFor") or ()]
        if reserved != [(owner["kind"].lower() + "s", owner["metadata"]["name"])]:
            problems.append(f"claim {name} is reserved for {reserved}")
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or ()
        if not results:
            problems.append(f"claim {name} is not allocated")
        devices.update(f"{r['pool']}/{r['device']}" for r in results)
    problems += [f"device {d} is allocated to {n} claims" for d, n in devices.items() if n > 1]
    return problems


async def test_chaos_end_state_equals_a_run_without_faults(fake_api: FakeCluster) -> None:
    seed = int(os.environ.get("FAKEAPI_CHAOS_SEED") or random.randrange(2**32))
    print(f"chaos seed: {seed} (replay with FAKEAPI_CHAOS_SEED={seed})")
    started = time.monotonic()
    async with ApiClient(fake_api.url) as api, FaultProxy(fake_api.url) as proxy:
        for obj in gpu_cluster(NODES):
            await create(api, obj)
        async with ControlPlane(proxy.url, sync_timeout=5.0):
            proxy.chaos(random.Random(seed), interval=(0.05, 0.25), reset_fraction=0.5, drop_probability=0.1,
                        max_delay=0.05)
            for g in range(GROUPS):
                await api.create(PODGROUPS, "default", pod_group(f"gang-{g}"))
            await asyncio.gather(*(create(api, obj) for obj in workload()))

            async def all_running() -> bool:
                pods = (await api.list(PODS, "default"))["items"]
                return all(p["status"].get("phase") == "Running" for p in pods)
            await wait_for(all_running, DEADLINE, interval=0.1,
                           message=f"every pod Running under chaos (seed {seed})")
            proxy.calm()
            problems = await end_state_problems(api)
        print(f"{proxy.resets} resets, {len(proxy.dropped)} answers dropped, "
              f"{time.monotonic() - started:.1f} s")
    assert not problems, f"seed {seed}: " + "; ".join(problems)
    assert proxy.resets and proxy.dropped, f"seed {seed}: the proxy injected no faults"
