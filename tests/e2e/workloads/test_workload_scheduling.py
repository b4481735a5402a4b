"""Workloads meet scheduling and DRA: KEP-5547 gang Jobs, one claim per Deployment pod with garbage
collection, the API server dropping ``spec.scheduling`` with the gate off, and the seed's example."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest
import yaml
from fakeapi.fixtures import wait_for
from fakeapi.fixtures.plugin import Kubectl
from fakeapi.scheduler.client import (
    EVENTS,
    NODES,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIMS,
    WORKLOADS_V1BETA1,
    ApiClient,
)
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS, JOBS, REPLICASETS

from fakeapi.cluster import FakeCluster
from tests.e2e.workloads.conftest import NS, deployment, has_condition, job, live, node, pods_of, template, wait_status

MANIFESTS = resources.files("fakeapi.fixtures") / "manifests"


def manifest(name: str) -> str:
    return (MANIFESTS / name).read_text()


@pytest.mark.fakeapi(feature_gates="WorkloadWithJob=true")
async def test_indexed_gang_job_runs_only_when_all_its_pods_fit(fake_cluster: FakeCluster, api: ApiClient) -> None:
    big = template("gang", annotations={"fakeapi.dev/run-for": "100ms"}, restart="Never")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "10"}}  # one per 16-cpu node
    await api.create(JOBS, NS, job("train", big, completions=3, parallelism=3, completionMode="Indexed",
                                   scheduling={"schedulingPolicy": {"gang": {}}}))
    created = await api.get(JOBS, NS, "train")
    workloads = await wait_for(lambda: _items(api, WORKLOADS_V1BETA1), message="the Job's Workload")
    workload = workloads[0]
    assert workload["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "train"}
    assert [(o["kind"], o.get("controller")) for o in workload["metadata"]["ownerReferences"]] == [("Job", True)]
    assert workload["spec"]["podGroupTemplates"] == [{"name": "train-pgt-0",
                                                      "schedulingPolicy": {"gang": {"minCount": 3}}}]
    group = (await wait_for(lambda: _items(api, PODGROUPS), message="the Job's PodGroup"))[0]
    assert group["spec"]["workloadRef"] == {"workloadName": workload["metadata"]["name"], "templateName": "train-pgt-0"}
    owners = [(o["kind"], o["uid"], bool(o.get("controller"))) for o in group["metadata"]["ownerReferences"]]
    assert owners == [("Job", created["metadata"]["uid"], True), ("Workload", workload["metadata"]["uid"], False)]

    pods = await wait_for(lambda: _n_pods(api, "job-name=train", 3), message="3 gang pods")
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {group["metadata"]["name"]}
    assert sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods) == \
        ["0", "1", "2"]
    # Two nodes hold two of the three pods: the gang waits, nothing binds.
    await wait_for(lambda: _unschedulable(api), message="the third pod to be unschedulable")
    assert not any(p["spec"].get("nodeName") for p in await pods_of(api, "job-name=train"))
    await api.create(NODES, None, node("node-c"))
    done = await wait_status(api, JOBS, "train", lambda j: has_condition(j, "Complete"))
    assert done["status"]["completedIndexes"] == "0-2" and done["status"]["succeeded"] == 3
    nodes = {p["spec"]["nodeName"] for p in await pods_of(api, "job-name=train")}
    assert nodes == {"node-a", "node-b", "node-c"}


async def _items(api: ApiClient, gvr: Any) -> list[dict[str, Any]] | None:
    return (await api.list(gvr, NS))["items"] or None


async def _n_pods(api: ApiClient, label: str, n: int) -> list[dict[str, Any]] | None:
    pods = live(await pods_of(api, label))
    return pods if len(pods) == n else None


async def _unschedulable(api: ApiClient) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               for p in await pods_of(api, "job-name=train") for c in p["status"].get("conditions") or [])


@pytest.mark.fakeapi(control_plane=False)
async def test_job_scheduling_is_dropped_while_the_gate_is_off(fake_cluster: FakeCluster) -> None:
    async with ApiClient(fake_cluster.url) as api:
        stored = await api.create(JOBS, NS, job("plain", template("plain", restart="Never"),
                                                scheduling={"schedulingPolicy": {"gang": {"minCount": 2}}}))
    assert "scheduling" not in stored["spec"]


async def test_deployment_pods_get_one_claim_each_and_go_with_the_deployment(
        fake_cluster: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    await kubectl.run("apply", "-f", "-", input=manifest("gpu-cluster.yaml"))
    claimant = template("gpu")
    claimant["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    claimant["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    one_gpu = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
               "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                           "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
    await kubectl.run("apply", "-f", "-", input=yaml.safe_dump_all([one_gpu, deployment("gpu", 3, claimant)]))
    async with ApiClient(fake_cluster.url) as api:
        pods = await wait_for(lambda: _running(api, "app=gpu", 3), message="3 running pods with claims")
        claims = (await api.list(RESOURCE_CLAIMS, NS))["items"]
        assert len(claims) == 3 and all(c["status"].get("allocation") for c in claims)
        owners = {c["metadata"]["ownerReferences"][0]["uid"] for c in claims}
        assert owners == {p["metadata"]["uid"] for p in pods}
        devices = {(r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]}
        assert len(devices) == 3  # one device per pod
        await kubectl.run("delete", "deployment", "gpu")
        for gvr, label in ((REPLICASETS, None), (PODS, "app=gpu"), (RESOURCE_CLAIMS, None)):
            await wait_for(lambda g=gvr, sel=label: _gone(api, g, sel), message=f"{gvr.plural} collected")
        assert not (await api.list(DEPLOYMENTS, NS))["items"]


async def _running(api: ApiClient, label: str, n: int) -> list[dict[str, Any]] | None:
    pods = [p for p in live(await pods_of(api, label)) if p["status"].get("phase") == "Running"]
    return pods if len(pods) == n else None


async def _gone(api: ApiClient, gvr: Any, label: str | None) -> bool:
    return not (await api.list(gvr, NS, label_selector=label))["items"]


async def test_the_seeds_example_is_refused_as_written_and_runs_corrected(
        fake_cluster: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    await kubectl.run("apply", "-f", "-", input=manifest("gpu-cluster.yaml"))
    written = await kubectl.run("apply", "-f", "-", input=manifest("seed-example.yaml"), check=False)
    assert written.returncode != 0
    assert ('The Workload "training" is invalid: spec.podGroups[0].resourceClaims[0].constraints[0]'
            '.matchAttribute: Invalid value: "block-name": a valid C identifier must start with alphabetic '
            'character or') in written.stderr
    assert "deployment.apps/training created" in written.stdout
    corrected = list(yaml.safe_load_all(manifest("seed-example-corrected.yaml")))
    async with ApiClient(fake_cluster.url) as api:
        assert all(p["status"]["phase"] == "Pending" for p in await pods_of(api, "app=training"))
        # Without its Workload a pod's claim may yet be the group's; with the Workload fixed the
        # claim is the pod's own, and its template does not exist.
        await kubectl.run("apply", "-f", "-", input=yaml.safe_dump(corrected[0]))

        async def refused_claims() -> list[dict[str, Any]] | None:
            events = [e for e in (await api.list(EVENTS, NS))["items"]
                      if e["reason"] == "FailedResourceClaimCreation" and e["involvedObject"]["kind"] == "Pod"]
            return events or None
        events = await wait_for(refused_claims, message="the pods' claim creation to fail")
        assert ('PodResourceClaim gpu: resource claim template "gpu-claim": resourceclaimtemplates.resource.k8s.io '
                '"gpu-claim" not found') in events[0]["message"]
        assert all(p["status"]["phase"] == "Pending" for p in await pods_of(api, "app=training"))

        await kubectl.run("delete", "deployment", "training")
        await wait_for(lambda: _gone(api, PODS, "app=training"), message="the first attempt's pods to go")
        await kubectl.run("apply", "-f", "-", input=manifest("seed-example-corrected.yaml"))
        pods = await wait_for(lambda: _running(api, "app=training", 2), message="the corrected example to run")
        assert {(p["spec"]["workloadRef"]["name"], p["spec"]["workloadRef"]["podGroup"]) for p in pods} == \
            {("training", "workers")}
        claims = [c for c in (await api.list(RESOURCE_CLAIMS, NS))["items"] if c["status"].get("allocation")]
        # A template entry with constraints is per pod: one claim each, all devices in one block.
        assert sorted(r["name"] for c in claims for r in c["status"]["reservedFor"]) == \
            sorted(p["metadata"]["name"] for p in pods)
        assert len({r["pool"] for c in claims for r in c["status"]["allocation"]["devices"]["results"]}) == 1
