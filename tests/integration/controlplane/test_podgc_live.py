"""The pod garbage collector against the real server: orphaned pods after the quarantine, the
terminated-pod threshold, terminating pods on out-of-service nodes and unscheduled ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import ManualClock
from fakeapi.scheduler.controllers.podgc import GC_CHECK_PERIOD, QUARANTINE, PodGCController
from fakeapi.scheduler.informers import InformerFactory

from fakeapi.cluster import FakeCluster

NS = "default"
HOLD = "example.com/hold"


def node(name: str, *, ready: bool = True, out_of_service: bool = False) -> dict[str, Any]:
    taints = [{"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"}] if out_of_service else []
    return {"metadata": {"name": name}, "spec": {"taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def pod(name: str, node_name: str = "", *, hold: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "finalizers": [HOLD] if hold else []}, "spec": spec}


async def cache_has(factory: InformerFactory, gvr: Any, name: str, present: bool = True) -> None:
    lister = factory.informer(gvr).lister
    namespace = None if gvr == NODES else NS
    await wait_for(lambda: (lister.get(namespace, name) is not None) == present,
                   message=f"the cache to {'see' if present else 'drop'} {name}")


async def test_pods_of_a_deleted_node_go_after_the_quarantine(api: ApiClient, run_loops: Callable[..., Any]) -> None:
    clock = ManualClock()
    factory = InformerFactory(api)
    gc = PodGCController(api, factory, clock)
    await api.create(NODES, None, node("gone"))
    await api.create(PODS, NS, pod("stranded", "gone", hold=True))
    await api.patch(PODS, NS, "stranded", {"status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}},
                    subresource="status")
    await api.create(PODS, NS, pod("elsewhere", "other-node"))  # its node never existed: quarantined too
    async with run_loops(factory):
        await api.delete(NODES, None, "gone")
        await cache_has(factory, NODES, "gone", present=False)
        await gc.collect()  # the quarantine starts
        await clock.advance(QUARANTINE - 1)
        await gc.collect()
        assert (await api.get(PODS, NS, "stranded")).get("metadata", {}).get("deletionTimestamp") is None

        await clock.advance(1)
        await gc.collect()
        stranded = await api.get(PODS, NS, "stranded")
        assert stranded["metadata"]["deletionGracePeriodSeconds"] == 0  # deleted with no grace; the finalizer holds it
        assert stranded["status"]["phase"] == "Failed"
        [condition] = [c for c in stranded["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True", "DeletionByPodGC", "PodGC: node no longer exists")
        assert {c["type"] for c in stranded["status"]["conditions"]} == {"PodScheduled", "DisruptionTarget"}
        assert [p["metadata"]["name"] for p in (await api.list(PODS, NS))["items"]] == ["stranded"]


async def test_a_node_the_cache_has_not_seen_yet_is_not_taken_for_deleted(api: ApiClient,
                                                                          run_loops: Callable[..., Any]) -> None:
    clock = ManualClock()
    factory = InformerFactory(api)
    gc = PodGCController(api, factory, clock)
    await api.create(PODS, NS, pod("early", "late-node"))
    async with run_loops(factory):
        await cache_has(factory, PODS, "early")
        await gc.collect()
        await api.create(NODES, None, node("late-node"))  # exists by the time the quarantine ends
        await clock.advance(QUARANTINE)
        await gc.collect()
        assert (await api.get(PODS, NS, "early")).get("status", {}).get("phase") != "Failed"


async def test_terminated_pods_beyond_the_threshold_go_evicted_first_then_oldest(
        api: ApiClient, run_loops: Callable[..., Any]) -> None:
    clock = ManualClock()
    factory = InformerFactory(api)
    gc = PodGCController(api, factory, clock, terminated_threshold=2)
    finished = {"a-done": {"phase": "Succeeded"}, "b-failed": {"phase": "Failed"}, "c-done": {"phase": "Succeeded"},
                "d-evicted": {"phase": "Failed", "reason": "Evicted"}}
    for name, status in finished.items():
        await api.create(PODS, NS, pod(name))
        await api.patch(PODS, NS, name, {"status": status}, subresource="status")
    await api.create(PODS, NS, pod("running"))
    async with run_loops(factory):
        for name in finished:
            await cache_has(factory, PODS, name)
        await gc.collect()
    names = sorted(p["metadata"]["name"] for p in (await api.list(PODS, NS))["items"])
    assert names == ["b-failed", "c-done", "running"]


async def test_terminating_pods_on_out_of_service_nodes_and_unscheduled_ones_go(
        api: ApiClient, run_loops: Callable[..., Any]) -> None:
    clock = ManualClock()
    factory = InformerFactory(api)
    gc = PodGCController(api, factory, clock)
    await api.create(NODES, None, node("down", ready=False, out_of_service=True))
    await api.create(NODES, None, node("up", out_of_service=True))  # Ready: the taint alone does nothing
    for name, node_name in (("on-down", "down"), ("on-up", "up"), ("unscheduled", "")):
        await api.create(PODS, NS, pod(name, node_name, hold=True))
        await api.delete(PODS, NS, name)
    async with run_loops(factory):
        for name in ("down", "up"):
            await cache_has(factory, NODES, name)
        for name in ("on-down", "on-up", "unscheduled"):
            await cache_has(factory, PODS, name)
        await gc.collect()
    pods = {p["metadata"]["name"]: p for p in (await api.list(PODS, NS))["items"]}
    for name in ("on-down", "unscheduled"):
        assert pods[name]["status"]["phase"] == "Failed"
        assert pods[name]["metadata"]["deletionGracePeriodSeconds"] == 0
    assert pods["on-up"]["metadata"]["deletionGracePeriodSeconds"] == 30
    assert pods["on-up"]["status"]["phase"] == "Pending"


async def test_the_control_plane_collects_on_its_clock() -> None:
    """In a cluster: a pod whose node is deleted goes once the clock has passed the quarantine."""
    clock = ManualClock()
    async with FakeCluster(clock=clock, controllers=["pod-garbage-collector-controller"]) as cluster, \
            ApiClient(cluster.url) as api:
        await api.create(NODES, None, node("n1"))
        await api.create(PODS, NS, pod("p", "n1"))
        await wait_for(lambda: _phase(api, "p", "Running"), message="the pod to run")
        await api.delete(NODES, None, "n1")
        for _ in range(int((QUARANTINE + 2 * GC_CHECK_PERIOD) // GC_CHECK_PERIOD)):
            await clock.advance(GC_CHECK_PERIOD)

        async def gone() -> bool:
            return not (await api.list(PODS, NS))["items"]

        await wait_for(gone, message="the orphaned pod to be collected")


async def _phase(api: ApiClient, name: str, phase: str) -> bool:
    return (await api.get(PODS, NS, name)).get("status", {}).get("phase") == phase
