"""Kubelet emulation against the real server: start only with reserved claims, fast deletion."""

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import EVENTS, PODS, RESOURCE_CLAIMS
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.kubelet import Kubelet

NS = "default"
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
ALLOCATION = {"devices": {"results": [
    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}


def pod(name, claim=None, node="node-1"):
    spec = {"containers": [{"name": "main", "image": "busybox"}], "nodeName": node}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


@pytest.fixture
async def kubelet(api, run_loops):
    factory = InformerFactory(api)
    recorder = EventRecorder(api, "kubelet")
    kubelet = Kubelet(api, factory, recorder, workers=1)
    async with run_loops(factory, kubelet):
        yield kubelet
    await recorder.close()


def phase(p):
    return (p.get("status") or {}).get("phase")


async def wait_phase(api, name, expected):
    async def reached():
        return phase(await api.get(PODS, NS, name)) == expected
    await wait_for(reached, message=f"pod {name} to be {expected}")
    return await api.get(PODS, NS, name)


async def reserve(api, claim_name, *pods):
    c = await api.get(RESOURCE_CLAIMS, NS, claim_name)
    c["status"] = {"allocation": ALLOCATION,
                   "reservedFor": [{"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}
                                   for p in pods]}
    await api.update(RESOURCE_CLAIMS, NS, c, subresource="status")


async def test_bound_pod_without_claims_runs(api, kubelet):
    await api.create(PODS, NS, pod("plain"))
    running = await wait_phase(api, "plain", "Running")
    conditions = {c["type"]: c["status"] for c in running["status"]["conditions"]}
    assert {conditions[t] for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")} == {"True"}
    [container] = running["status"]["containerStatuses"]
    assert container["ready"] and "running" in container["state"]


async def test_unbound_pod_is_left_alone(api, kubelet):
    await api.create(PODS, NS, pod("unbound", node=""))
    await api.create(PODS, NS, pod("sentinel"))
    await wait_phase(api, "sentinel", "Running")
    assert phase(await api.get(PODS, NS, "unbound")) != "Running"


async def test_pod_waits_for_claim_reservation(api, kubelet):
    await api.create(RESOURCE_CLAIMS, NS, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                           "metadata": {"name": "gpu", "namespace": NS}, "spec": CLAIM_SPEC})
    waiting = await api.create(PODS, NS, pod("consumer", claim="gpu"))

    async def why_pending():
        events = (await api.list(EVENTS, NS))["items"]
        return [e["message"] for e in events
                if e["involvedObject"]["name"] == "consumer" and e["reason"] == "FailedPrepareDynamicResources"]

    [message] = await wait_for(why_pending, message="an event explaining the pending pod")
    assert "ResourceClaim gpu is not allocated" in message
    assert phase(await api.get(PODS, NS, "consumer")) != "Running"

    await reserve(api, "gpu", waiting)
    await wait_phase(api, "consumer", "Running")


async def test_terminal_phase_is_never_overridden(api, kubelet):
    await api.create(RESOURCE_CLAIMS, NS, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                           "metadata": {"name": "shared", "namespace": NS}, "spec": CLAIM_SPEC})
    # Same claim, names sorted so the single worker handles "a-finished" before "b-sentinel".
    finished = await api.create(PODS, NS, pod("a-finished", claim="shared"))
    sentinel = await api.create(PODS, NS, pod("b-sentinel", claim="shared"))
    await api.patch(PODS, NS, "a-finished", {"status": {"phase": "Failed"}}, subresource="status")
    await reserve(api, "shared", finished, sentinel)
    await wait_phase(api, "b-sentinel", "Running")
    assert phase(await api.get(PODS, NS, "a-finished")) == "Failed"


async def test_deleting_bound_pod_completes_promptly(api, kubelet, fetch):
    await api.create(PODS, NS, pod("doomed"))
    await wait_phase(api, "doomed", "Running")
    await api.delete(PODS, NS, "doomed")

    async def gone():
        return await fetch(api, PODS, NS, "doomed") is None

    await wait_for(gone, timeout=2.0, message="the bound pod to be removed")


async def test_pod_ips_are_distinct_and_freed_with_the_pod(api, kubelet, fetch):
    # An address a client wrote into an unbound pod's status is taken too.
    await api.create(PODS, NS, pod("squatter", node=""))
    await api.patch(PODS, NS, "squatter", {"status": {"podIP": "10.244.0.2"}}, subresource="status")
    for name in ("ip-a", "ip-b"):
        await api.create(PODS, NS, pod(name))
        await wait_phase(api, name, "Running")
    ips = {name: (await api.get(PODS, NS, name))["status"]["podIP"] for name in ("ip-a", "ip-b")}
    assert ips == {"ip-a": "10.244.0.1", "ip-b": "10.244.0.3"}
    await api.delete(PODS, NS, "ip-a")

    async def gone():
        return await fetch(api, PODS, NS, "ip-a") is None

    await wait_for(gone, message="ip-a to be removed")
    await api.create(PODS, NS, pod("ip-c"))
    assert (await wait_phase(api, "ip-c", "Running"))["status"]["podIP"] == "10.244.0.1"
