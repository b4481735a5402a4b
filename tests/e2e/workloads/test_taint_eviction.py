"""The taint-eviction and node lifecycle controllers end to end: NoExecute node taints evict the
pods that do not tolerate them, at once or after ``tolerationSeconds`` of the control plane's
clock; a node made NotReady loses its pods after the default 300 s tolerations and their
Deployment replaces them elsewhere; taints removed in time cancel the eviction; a node whose
kubelet stops turns Unknown, is tainted unreachable and loses its pods the same way, unless
every node is down."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import EVENTS, NODES, PODS, ApiClient
from fakeapi.scheduler.controllers.nodelifecycle import GRACE_PERIOD as NODE_GRACE
from fakeapi.scheduler.controllers.nodelifecycle import MONITOR_PERIOD, UNREACHABLE
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS, STATEFULSETS
from fakeapi.scheduler.controllers.podgc import GC_CHECK_PERIOD as POD_GC_PERIOD
from fakeapi.scheduler.controllers.tainteviction import taints_added, toleration_delay
from fakeapi.scheduler.rules.lifecycle import KUBELET_STOPPED

from tests.e2e.workloads.conftest import NS, cluster_with_clock, deployment, live, pods_of, template

NOT_READY = "node.kubernetes.io/not-ready"


def pod(name: str, node_name: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "finalizers": ["example.com/hold"]},
            "spec": spec}


async def deleting(api: ApiClient, name: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        obj = await api.get(PODS, NS, name)
        return obj if obj["metadata"].get("deletionTimestamp") else None
    return await wait_for(check, message=f"pod {name} deleted")


def disruption(obj: dict[str, Any]) -> tuple[str, str] | None:
    return next(((c["reason"], c["message"]) for c in obj["status"].get("conditions") or ()
                 if c["type"] == "DisruptionTarget"), None)


async def eviction_events(api: ApiClient, name: str) -> list[str]:
    return [e["message"] for e in (await api.list(EVENTS, NS))["items"]
            if e["involvedObject"]["name"] == name and e["reason"] == "TaintManagerEviction"]


async def taint_node(api: ApiClient, name: str, taints: list[dict[str, Any]]) -> None:
    await api.patch(NODES, None, name, {"spec": {"taints": taints}})


async def test_an_untolerated_taint_evicts_at_once_a_tolerated_one_after_its_seconds() -> None:
    async with cluster_with_clock() as (_, api, clock):
        await api.create(PODS, NS, pod("intolerant", "node-a"))
        await api.create(PODS, NS, pod("patient", "node-a", [{"key": "example.com/drain", "operator": "Exists",
                                                               "effect": "NoExecute", "tolerationSeconds": 30}]))
        await api.create(PODS, NS, pod("stoic", "node-a", [{"key": "example.com/drain", "operator": "Exists"}]))
        await api.create(PODS, NS, pod("elsewhere", "node-b"))
        await taint_node(api, "node-a", [{"key": "example.com/drain", "effect": "NoExecute"}])

        evicted = await deleting(api, "intolerant")
        assert disruption(evicted) == ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
        await wait_for(lambda: eviction_events(api, "intolerant"), message="the eviction Event")
        assert await eviction_events(api, "intolerant") == ["Marking for deletion Pod default/intolerant"]
        assert not (await api.get(PODS, NS, "patient"))["metadata"].get("deletionTimestamp")

        await clock.advance(30)
        assert disruption(await deleting(api, "patient")) is not None
        for name in ("stoic", "elsewhere"):  # tolerated for ever; on an untainted node
            obj = await api.get(PODS, NS, name)
            assert not obj["metadata"].get("deletionTimestamp") and disruption(obj) is None


async def test_a_not_ready_node_loses_its_pods_after_300_seconds_and_they_come_back_elsewhere() -> None:
    async with cluster_with_clock() as (cluster, api, clock):
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": True}})
        # terminate-after keeps an evicted pod terminating until the clock moves on.
        await api.create(DEPLOYMENTS, NS, deployment("web", 1, template(
            "web", annotations={"fakeapi.dev/terminate-after": "5s"})))
        first = await wait_for(lambda: _running(api), message="the web pod Running")
        assert first["spec"]["nodeName"] == "node-a"
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": False}})

        await cluster.node_not_ready("node-a")
        await clock.advance(299)  # counted from the taint's timeAdded, however late the controller sees it
        assert not (await api.get(PODS, NS, first["metadata"]["name"]))["metadata"].get("deletionTimestamp")
        await clock.advance(1)  # the DefaultTolerationSeconds admission's 300 s
        assert disruption(await deleting(api, first["metadata"]["name"])) is not None

        async def replaced() -> dict[str, Any] | None:
            pod_ = await _running(api)
            return pod_ if pod_ and pod_["metadata"]["name"] != first["metadata"]["name"] else None
        replacement = await wait_for(replaced, message="the replacement Running")
        assert replacement["spec"]["nodeName"] == "node-b"


async def test_a_node_ready_again_in_time_cancels_the_eviction() -> None:
    async with cluster_with_clock() as (cluster, api, clock):
        await api.create(PODS, NS, pod("survivor", "node-a", [{"key": NOT_READY, "operator": "Exists",
                                                                "effect": "NoExecute", "tolerationSeconds": 60}]))
        await cluster.node_not_ready("node-a")
        await clock.advance(30)
        await cluster.node_ready("node-a")
        await wait_for(lambda: eviction_events(api, "survivor"), message="the cancellation Event")
        assert await eviction_events(api, "survivor") == ["Cancelling deletion of Pod default/survivor"]
        await clock.advance(60)
        obj = await api.get(PODS, NS, "survivor")
        assert not obj["metadata"].get("deletionTimestamp") and disruption(obj) is None


async def _running(api: ApiClient, selector: str = "app=web") -> dict[str, Any] | None:
    pods = [p for p in live(await pods_of(api, selector)) if (p.get("status") or {}).get("phase") == "Running"]
    return pods[0] if pods else None


@pytest.mark.parametrize(("taints", "tolerations", "expected"), [
    ([{"key": "a", "effect": "NoExecute"}], [], 0.0),
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "operator": "Exists"}], None),
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "operator": "Exists", "tolerationSeconds": 20},
                                             {"operator": "Exists", "tolerationSeconds": 5}], 5.0),
    # A toleration for ever does not outlast another matching one with seconds (upstream).
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "operator": "Exists"},
                                             {"key": "a", "operator": "Exists", "tolerationSeconds": 9}], 9.0),
    ([{"key": "a", "effect": "NoExecute"}, {"key": "b", "effect": "NoExecute"}],
     [{"key": "a", "operator": "Exists", "tolerationSeconds": 9}], 0.0),  # b is not tolerated
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "operator": "Exists", "tolerationSeconds": -3}], 0.0),
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}], 0.0),
])
def test_toleration_delay(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]],
                          expected: float | None) -> None:
    assert toleration_delay(taints, tolerations) == expected


async def test_a_stopped_kubelet_makes_its_node_unknown_and_its_pods_go_after_300_seconds() -> None:
    async with cluster_with_clock() as (cluster, api, clock):
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": True}})
        await api.create(DEPLOYMENTS, NS, deployment("web", 1, template("web")))
        first = await wait_for(lambda: _running(api), message="the web pod Running")
        name = first["metadata"]["name"]
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": False}})

        await cluster.stop_kubelet("node-a")
        await clock.advance(NODE_GRACE + 10)  # past 50 s, and the next 5 s pass

        async def unknown() -> dict[str, Any] | None:
            node_ = await api.get(NODES, None, "node-a")
            return node_ if _ready(node_) == "Unknown" else None
        node_a = await wait_for(unknown, message="node-a Ready Unknown")
        conditions = {c["type"]: c for c in node_a["status"]["conditions"]}
        assert (conditions["Ready"]["reason"], conditions["Ready"]["message"]) == (
            "NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert {k: c["status"] for k, c in conditions.items()} == {
            "Ready": "Unknown", "MemoryPressure": "Unknown", "DiskPressure": "Unknown", "PIDPressure": "Unknown"}

        async def tainted() -> list[tuple[str, str]] | None:
            taints = [(t["key"], t["effect"]) for t in (await api.get(NODES, None, "node-a"))["spec"].get("taints", [])]
            return taints if len(taints) == 2 else None
        assert await wait_for(tainted, message="node-a tainted") == [(UNREACHABLE, "NoSchedule"),
                                                                     (UNREACHABLE, "NoExecute")]

        async def pod_not_ready() -> bool:
            return _ready(await api.get(PODS, NS, name)) == "False"
        await wait_for(pod_not_ready, message="the pod no longer Ready")
        events = [(e["reason"], e["source"]["component"]) for e in (await api.list(EVENTS, NS))["items"]
                  if e["involvedObject"]["name"] == "node-a"]
        assert ("NodeNotReady", "node-controller") in events

        await clock.advance(300)  # the unreachable toleration DefaultTolerationSeconds gave the pod
        evicted = await deleting(api, name)
        assert disruption(evicted) == ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")

        async def replaced() -> dict[str, Any] | None:
            pod_ = await _running(api)
            return pod_ if pod_ and pod_["metadata"]["name"] != name else None
        assert (await wait_for(replaced, message="the replacement Running"))["spec"]["nodeName"] == "node-b"
        assert (await api.get(PODS, NS, name))["metadata"]["deletionTimestamp"]  # nobody confirms on node-a

        await cluster.start_kubelet("node-a")  # back: the node reports Ready, its kubelet lets the pod go

        async def ready() -> bool:
            return _ready(await api.get(NODES, None, "node-a")) == "True"
        await wait_for(ready, message="node-a Ready")
        await clock.advance(MONITOR_PERIOD)  # the lifecycle controller's next pass lifts the taints

        async def untainted() -> bool:
            return not (await api.get(NODES, None, "node-a"))["spec"].get("taints")
        await wait_for(untainted, message="node-a untainted")

        async def gone() -> bool:
            return name not in {p["metadata"]["name"] for p in await pods_of(api, "app=web")}
        await wait_for(gone, message="the evicted pod gone")


async def test_when_every_node_is_down_nothing_is_evicted() -> None:
    async with cluster_with_clock() as (cluster, api, clock):
        await api.create(PODS, NS, pod("stays", "node-a", []))  # no tolerations: would go at once
        for name in ("node-a", "node-b"):
            await cluster.stop_kubelet(name)
        await clock.advance(NODE_GRACE + 10)

        async def both_unknown() -> list[dict[str, Any]] | None:
            nodes = (await api.list(NODES))["items"]
            return nodes if all(_ready(n) == "Unknown" for n in nodes) else None
        await wait_for(both_unknown, message="both nodes Unknown")

        async def no_schedule_only() -> bool:
            nodes = (await api.list(NODES))["items"]
            return all([(t["key"], t["effect"]) for t in n["spec"].get("taints", [])] == [(UNREACHABLE, "NoSchedule")]
                       for n in nodes)
        await wait_for(no_schedule_only, message="unreachable NoSchedule taints only")
        await clock.advance(600)
        assert not (await api.get(PODS, NS, "stays"))["metadata"].get("deletionTimestamp")


def _ready(obj: dict[str, Any]) -> str | None:
    return next((c["status"] for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "Ready"),
                None)


async def test_a_statefulset_pod_on_a_failed_node_comes_back_only_once_the_node_is_out_of_service() -> None:
    """Non-graceful node shutdown (KEP-2268): a StatefulSet never runs two ``db-0`` at once, so its
    evicted pod stays terminating on the dead node until an admin marks the node out of service;
    then the pod garbage collector force-deletes it and the StatefulSet starts ``db-0`` again."""
    async with cluster_with_clock() as (cluster, api, clock):
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": True}})
        await api.create(STATEFULSETS, NS, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                                            "spec": {"replicas": 1, "serviceName": "db",
                                                     "selector": {"matchLabels": {"app": "db"}},
                                                     "template": template("db")}})
        first = await wait_for(lambda: _running(api, "app=db"), message="db-0 Running")
        assert first["spec"]["nodeName"] == "node-a"
        await api.patch(NODES, None, "node-b", {"spec": {"unschedulable": False}})

        await cluster.stop_kubelet("node-a")
        await clock.advance(NODE_GRACE + 10)
        await clock.advance(300)  # the unreachable taint's timeAdded + the pod's 300 s
        await deleting(api, "db-0")
        await clock.advance(POD_GC_PERIOD)  # a pass of the pod GC: the node is not out of service yet
        assert (await api.get(PODS, NS, "db-0"))["metadata"]["uid"] == first["metadata"]["uid"]

        node_a = await api.get(NODES, None, "node-a")
        await api.patch(NODES, None, "node-a", {"spec": {"taints": [
            *node_a["spec"]["taints"], {"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"}]}})
        await clock.advance(POD_GC_PERIOD)

        async def recreated() -> dict[str, Any] | None:
            pod_ = await _running(api, "app=db")
            return pod_ if pod_ and pod_["metadata"]["uid"] != first["metadata"]["uid"] else None
        again = await wait_for(recreated, message="db-0 Running again")
        assert (again["metadata"]["name"], again["spec"]["nodeName"]) == ("db-0", "node-b")


@pytest.mark.parametrize(("times", "expected"), [
    ([None], 1000.0),  # no timeAdded: from now
    (["1970-01-01T00:10:00Z"], 600.0),
    (["1970-01-01T00:10:00Z", "1970-01-01T00:15:00Z"], 900.0),  # the latest taint
    (["1970-01-01T00:10:00Z", None], 1000.0),
    (["1970-01-01T01:00:00Z"], 1000.0),  # a time still to come counts as now
])
def test_tolerations_count_from_the_taints_time_added(times: list[str | None], expected: float) -> None:
    taints = [{"key": f"k{i}", "effect": "NoExecute", **({"timeAdded": t} if t else {})} for i, t in enumerate(times)]
    assert taints_added(taints, 1000.0) == expected


async def test_a_stop_older_than_the_grace_period_marks_the_node_at_once() -> None:
    async with cluster_with_clock() as (_, api, clock):
        long_ago = clock.rfc3339(offset=-(NODE_GRACE + 30))
        await api.patch(NODES, None, "node-a", {"metadata": {"annotations": {KUBELET_STOPPED: long_ago}}})

        async def unknown() -> bool:  # no clock move: the controller acts on the stop when it sees it
            return _ready(await api.get(NODES, None, "node-a")) == "Unknown"
        await wait_for(unknown, message="node-a Ready Unknown")
        assert _ready(await api.get(NODES, None, "node-b")) == "True"
