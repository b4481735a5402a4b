"""Kubelet emulation against the real server: start only with reserved claims, fast deletion."""

import asyncio
import contextlib

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import EVENTS, PODS, RESOURCE_CLAIMS
from fakeapi.scheduler.clock import ManualClock
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.kubelet import Kubelet

NS = "default"
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
ALLOCATION = {"devices": {"results": [
    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}


def pod(name, claim=None, node="node-1", annotations=None, finalizers=None):
    spec = {"containers": [{"name": "main", "image": "busybox"}], "nodeName": node}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    meta = {"name": name, "namespace": NS, "annotations": annotations or {}, "finalizers": finalizers or []}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@contextlib.asynccontextmanager
async def kubelet_running(api, run_loops, clock=None):
    factory = InformerFactory(api)
    recorder = EventRecorder(api, "kubelet")
    kubelet = Kubelet(api, factory, recorder, workers=1, clock=clock)
    async with run_loops(factory, kubelet):
        yield kubelet
    await recorder.close()


@pytest.fixture
async def kubelet(api, run_loops):
    async with kubelet_running(api, run_loops) as kubelet:
        yield kubelet


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
        return [e for e in events
                if e["involvedObject"]["name"] == "consumer" and e["reason"] == "FailedPrepareDynamicResources"]

    [event] = await wait_for(why_pending, message="an event explaining the pending pod")
    assert "ResourceClaim gpu is not allocated" in event["message"]
    # As upstream's kubelet records it: its node is the source's host and the reporting instance.
    assert event["source"] == {"component": "kubelet", "host": "node-1"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("kubelet", "node-1")
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


async def events_until_deleted(api, name, since):
    """The watch events of pod ``name`` after ``since``, up to its DELETED."""
    events = []
    async for event in api.watch(PODS, NS, resource_version=since, field_selector=f"metadata.name={name}",
                                 allow_bookmarks=False):
        events.append(event)
        if event["type"] == "DELETED":
            return events
    return events


def ready(p):
    return next(c["status"] for c in p["status"]["conditions"] if c["type"] == "Ready")


async def test_deleted_pod_is_reported_failed_and_not_ready_before_it_goes(api, kubelet):
    """As the kubelet since 1.27: a deleted pod's containers stop (SIGTERM: 143), the pod turns
    Failed with Ready False, and only then is the deletion confirmed; a watcher sees both."""
    running = await api.create(PODS, NS, pod("stopping"))
    running = await wait_phase(api, "stopping", "Running")
    watcher = asyncio.create_task(events_until_deleted(api, "stopping", running["metadata"]["resourceVersion"]))
    await api.delete(PODS, NS, "stopping")
    async with asyncio.timeout(5):
        events = await watcher
    terminating, last = events[0]["object"], events[-2]["object"]
    assert "deletionTimestamp" in terminating["metadata"] and terminating["status"]["phase"] == "Running"
    assert (last["status"]["phase"], ready(last)) == ("Failed", "False")
    conditions = {c["type"]: (c["status"], c.get("reason")) for c in last["status"]["conditions"]}
    assert conditions["Ready"] == conditions["ContainersReady"] == ("False", "PodFailed")
    assert conditions["PodReadyToStartContainers"] == ("False", None)
    [container] = last["status"]["containerStatuses"]
    assert (container["ready"], container["started"]) == (False, False)
    terminated = container["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (143, "Error")
    assert terminated["startedAt"] == running["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
    assert events[-1]["type"] == "DELETED"


async def test_deleted_pod_with_a_finalizer_stays_terminal_until_released(api, kubelet, fetch):
    await api.create(PODS, NS, pod("held", finalizers=["example.com/hold"]))
    await wait_phase(api, "held", "Running")
    await api.delete(PODS, NS, "held")
    held = await wait_phase(api, "held", "Failed")

    async def confirmed():
        current = await api.get(PODS, NS, "held")
        return current if current["metadata"].get("deletionGracePeriodSeconds") == 0 else None

    held = await wait_for(confirmed, message="the kubelet to confirm the deletion")
    assert ready(held) == "False"
    await api.patch(PODS, NS, "held", {"metadata": {"finalizers": None}})

    async def gone():
        return await fetch(api, PODS, NS, "held") is None

    await wait_for(gone, message="the released pod to be removed")


@pytest.mark.parametrize(("grace", "exit_code"), [(30, 143), (3, 137)], ids=["stops-in-time", "killed"])
async def test_terminate_after_keeps_the_pod_terminating_on_the_clock(api, run_loops, fetch, grace, exit_code):
    """``fakeapi.dev/terminate-after: 5s``: the containers take five seconds of the control plane's
    clock to stop, and are killed (137) when the grace period ends first."""
    clock = ManualClock()
    async with kubelet_running(api, run_loops, clock):
        await api.create(PODS, NS, pod("slow", annotations={"fakeapi.dev/terminate-after": "5s"}))
        await wait_phase(api, "slow", "Running")
        await api.delete(PODS, NS, "slow", grace_period_seconds=grace)
        await wait_for(lambda: clock.pending > 0, message="the kubelet to wait for the containers")
        terminating = await api.get(PODS, NS, "slow")
        assert (terminating["status"]["phase"], ready(terminating)) == ("Running", "True")

        await clock.advance(min(grace, 5) - 0.5)
        assert (await api.get(PODS, NS, "slow"))["status"]["phase"] == "Running"

        since = (await api.get(PODS, NS, "slow"))["metadata"]["resourceVersion"]
        watcher = asyncio.create_task(events_until_deleted(api, "slow", since))
        await clock.advance(0.5)
        async with asyncio.timeout(5):
            events = await watcher
        stopped = events[-2]["object"]
        assert stopped["status"]["phase"] == "Failed"
        assert stopped["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == exit_code
        assert await fetch(api, PODS, NS, "slow") is None


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
