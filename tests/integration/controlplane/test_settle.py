"""``FakeCluster.settle``: it returns once the reaction to what a test did has run to its end, it
waits for requests the server still serves, and it says what kept it busy when it times out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeapi.scheduler.client import GVR, NODES, PODS, ApiClient
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS

from fakeapi.cluster import FakeCluster

NS = "default"
CONFIGMAPS = GVR("", "v1", "configmaps", True)


def node(name: str) -> dict[str, Any]:
    capacity = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": capacity, "allocatable": capacity,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}


async def test_a_deployment_is_available_once_settled() -> None:
    async with FakeCluster() as cluster, ApiClient(cluster.url) as api:
        await api.create(NODES, None, node("node-a"))
        await api.create(DEPLOYMENTS, NS, deployment("web", 3))
        await cluster.settle()
        # No waiting: Deployment → ReplicaSet → pods → scheduled → running → status, all done.
        pods = (await api.list(PODS, NS, label_selector="app=web"))["items"]
        assert [p["status"]["phase"] for p in pods] == ["Running"] * 3
        assert {p["spec"]["nodeName"] for p in pods} == {"node-a"}
        status = (await api.get(DEPLOYMENTS, NS, "web"))["status"]
        assert (status["availableReplicas"], status["readyReplicas"], status["observedGeneration"]) == (3, 3, 1)


async def test_settle_waits_for_a_request_the_server_still_serves() -> None:
    async with FakeCluster(control_plane=False) as cluster, ApiClient(cluster.url) as api:
        with cluster.faults.latency(0.3, verb="create", resource="configmaps"):
            create = asyncio.create_task(api.create(CONFIGMAPS, NS, {"metadata": {"name": "slow"}}))
            await asyncio.sleep(0)  # sent; the server holds it 0.3 s
            with pytest.raises(TimeoutError, match=r"did not settle within 0.05 s: 1 API request\(s\) in flight"):
                await cluster.settle(timeout=0.05)
            await cluster.settle()
            assert create.done()
        assert (await create)["metadata"]["name"] == "slow"


async def test_settle_needs_a_started_in_process_cluster() -> None:
    with pytest.raises(RuntimeError, match="cluster not started"):
        await FakeCluster().settle()
    # A child process's work is out of sight: refused, started or not.
    with pytest.raises(RuntimeError, match=r"needs the control plane in this process"):
        await FakeCluster(control_plane="process").settle()
