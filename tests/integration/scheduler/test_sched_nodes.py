"""Node filters end to end: taints/tolerations, selectors, resources, cordon, schedulerName."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.client import NODES, ApiClient
from sched_helpers import apply_manifest, create, get_pod, pod_obj, wait_running, wait_unschedulable

TAINT = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}


async def test_node_taint_requires_toleration(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.patch(NODES, None, "gpu-node-1", {"spec": {"taints": [TAINT]}})
    await create(api, pod_obj("free"))
    assert (await wait_running(api, "free"))["spec"]["nodeName"] == "gpu-node-2"
    pinned = {"kubernetes.io/hostname": "gpu-node-1"}
    await create(api, pod_obj("blocked", nodeSelector=pinned))
    condition = await wait_unschedulable(api, "blocked")
    assert condition["message"] == ("0/2 nodes are available: 1 node(s) didn't match Pod's node "
                                    "affinity/selector, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes "
                                    "are available: 2 Preemption is not helpful for scheduling..")
    tolerations = [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}]
    await create(api, pod_obj("tolerant", nodeSelector=pinned, tolerations=tolerations))
    assert (await wait_running(api, "tolerant"))["spec"]["nodeName"] == "gpu-node-1"
    # Removing the taint is a node event: the blocked pod is retried without polling.
    await api.patch(NODES, None, "gpu-node-1", {"spec": {"taints": None}})
    await wait_running(api, "blocked")


async def test_insufficient_cpu_then_node_added(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    big = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "16"}}}
    await create(api, {**pod_obj("big"), "spec": {"containers": [big]}})
    condition = await wait_unschedulable(api, "big")
    # Nothing of lower priority runs there, so preemption cannot help either.
    assert condition["message"] == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
                                    "available: 2 No preemption victims found for incoming pod..")
    await create(api, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "huge"},
                       "status": {"allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"}}})
    assert (await wait_running(api, "big"))["spec"]["nodeName"] == "huge"


async def test_cordoned_node_is_skipped(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.patch(NODES, None, "gpu-node-2", {"spec": {"unschedulable": True}})
    for i in range(3):
        await create(api, pod_obj(f"p{i}"))
    for i in range(3):
        assert (await wait_running(api, f"p{i}"))["spec"]["nodeName"] == "gpu-node-1"


@pytest.mark.parametrize("scheduler_name", ["other-scheduler"])
async def test_other_scheduler_pods_are_ignored(api: ApiClient, scheduler_name: str) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, pod_obj("mine"))
    await create(api, pod_obj("theirs", schedulerName=scheduler_name))
    await wait_running(api, "mine")
    pod = await get_pod(api, "theirs")
    assert not pod["spec"].get("nodeName")


async def test_no_nodes(api: ApiClient) -> None:
    await create(api, pod_obj("lonely"))
    condition = await wait_unschedulable(api, "lonely")
    assert condition["message"] == "no nodes available to schedule pods"
    await apply_manifest(api, "gpu-cluster.yaml")
    await wait_running(api, "lonely")


async def test_a_pod_level_request_is_what_the_scheduler_fits(api: ApiClient) -> None:
    # PodLevelResources: the pod asks for 16 cpus as a whole though its container asks for 1.
    await apply_manifest(api, "gpu-cluster.yaml")
    small = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
    await create(api, {**pod_obj("whole"), "spec": {"containers": [small], "resources": {"requests": {"cpu": "16"}}}})
    condition = await wait_unschedulable(api, "whole")
    assert condition["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    await create(api, {**pod_obj("parts"), "spec": {"containers": [small]}})
    await wait_running(api, "parts")
