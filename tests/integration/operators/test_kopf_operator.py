"""A real kopf operator against ``fakeapi serve``-equivalent FakeCluster (API server, scheduler,
ResourceClaim controller, kubelet emulation): the operator handles a custom resource, creates
pods with a claim template for it and writes its status; the test follows the whole chain
through the API."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import GVR, PODS, RESOURCE_CLAIMS, ApiClient

from fakeapi.cluster import FakeCluster
from tests.integration.operators.conftest import GPU_CLASS, install_crd

OPERATOR = Path(__file__).with_name("trainjob_operator.py")
TRAINJOBS = GVR("training.example.com", "v1", "trainjobs", True)
TRAINJOB_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "trainjobs.training.example.com"},
    "spec": {"group": "training.example.com", "scope": "Namespaced",
             "names": {"plural": "trainjobs", "kind": "TrainJob"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "required": ["workers", "deviceClass"], "properties": {
                                   "workers": {"type": "integer", "minimum": 1, "maximum": 8},
                                   "deviceClass": {"type": "string"},
                                   "image": {"type": "string", "default": "trainer:latest"}}},
                               # kopf keeps its own bookkeeping in status.
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


@pytest_asyncio.fixture
async def operator(fake_cluster: FakeCluster, api: ApiClient) -> AsyncIterator[asyncio.subprocess.Process]:
    await install_crd(api, TRAINJOB_CRD)
    env = {**os.environ, "KUBECONFIG": str(fake_cluster.kubeconfig_path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces", str(OPERATOR),
        env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def test_kopf_operator_drives_pods_with_claims_and_status(api: ApiClient,
                                                                operator: asyncio.subprocess.Process) -> None:
    job = {"apiVersion": "training.example.com/v1", "kind": "TrainJob", "metadata": {"name": "llm"},
           "spec": {"workers": 2, "deviceClass": GPU_CLASS}}
    await api.create(TRAINJOBS, "default", job)
    current: dict[str, Any] = {}

    async def running() -> bool:
        assert operator.returncode is None, "the operator exited"
        current.update(await api.get(TRAINJOBS, "default", "llm"))
        return (current.get("status") or {}).get("phase") == "Running"

    await wait_for(running, 30, message="the operator to report the TrainJob Running")
    assert current["status"]["running"] == 2
    assert "kopf.zalando.org/last-handled-configuration" in current["metadata"]["annotations"]
    pods = (await api.list(PODS, "default", label_selector="training.example.com/job=llm"))["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["llm-worker-0", "llm-worker-1"]
    assert {p["metadata"]["ownerReferences"][0]["kind"] for p in pods} == {"TrainJob"}
    claims = (await api.list(RESOURCE_CLAIMS, "default"))["items"]
    assert len(claims) == 2 and all(c["status"]["allocation"] for c in claims)
    assert sorted(c["status"]["reservedFor"][0]["name"] for c in claims) == ["llm-worker-0", "llm-worker-1"]

    # Deleting the TrainJob: the GC removes the pods (owned by it) and their claims (owned by them).
    await api.delete(TRAINJOBS, "default", "llm")

    async def cleaned_up() -> bool:
        left = (await api.list(PODS, "default"))["items"] + (await api.list(RESOURCE_CLAIMS, "default"))["items"]
        jobs = (await api.list(TRAINJOBS, "default"))["items"]
        return not left and not jobs

    await wait_for(cleaned_up, 30, message="the TrainJob, its pods and their claims to be gone")
