"""Priority and preemption end to end (DefaultPreemption, workload-aware preemption of 1.37)."""

from __future__ import annotations

import asyncio
from typing import Any

from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import EVENTS_V1, GVR, PODGROUPS, PODS, ApiClient
from sched_helpers import (
    apply_manifest,
    create,
    get_pod,
    pod_obj,
    template_obj,
    wait_running,
    wait_unschedulable,
)

PRIORITY_CLASSES = GVR("scheduling.k8s.io", "v1", "priorityclasses", False)


async def _classes(api: ApiClient) -> None:
    for name, value, policy in (("low", 10, None), ("high", 1000, None), ("high-never", 1000, "Never")):
        body: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": name}, "value": value}
        if policy:
            body["preemptionPolicy"] = policy
        await api.create(PRIORITY_CLASSES, None, body)


async def _node(api: ApiClient, name: str, cpu: str = "4") -> None:
    await api.create(GVR("", "v1", "nodes", False), None, {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


def _pod(name: str, cls: str, cpu: str, **spec: Any) -> dict[str, Any]:
    pod = pod_obj(name, priorityClassName=cls, **spec)
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return pod


def _group(name: str, cls: str, min_count: int, disruption: str = "single") -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"priorityClassName": cls, "schedulingPolicy": {"gang": {"minCount": min_count}},
                     "disruptionMode": {disruption: {}}}}


async def _gone(api: ApiClient, name: str) -> bool:
    return name not in {p["metadata"]["name"] for p in (await api.list(PODS, "default"))["items"]}


async def _preempted_events(api: ApiClient) -> dict[str, str]:
    """Victim name -> note of the scheduler's Preempted Events (events.k8s.io/v1, action Preempting)."""
    return {e["regarding"]["name"]: e["note"] for e in (await api.list(EVENTS_V1, "default"))["items"]
            if e["reason"] == "Preempted" and e["action"] == "Preempting" and e["type"] == "Normal"}


