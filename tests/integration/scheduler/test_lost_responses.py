"""Writes whose outcome the control plane cannot know: the request reached the server (or not) and
the connection was reset before the answer came back.

The control plane runs in-process against a :class:`FaultProxy` in front of the API server; the
test reads the server directly.  Each test injects one fault at a chosen request, and holds back
the ResourceClaim watch where a quick informer would otherwise hide the bug.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import EVENTS, PODGROUPS, PODS, RESOURCE_CLAIMS, ApiClient
from fakeapi.scheduler.controlplane import ControlPlane
from fakeapi.scheduler.podgroup_status import CONDITION_SCHEDULED
from sched_helpers import (
    apply_manifest,
    claim_obj,
    create,
    devices_of,
    pod_claim,
    pod_obj,
    template_obj,
    wait_running,
)

from fakeapi.cluster import FakeCluster
from tests.fault_proxy import FaultProxy

CLAIM_WATCH = r"/resourceclaims\?(.*&)?watch=true"
NODE_1 = {"kubernetes.io/hostname": "gpu-node-1"}


@pytest.fixture
async def api(fake_api: FakeCluster) -> AsyncIterator[ApiClient]:
    """A direct client (no faults) on a cluster with the GPU manifest and no control plane yet."""
    async with ApiClient(fake_api.url) as client:
        await apply_manifest(client, "gpu-cluster.yaml")
        yield client


@pytest.fixture
async def proxy(fake_api: FakeCluster) -> AsyncIterator[FaultProxy]:
    async with FaultProxy(fake_api.url) as p:
        yield p


@pytest.fixture
async def control_plane(api: ApiClient, proxy: FaultProxy) -> AsyncIterator[ControlPlane]:
    """The control plane, reaching the server only through the proxy."""
    async with ControlPlane(proxy.url, sync_timeout=5.0) as plane:
        yield plane


async def scheduled_without_failures(api: ApiClient, pod: str) -> None:
    """The scheduler's Events for ``pod`` (written in order) end in Scheduled, none failed."""
    async def reasons() -> list[str]:
        return [e["reason"] for e in (await api.list(EVENTS, "default"))["items"]
                if e["involvedObject"]["name"] == pod and e.get("reportingComponent") == "default-scheduler"]

    async def scheduled() -> bool:
        return "Scheduled" in await reasons()
    await wait_for(scheduled, message=f"the Scheduled event of {pod}")
    assert "FailedScheduling" not in await reasons()


async def claims_owned_by(api: ApiClient, uid: str) -> list[dict[str, Any]]:
    return [c for c in (await api.list(RESOURCE_CLAIMS, "default"))["items"]
            if any(ref.get("uid") == uid for ref in c["metadata"].get("ownerReferences") or ())]


async def test_lost_allocation_response_does_not_free_the_device(api: ApiClient, proxy: FaultProxy) -> None:
    """Pod a's claim status write is committed but its answer lost; b must get another device."""
    await create(api, claim_obj("claim-a"))
    await create(api, claim_obj("claim-b"))
    async with ControlPlane(proxy.url, sync_timeout=5.0):   # its first list holds both claims
        lost = proxy.drop_response("PUT", r"/resourceclaims/claim-a/status(\?|$)")
        lagging_watch = proxy.hold_responses("GET", CLAIM_WATCH)
        await create(api, pod_obj("a", claim="claim-a", nodeSelector=NODE_1))
        await wait_for(lost.fired.is_set, message="the allocation of claim-a written and its answer dropped")
        await create(api, pod_obj("b", claim="claim-b", nodeSelector=NODE_1))

        async def allocated(name: str) -> bool:
            claim = await api.get(RESOURCE_CLAIMS, "default", name)
            return bool((claim.get("status") or {}).get("allocation"))
        await wait_for(lambda: allocated("claim-b"), message="claim-b allocated")
        lagging_watch.release()

        a, b = await wait_running(api, "a"), await wait_running(api, "b")
        devices_a, devices_b = devices_of(await pod_claim(api, a)), devices_of(await pod_claim(api, b))
        assert {d for _, d in devices_a}.isdisjoint(d for _, d in devices_b), (devices_a, devices_b)


async def test_lost_claim_create_response_does_not_create_a_second_claim(
        api: ApiClient, proxy: FaultProxy, control_plane: ControlPlane) -> None:
    """The generated claim is committed but the controller never hears so: it must find it."""
    await create(api, template_obj("tmpl"))
    lost = proxy.drop_response("POST", r"/namespaces/default/resourceclaims(\?|$)")
    lagging_watch = proxy.hold_responses("GET", CLAIM_WATCH)
    pod = await create(api, pod_obj("p", template="tmpl"))
    await wait_for(lost.fired.is_set, message="the claim created and the answer dropped")

    async def recorded() -> bool:
        return bool(((await api.get(PODS, "default", "p")).get("status") or {}).get("resourceClaimStatuses"))
    await wait_for(recorded, message="the generated claim recorded in the pod status")
    lagging_watch.release()

    running = await wait_running(api, "p")
    claims = await claims_owned_by(api, pod["metadata"]["uid"])
    assert [c["metadata"]["name"] for c in claims] == \
        [running["status"]["resourceClaimStatuses"][0]["resourceClaimName"]]


async def test_lost_binding_response_counts_as_bound(
        api: ApiClient, proxy: FaultProxy, control_plane: ControlPlane) -> None:
    """The binding is committed but its answer lost: the retry finds the pod on our node."""
    await create(api, template_obj("tmpl"))
    lost = proxy.drop_response("POST", r"/pods/p/binding$")
    await create(api, pod_obj("p", template="tmpl"))
    await wait_for(lost.fired.is_set, message="the binding committed and its answer dropped")
    pod = await wait_running(api, "p")

    claim = await pod_claim(api, pod)
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}]
    await scheduled_without_failures(api, "p")


async def test_failed_allocation_write_is_retried_not_given_up(
        api: ApiClient, proxy: FaultProxy, control_plane: ControlPlane) -> None:
    """The allocation write never reaches the server: the scheduler re-reads, writes again."""
    await create(api, template_obj("tmpl"))
    # Twice: aiohttp resends a PUT once by itself when the connection breaks.
    failed = proxy.fail_request("PUT", r"/resourceclaims/[^/?]+/status(\?|$)", times=2)
    await create(api, pod_obj("p", template="tmpl"))
    await wait_for(failed.fired.is_set, message="the allocation write reset before it was forwarded")
    pod = await wait_running(api, "p")
    assert (await pod_claim(api, pod))["status"]["reservedFor"][0]["uid"] == pod["metadata"]["uid"]
    await scheduled_without_failures(api, "p")


async def test_failed_pod_group_status_write_is_retried(
        api: ApiClient, proxy: FaultProxy, control_plane: ControlPlane) -> None:
    """The PodGroupInitiallyScheduled write never reaches the server: it is written again."""
    failed = proxy.fail_request("PATCH", r"/podgroups/pg/status(\?|$)")
    await api.create(PODGROUPS, "default", {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    for name in ("a", "b"):
        await create(api, pod_obj(name, schedulingGroup={"podGroupName": "pg"}))
    await wait_for(failed.fired.is_set, message="the PodGroup status write reset before it was forwarded")

    async def scheduled() -> bool:
        group = await api.get(PODGROUPS, "default", "pg")
        return any(c["type"] == CONDITION_SCHEDULED and c["status"] == "True"
                   for c in (group.get("status") or {}).get("conditions") or ())
    await wait_for(scheduled, message=f"{CONDITION_SCHEDULED}=True on pg")
