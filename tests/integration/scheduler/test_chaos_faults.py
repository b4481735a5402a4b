"""Chaos through fault injection: the KEP-5729 flow while the API server fails the control
plane's writes at random (409, 429 with Retry-After, 500, 503), closes every watch and compacts
its history under it.  The end state equals a run without faults: every pod Running, one
generated claim per PodGroup and per lone pod and no other, each allocated and reserved for
exactly its owner, no device given twice; and deleting the owners leaves no orphaned claim.
Replay a failure with ``FAKEAPI_CHAOS_SEED=<seed>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from typing import Any

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import PODGROUPS, PODS, RESOURCE_CLAIMS, ApiClient
from sched_helpers import pod_obj, template_obj
from test_chaos import end_state_problems, gpu_cluster, pod_group

from fakeapi.cluster import FakeCluster

NODES = 6               # x 4 GPUs
SINGLES = 8             # a generated claim each
GROUPS = 3              # of test_chaos.GROUP_SIZE pods sharing one generated claim
WRITES = ["create", "update", "patch", "delete"]


def objects() -> list[dict[str, Any]]:
    pods = [pod_obj(f"single-{i}", template="tmpl") for i in range(SINGLES)]
    pods += [pod_obj(f"gang-{g}-{i}", template="tmpl", schedulingGroup={"podGroupName": f"gang-{g}"})
             for g in range(GROUPS) for i in range(3)]
    return [template_obj("tmpl"), *(pod_group(f"gang-{g}") for g in range(GROUPS)), *pods]


async def disrupt(cluster: FakeCluster, rng: random.Random) -> None:
    """Now and then end every watch, half the time after compacting (so resumes get 410)."""
    while True:
        await asyncio.sleep(rng.uniform(0.05, 0.2))
        if rng.random() < 0.5:
            cluster.compact()
        cluster.close_watches()


async def run_flow(cluster: FakeCluster, seed: int | None) -> tuple[list[str], dict[str, Any]]:
    """Run the flow; return what differs from the expected end state and a summary of it."""
    async with ApiClient(cluster.url) as api:
        await cluster.apply(gpu_cluster(NODES))
        chaos = None
        if seed is not None:
            rng = random.Random(seed)
            cluster.faults.random.seed(seed)
            for code in (409, 429, 500, 503):
                cluster.faults.fail(code=code, verb=WRITES, user_agent="fakeapi-control-plane", probability=0.05)
            chaos = asyncio.create_task(disrupt(cluster, rng))
        try:
            await cluster.apply(objects())

            async def all_running() -> bool:
                pods = (await api.list(PODS, "default"))["items"]
                return len(pods) == SINGLES + 3 * GROUPS and all(p["status"].get("phase") == "Running" for p in pods)

            await wait_for(all_running, 20, interval=0.05, message=f"every pod Running (seed {seed})")
        finally:
            if chaos is not None:
                chaos.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await chaos
        fired = sum(f.fired for f in cluster.faults)
        cluster.faults.clear()
        problems = await end_state_problems(api)
        claims = (await api.list(RESOURCE_CLAIMS, "default"))["items"]
        summary = {"running": len((await api.list(PODS, "default"))["items"]), "claims": len(claims),
                   "reservedFor": sorted(r["resource"] for c in claims for r in c["status"]["reservedFor"])}
        for g in range(GROUPS):
            await api.delete(PODGROUPS, "default", f"gang-{g}")
        for p in (await api.list(PODS, "default"))["items"]:
            await api.delete(PODS, "default", p["metadata"]["name"])

        async def no_claims() -> bool:
            return not (await api.list(RESOURCE_CLAIMS, "default"))["items"]

        await wait_for(no_claims, 20, interval=0.05, message=f"no orphaned claim (seed {seed})")
    if seed is not None:
        assert fired, f"seed {seed}: no fault fired"
    return problems, summary


async def test_kep5729_under_random_faults_ends_as_without_them(fake_cluster: FakeCluster) -> None:
    seed = int(os.environ.get("FAKEAPI_CHAOS_SEED") or random.randrange(2**32))
    print(f"chaos seed: {seed} (replay with FAKEAPI_CHAOS_SEED={seed})")
    async with FakeCluster() as calm:
        expected_problems, expected = await run_flow(calm, None)
    problems, summary = await run_flow(fake_cluster, seed)
    assert expected_problems == [] and problems == [], f"seed {seed}: {problems or expected_problems}"
    assert summary == expected == {"running": SINGLES + 3 * GROUPS, "claims": SINGLES + GROUPS,
                                   "reservedFor": sorted(["podgroups"] * GROUPS + ["pods"] * SINGLES)}
