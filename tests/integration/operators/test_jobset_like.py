"""The JobSet-like flow without JobSet: a small CRD of our own whose controller (here, in the
test) turns each object into a Workload, one PodGroup per replicated job with a shared claim
from a template (KEP-5729), and the pods; the control plane gang-schedules them with devices."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import (
    GVR,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    WORKLOADS_V1BETA1,
    ApiClient,
)

from fakeapi.errors import NotFound
from tests.integration.operators.conftest import GPU_CLASS, install_crd

GROUP = "workloads.example.com"
JOBSETS = GVR(GROUP, "v1", "minijobsets", True)
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"minijobsets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced", "names": {"plural": "minijobsets", "kind": "MiniJobSet"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "additionalPrinterColumns": [{"name": "Phase", "type": "string",
                                                         "jsonPath": ".status.phase"}],
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "required": ["jobs", "podsPerJob"], "properties": {
                                   "jobs": {"type": "integer", "minimum": 1, "maximum": 4},
                                   "podsPerJob": {"type": "integer", "minimum": 1, "maximum": 4},
                                   "deviceClass": {"type": "string", "default": GPU_CLASS}}},
                               "status": {"type": "object", "properties": {
                                   "phase": {"type": "string"}, "running": {"type": "integer"}}}}}}}]}}


def children(jobset: dict[str, Any]) -> list[tuple[GVR, dict[str, Any]]]:
    """What the controller creates for a MiniJobSet, all owned by it."""
    name, spec = jobset["metadata"]["name"], jobset["spec"]
    owner = [{"apiVersion": f"{GROUP}/v1", "kind": "MiniJobSet", "name": name, "uid": jobset["metadata"]["uid"],
              "controller": True, "blockOwnerDeletion": True}]
    claims = [{"name": "gpu", "resourceClaimTemplateName": f"{name}-gpu"}]
    gang = {"gang": {"minCount": spec["podsPerJob"]}}

    def meta(obj_name: str, **extra: Any) -> dict[str, Any]:
        return {"name": obj_name, "ownerReferences": owner, **extra}

    out: list[tuple[GVR, dict[str, Any]]] = [
        (RESOURCE_CLAIM_TEMPLATES, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                    "metadata": meta(f"{name}-gpu"), "spec": {"spec": {"devices": {"requests": [
                                        {"name": "gpu", "exactly": {"deviceClassName": spec["deviceClass"]}}]}}}}),
        (WORKLOADS_V1BETA1, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta(name),
                             "spec": {"controllerRef": {"apiGroup": GROUP, "kind": "MiniJobSet", "name": name},
                                      "podGroupTemplates": [{"name": "job", "schedulingPolicy": gang,
                                                             "resourceClaims": claims}]}}),
    ]
    for job in range(spec["jobs"]):
        group = f"{name}-job-{job}"
        out.append((PODGROUPS, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta(group),
                                "spec": {"workloadRef": {"workloadName": name, "templateName": "job"},
                                         "schedulingPolicy": gang, "resourceClaims": claims}}))
        out += [(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": meta(f"{group}-{i}", labels={"jobset": name}),
                        "spec": {"schedulingGroup": {"podGroupName": group}, "resourceClaims": claims,
                                 "containers": [{"name": "c", "image": "i",
                                                 "resources": {"claims": [{"name": "gpu"}]}}]}})
                for i in range(spec["podsPerJob"])]
    return out


async def reconcile(api: ApiClient, jobset: dict[str, Any]) -> None:
    """Create what is missing, then report how many pods run."""
    name = jobset["metadata"]["name"]
    if not (jobset.get("status") or {}).get("phase"):
        for gvr, obj in children(jobset):
            await api.create(gvr, "default", obj)
        await api.patch(JOBSETS, "default", name, {"status": {"phase": "Pending", "running": 0}}, subresource="status")
    pods = (await api.list(PODS, "default", label_selector=f"jobset={name}"))["items"]
    running = sum(1 for p in pods if p["status"].get("phase") == "Running")
    expected = jobset["spec"]["jobs"] * jobset["spec"]["podsPerJob"]
    phase = "Running" if running == expected else "Pending"
    await api.patch(JOBSETS, "default", name, {"status": {"phase": phase, "running": running}}, subresource="status")


async def controller(api: ApiClient) -> None:
    """Level-triggered, one worker: any MiniJobSet or pod event marks the state dirty, and the
    worker reconciles every MiniJobSet from a fresh list (as a workqueue coalesces keys)."""
    dirty = asyncio.Event()

    async def follow(gvr: GVR) -> None:
        rv = (await api.list(gvr, "default"))["metadata"]["resourceVersion"]
        dirty.set()
        async for event in api.watch(gvr, "default", resource_version=rv):
            if event["type"] != "BOOKMARK":
                dirty.set()

    async def work() -> None:
        while True:
            await dirty.wait()
            dirty.clear()
            for jobset in (await api.list(JOBSETS, "default"))["items"]:
                with contextlib.suppress(NotFound):  # deleted since the list: nothing left to do
                    await reconcile(api, jobset)

    await asyncio.gather(follow(JOBSETS), follow(PODS), work())


@pytest_asyncio.fixture
async def jobset_controller(api: ApiClient) -> AsyncIterator[asyncio.Task[None]]:
    await install_crd(api, CRD)
    task = asyncio.create_task(controller(api))
    yield task
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_custom_controller_creates_workload_podgroups_claims_and_pods(
        api: ApiClient, jobset_controller: asyncio.Task[None]) -> None:
    await api.create(JOBSETS, "default", {"apiVersion": f"{GROUP}/v1", "kind": "MiniJobSet",
                                          "metadata": {"name": "train"}, "spec": {"jobs": 2, "podsPerJob": 2}})
    jobset: dict[str, Any] = {}

    async def running() -> bool:
        assert not jobset_controller.done(), jobset_controller
        jobset.update(await api.get(JOBSETS, "default", "train"))
        return (jobset.get("status") or {}).get("phase") == "Running"

    await wait_for(running, 20, message="the MiniJobSet to run")
    assert jobset["status"]["running"] == 4 and jobset["spec"]["deviceClass"] == GPU_CLASS  # the schema default
    groups = (await api.list(PODGROUPS, "default"))["items"]
    assert sorted(g["metadata"]["name"] for g in groups) == ["train-job-0", "train-job-1"]
    claims = {c["metadata"]["name"]: c for c in (await api.list(RESOURCE_CLAIMS, "default"))["items"]}
    # One claim per PodGroup (KEP-5729), reserved for the group, and every pod of the group shares it.
    assert len(claims) == 2
    for group in groups:
        claim = claims[group["status"]["resourceClaimStatuses"][0]["resourceClaimName"]]
        assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["podgroups"]
    assert (await api.get(WORKLOADS_V1BETA1, "default", "train"))["spec"]["controllerRef"]["kind"] == "MiniJobSet"

    await api.delete(JOBSETS, "default", "train", propagation_policy="Foreground")

    async def collected() -> bool:
        left = [(await api.list(gvr, "default"))["items"]
                for gvr in (JOBSETS, WORKLOADS_V1BETA1, PODGROUPS, PODS, RESOURCE_CLAIMS)]
        return not any(left)

    await wait_for(collected, 20, message="everything the MiniJobSet owned to be collected")
