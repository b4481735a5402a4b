"""kubectl 1.37 against the workload controllers: its generators (protobuf bodies), scale, rollouts,
jobs with ``wait --for=condition=complete``, and drain with a PodDisruptionBudget."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
import yaml
from fakeapi.fixtures import wait_for
from fakeapi.fixtures.plugin import Kubectl
from fakeapi.scheduler.client import EVENTS, ApiClient
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS, PDBS, REPLICASETS
from kubernetes import client, config

from fakeapi.cluster import FakeCluster
from tests.e2e.workloads.conftest import has_condition, pods_of, wait_status


async def test_deployment_lifecycle_with_kubectl(fake_cluster: FakeCluster, api: ApiClient,
                                                 kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    await kubectl.run("create", "deployment", "web", "--image=nginx:1", "--replicas=2", "--port=80")
    created = yaml.safe_load((await kubectl.run("get", "deployment", "web", "-o", "yaml")).stdout)
    container = created["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["ports"][0]["containerPort"]) == ("nginx:1", 80)
    assert created["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": "25%"}
    await kubectl.run("rollout", "status", "deployment/web", "--timeout=20s")
    await kubectl.run("scale", "deployment/web", "--replicas=3")
    await wait_status(api, DEPLOYMENTS, "web", lambda d: d["status"].get("availableReplicas") == 3)

    await kubectl.run("set", "image", "deployment/web", "nginx=nginx:2")
    await kubectl.run("rollout", "status", "deployment/web", "--timeout=20s")
    images = {p["spec"]["containers"][0]["image"] for p in await pods_of(api, "app=web")
              if not p["metadata"].get("deletionTimestamp")}
    assert images == {"nginx:2"}
    history = (await kubectl.run("rollout", "history", "deployment/web")).stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    await kubectl.run("rollout", "undo", "deployment/web")
    await kubectl.run("rollout", "status", "deployment/web", "--timeout=20s")
    sets = (await api.list(REPLICASETS, "default"))["items"]
    assert len(sets) == 2  # the undo reused the first ReplicaSet, now revision 3
    first = next(rs for rs in sets if rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1")
    assert first["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert first["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert first["spec"]["replicas"] == 3

    await kubectl.run("rollout", "restart", "deployment/web")
    await kubectl.run("rollout", "status", "deployment/web", "--timeout=20s")
    table = (await kubectl.run("get", "deployment", "web")).stdout.split()
    assert table[5:9] == ["web", "3/3", "3", "3"]
    done = await api.get(DEPLOYMENTS, "default", "web")
    assert has_condition(done, "Progressing", "NewReplicaSetAvailable")
    assert has_condition(done, "Available", "MinimumReplicasAvailable")


async def test_job_created_by_kubectl_completes_when_its_pod_ends(
        fake_cluster: FakeCluster, api: ApiClient, kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    await kubectl.run("create", "job", "pi", "--image=busybox", "--", "echo", "3.14")
    waiting = await kubectl.start("wait", "--for=condition=complete", "job/pi", "--timeout=20s")
    pod = await wait_status_pod(api)
    # A client ends the pod through the status subresource, as a real kubelet's report would.
    await kubectl.run("patch", "pod", pod, "--subresource=status", "--type=merge",
                      "-p", '{"status":{"phase":"Succeeded"}}')
    out, err = await waiting.communicate()
    assert waiting.returncode == 0, err.decode()
    assert out.decode().strip() == "job.batch/pi condition met"
    columns = (await kubectl.run("get", "job", "pi")).stdout.splitlines()[1].split()
    assert columns[1:3] == ["Complete", "1/1"]


async def wait_status_pod(api: ApiClient) -> str:
    pods = await wait_for(lambda: _running(api), message="the job's pod to run")
    return str(pods[0]["metadata"]["name"])


async def _running(api: ApiClient) -> list[dict] | None:
    pods = [p for p in await pods_of(api, "job-name=pi") if (p.get("status") or {}).get("phase") == "Running"]
    return pods or None


async def test_drain_respects_a_pod_disruption_budget(fake_cluster: FakeCluster, api: ApiClient,
                                                      kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    # One pod per node (cordons steer the scheduler), so draining node-a evicts exactly one pod.
    await kubectl.run("cordon", "node-b")
    await kubectl.run("create", "deployment", "db", "--image=postgres", "--replicas=1")
    await kubectl.run("rollout", "status", "deployment/db", "--timeout=20s")
    await kubectl.run("uncordon", "node-b")
    await kubectl.run("cordon", "node-a")
    await kubectl.run("scale", "deployment/db", "--replicas=2")
    await kubectl.run("rollout", "status", "deployment/db", "--timeout=20s")
    await kubectl.run("uncordon", "node-a")
    await kubectl.run("create", "poddisruptionbudget", "db", "--selector=app=db", "--min-available=2")
    pdb = await wait_status(api, PDBS, "db", lambda p: p.get("status", {}).get("currentHealthy") == 2)
    assert (pdb["status"]["desiredHealthy"], pdb["status"]["disruptionsAllowed"]) == (2, 0)
    victim = next(p for p in await pods_of(api, "app=db") if p["spec"]["nodeName"] == "node-a")
    # What drain's eviction gets while the budget allows nothing (kubectl would retry every 5 s),
    # asked through the official client.
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name=victim["metadata"]["name"], namespace="default"))
    with config.new_client_from_config(config_file=str(fake_cluster.kubeconfig_path)) as official:
        with pytest.raises(client.ApiException) as refused:
            await asyncio.to_thread(client.CoreV1Api(official).create_namespaced_pod_eviction,
                                    victim["metadata"]["name"], "default", eviction)
    status = json.loads(refused.value.body)
    assert (refused.value.status, status["reason"]) == (429, "TooManyRequests")
    assert status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    cause = "The disruption budget db needs 2 healthy pods and has 2 currently"
    assert status["details"]["causes"] == [{"reason": "DisruptionBudget", "message": cause}]

    await kubectl.run("patch", "pdb", "db", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    await wait_status(api, PDBS, "db", lambda p: p["status"].get("disruptionsAllowed") == 1)
    node = victim["spec"]["nodeName"]
    drained = await kubectl.run("drain", node, "--timeout=20s")
    assert f"node/{node} drained" in drained.stdout
    assert f"pod/{victim['metadata']['name']} evicted" in drained.stdout
    evicted = [e for e in (await api.list(EVENTS, "default"))["items"] if e["reason"] == "SuccessfulCreate"]
    assert evicted  # the ReplicaSet replaced the evicted pod
    live = [p for p in await pods_of(api, "app=db") if not p["metadata"].get("deletionTimestamp")]
    assert all(p["spec"].get("nodeName") != node for p in live)


async def test_cordon_taints_the_node_and_uncordon_lifts_it(fake_cluster: FakeCluster, api: ApiClient,
                                                           kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    """The node lifecycle controller's TaintNodesByCondition, as ``kubectl describe node`` shows it."""
    kubectl = kubectl_for(fake_cluster)

    async def taints() -> str:
        return (await kubectl.run("get", "node", "node-a", "-o", "jsonpath={.spec.taints[*].key}")).stdout.strip()

    await kubectl.run("cordon", "node-a")
    await wait_for(lambda: _is(taints(), "node.kubernetes.io/unschedulable"), message="the cordon's taint")
    described = (await kubectl.run("describe", "node", "node-a")).stdout
    assert "node.kubernetes.io/unschedulable:NoSchedule" in described
    await kubectl.run("uncordon", "node-a")
    await wait_for(lambda: _is(taints(), ""), message="the taint lifted")


async def _is(value: Awaitable[str], expected: str) -> bool:
    return await value == expected