async def test_a_lower_priority_pod_is_preempted_for_cpu(api: ApiClient) -> None:
    await _classes(api)
    await _node(api, "n1")
    await create(api, _pod("low", "low", "3"))
    await wait_running(api, "low")
    start = (await api.list(PODS, "default"))["metadata"]["resourceVersion"]
    seen: list[dict[str, Any]] = []

    async def watch_low() -> None:
        async for event in api.watch(PODS, "default", resource_version=start, field_selector="metadata.name=low"):
            seen.append(event)
            if event["type"] == "DELETED":
                return
    watcher = asyncio.create_task(watch_low())
    high = await create(api, _pod("high", "high", "3"))
    await asyncio.wait_for(watcher, 10)
    marked = [c for e in seen for c in (e["object"].get("status") or {}).get("conditions") or ()
              if c["type"] == "DisruptionTarget"]
    assert marked[0] | {"lastTransitionTime": None} == {
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod", "lastTransitionTime": None}
    assert (await wait_running(api, "high"))["spec"]["nodeName"] == "n1"
    events = await wait_for(lambda: _preempted_events(api), message="the Preempted event")
    assert events == {"low": f"Preempted by pod {high['metadata']['uid']} on node n1"}
    # The preemptor is the Event's related object, as upstream's recorder names it.
    [event] = [e for e in (await api.list(EVENTS_V1, "default"))["items"] if e["reason"] == "Preempted"]
    assert {k: event["related"][k] for k in ("kind", "name", "uid")} == {
        "kind": "Pod", "name": "high", "uid": high["metadata"]["uid"]}


async def _second_pod_on_a_full_node(api: ApiClient, first: str, second: str) -> dict[str, Any]:
    """A 4-cpu node runs a 3-cpu pod of class ``first``; a 3-cpu pod of class ``second`` comes:
    its PodScheduled condition once it is rejected."""
    await _classes(api)
    await _node(api, "n1")
    await create(api, _pod("running", first, "3"))
    await wait_running(api, "running")
    await create(api, _pod("coming", second, "3"))
    return await wait_unschedulable(api, "coming")


async def test_preemption_policy_never_waits_for_room(api: ApiClient) -> None:
    condition = await _second_pod_on_a_full_node(api, "low", "high-never")
    assert condition["message"] == ("0/1 nodes are available: 1 Insufficient cpu. "
                                    "preemption: not eligible due to preemptionPolicy=Never..")
    assert (await get_pod(api, "running"))["status"]["phase"] == "Running"
    await api.delete(PODS, "default", "running")
    await wait_running(api, "coming")


async def test_a_pod_that_only_lacks_a_device_does_not_preempt(api: ApiClient) -> None:
    await _classes(api)
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("all-gpus", {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All"}}]}}))
    for node in ("gpu-node-1", "gpu-node-2"):
        await create(api, pod_obj(f"low-{node}", template="all-gpus", priorityClassName="low",
                                  nodeSelector={"kubernetes.io/hostname": node}))
        await wait_running(api, f"low-{node}")
    await create(api, pod_obj("high", template="all-gpus", priorityClassName="high"))
    condition = await wait_unschedulable(api, "high")
    assert condition["message"].endswith(
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..")
    assert "cannot allocate all claims" in condition["message"]
    assert await _preempted_events(api) == {}
    assert [(await get_pod(api, f"low-{n}"))["status"]["phase"] for n in ("gpu-node-1", "gpu-node-2")] == \
        ["Running", "Running"]


async def test_a_gang_preempts_as_a_unit(api: ApiClient) -> None:
    await _classes(api)
    for name in ("n1", "n2", "n3"):
        await _node(api, name)
    # Low pods fill every node (2 cpu each, two per node); the high gang needs 3 cpu on two nodes.
    for i in range(6):
        await create(api, _pod(f"low-{i}", "low", "2"))
    for i in range(6):
        await wait_running(api, f"low-{i}")
    group = await api.create(PODGROUPS, "default", _group("trainers", "high", 2))
    assert group["spec"]["priority"] == 1000
    for i in range(2):
        await create(api, _pod(f"gang-{i}", "high", "3", schedulingGroup={"podGroupName": "trainers"}))
    placed = {(await wait_running(api, f"gang-{i}"))["spec"]["nodeName"] for i in range(2)}
    assert len(placed) == 2
    events = await wait_for(lambda: _preempted_events(api), message="the Preempted events")
    # Just enough: the two low pods on each of the gang's two nodes, none on the third node.
    assert len(events) == 4
    assert set(events.values()) == {f"Preempted by podgroup {group['metadata']['uid']} on node cluster"}
    survivors = [p for p in (await api.list(PODS, "default"))["items"] if p["metadata"]["name"].startswith("low")]
    assert len(survivors) == 2 and {p["spec"]["nodeName"] for p in survivors}.isdisjoint(placed)


async def _low_gang_and_a_high_pod(api: ApiClient, disruption: str) -> dict[str, str]:
    await _classes(api)
    for name in ("n1", "n2"):
        await _node(api, name)
    await api.create(PODGROUPS, "default", _group("batch", "low", 2, disruption))
    for i in range(2):
        await create(api, _pod(f"batch-{i}", "low", "3", schedulingGroup={"podGroupName": "batch"}))
    for i in range(2):
        await wait_running(api, f"batch-{i}")
    await create(api, _pod("urgent", "high", "3"))
    await wait_running(api, "urgent")
    return await wait_for(lambda: _preempted_events(api), message="the Preempted events")


async def test_a_member_of_an_all_group_is_never_a_lone_victim(api: ApiClient) -> None:
    events = await _low_gang_and_a_high_pod(api, "all")
    assert sorted(events) == ["batch-0", "batch-1"]

    async def both_gone() -> bool:
        return await _gone(api, "batch-0") and await _gone(api, "batch-1")
    await wait_for(both_gone, message="the whole low gang evicted")


async def test_a_member_of_a_single_group_goes_alone(api: ApiClient) -> None:
    events = await _low_gang_and_a_high_pod(api, "single")
    assert len(events) == 1
    survivor = ({"batch-0", "batch-1"} - set(events)).pop()
    assert (await get_pod(api, survivor))["status"]["phase"] == "Running"


async def test_no_preemption_of_equal_or_higher_priority(api: ApiClient) -> None:
    condition = await _second_pod_on_a_full_node(api, "high", "high")
    assert condition["message"] == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                                    "available: 1 No preemption victims found for incoming pod..")
