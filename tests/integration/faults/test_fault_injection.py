"""Fault injection through the real surfaces: the official client and plain HTTP see upstream's
Status errors, watches end and resume into 410, the control plane pauses, nodes turn NotReady."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import PODS
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from fakeapi import FakeCluster
from fakeapi.config import ServerOptions
from fakeapi.errors import Expired

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}
POD = """
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: nginx}]
"""
NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady}]
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady}]
"""


def core_api(cluster) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=str(cluster.kubeconfig_path)))


async def test_the_official_client_sees_upstream_shaped_errors(fake_api):
    await fake_api.apply(CM)
    api = core_api(fake_api)
    with fake_api.faults.fail(verb="update", resource="configmaps", code=409, count=1) as fault:
        body = await asyncio.to_thread(api.read_namespaced_config_map, "cm", "default")
        with pytest.raises(ApiException) as conflict:
            await asyncio.to_thread(api.replace_namespaced_config_map, "cm", "default", body)
        replaced = await asyncio.to_thread(api.replace_namespaced_config_map, "cm", "default", body)
    assert fault.fired == 1 and replaced.metadata.name == "cm"
    assert conflict.value.status == 409 and conflict.value.reason == "Conflict"
    assert '"Operation cannot be fulfilled on configmaps \\"cm\\": the object has been modified' in conflict.value.body
    with fake_api.faults.fail(verb="list", resource="configmaps", namespace="default", code=500):
        with pytest.raises(ApiException) as internal:
            await asyncio.to_thread(api.list_namespaced_config_map, "default")
        await asyncio.to_thread(api.list_namespaced_config_map, "kube-system")  # another namespace: served
    assert internal.value.status == 500 and "Internal error occurred: fakeapi: injected fault" in internal.value.body


async def test_429_carries_retry_after_and_latency_delays(fake_api):
    async with aiohttp.ClientSession(base_url=fake_api.url) as http:
        with fake_api.faults.fail(verb="get", resource="namespaces", code=429, retry_after=3):
            async with http.get("/api/v1/namespaces/default") as resp:
                status = await resp.json()
                assert resp.status == 429 and resp.headers["Retry-After"] == "3"
        assert status["reason"] == "TooManyRequests" and status["details"] == {"retryAfterSeconds": 3}
        with fake_api.faults.latency(0.3, resource="namespaces"):
            loop = asyncio.get_running_loop()
            started = loop.time()
            async with http.get("/api/v1/namespaces/default") as resp:
                assert resp.status == 200
            assert loop.time() - started >= 0.3
        async with http.get("/healthz") as resp:  # faults are scoped to their with blocks
            assert resp.status == 200


async def test_closed_and_compacted_watches_resume_into_410(fake_api):
    await fake_api.apply(CM)
    listing = await fake_api.api.list(PODS, "default")
    rv = listing["metadata"]["resourceVersion"]
    events = []

    async def watch():
        async for event in fake_api.api.watch(PODS, "default", resource_version=rv):
            events.append(event)

    watcher = asyncio.create_task(watch())
    await fake_api.wait_for("configmap", "cm", lambda cm: True)
    await wait_for(lambda: fake_api.registry.store.hub.count() > 0, message="the watch to open")
    fake_api.close_watches()
    await asyncio.wait_for(watcher, 5)  # the stream ended
    new_rv = fake_api.compact()
    assert new_rv > int(rv)
    with pytest.raises(Expired, match=f"too old resource version: {rv}"):
        async for _ in fake_api.api.watch(PODS, "default", resource_version=rv):
            pass
    fresh = await fake_api.api.list(PODS, "default")
    assert fresh["metadata"]["resourceVersion"] == str(new_rv)


async def test_admin_endpoint_only_when_enabled():
    async with FakeCluster(control_plane=False) as plain, aiohttp.ClientSession() as http:
        async with http.get(plain.url + "/fakeapi/v1/faults") as resp:
            assert resp.status == 404
    async with FakeCluster(control_plane=False, options=ServerOptions(enable_faults=True)) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as http:
        async with http.post("/fakeapi/v1/faults", json={"verb": "create", "resource": "configmaps", "code": 503,
                                                          "count": 1}) as resp:
            fault = await resp.json()
            assert resp.status == 201 and fault["id"] == 1 and fault["fired"] == 0
        async with http.post("/api/v1/namespaces/default/configmaps", json=CM) as resp:
            assert resp.status == 503 and (await resp.json())["reason"] == "ServiceUnavailable"
        async with http.get("/fakeapi/v1/faults") as resp:
            assert [f["fired"] for f in (await resp.json())["items"]] == [1]
        async with http.post("/fakeapi/v1/faults", json={"code": 418}) as resp:
            bad = await resp.json()
            assert resp.status == 400 and bad["message"].startswith("invalid fault: code must be one of")
        async with http.delete("/fakeapi/v1/faults/7") as resp:
            assert resp.status == 404
        async with http.delete("/fakeapi/v1/faults/1") as resp:
            assert resp.status == 200
        async with http.post("/fakeapi/v1/history/compact") as resp:
            rv = (await resp.json())["metadata"]["resourceVersion"]
        async with http.get("/api/v1/namespaces/default/configmaps", params={"watch": "1", "resourceVersion": "1"}) \
                as resp:
            line = await resp.content.readline()
        event = json.loads(line)
        assert event["type"] == "ERROR" and event["object"]["code"] == 410
        assert event["object"]["message"] == f"too old resource version: 1 ({int(rv) + 1})"


async def test_paused_control_plane_schedules_nothing_until_resumed(fake_cluster):
    await fake_cluster.apply(NODES)
    await fake_cluster.pause_control_plane()
    try:
        await fake_cluster.apply(POD)
        with pytest.raises(AssertionError, match=r"timed out after 0\.3s"):
            await fake_cluster.wait_for("pod", "web", "jsonpath={.spec.nodeName}", timeout=0.3)
    finally:
        await fake_cluster.resume_control_plane()
    pod = await fake_cluster.wait_for("pod", "web", "condition=Ready")
    assert pod["spec"]["nodeName"] in ("node-a", "node-b")


async def test_not_ready_and_deleted_nodes(fake_cluster, kubectl_for):
    await fake_cluster.apply(NODES)
    await fake_cluster.node_not_ready("node-a")
    node = await fake_cluster.get("node", "node-a")
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute")}
    out = (await kubectl_for(fake_cluster).run("get", "nodes", "--no-headers")).stdout
    assert [line.split()[:2] for line in out.splitlines()] == [["node-a", "NotReady"], ["node-b", "Ready"]]
    for i in range(3):
        await fake_cluster.apply(POD.replace("name: web", f"name: web-{i}"))
    for i in range(3):
        pod = await fake_cluster.wait_for("pod", f"web-{i}", "condition=Ready")
        assert pod["spec"]["nodeName"] == "node-b"
    await fake_cluster.node_ready("node-a")
    assert "taints" not in (await fake_cluster.get("node", "node-a"))["spec"]
    await fake_cluster.delete_node("node-b")
    for i in range(3):
        await fake_cluster.wait_for("pod", f"web-{i}", "delete")
    assert [n["metadata"]["name"] for n in await fake_cluster.list("nodes")] == ["node-a"]
