"""``FakeCluster`` modes: the control plane in this event loop or in a child process."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES, ApiClient

from fakeapi.cluster import FakeCluster

MANIFEST = resources.files("fakeapi.fixtures") / "manifests" / "gpu-cluster.yaml"
GVRS = {"DeviceClass": DEVICE_CLASSES, "Node": NODES, "ResourceSlice": RESOURCE_SLICES}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com"}}]}}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
       "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}


@pytest.mark.parametrize("mode", [True, "process"], ids=["in-process", "child-process"])
async def test_pod_with_template_claim_runs_in_either_mode(mode: bool | str) -> None:
    async with FakeCluster(control_plane=mode) as cluster, ApiClient(cluster.url) as api:
        for obj in yaml.safe_load_all(MANIFEST.read_text()):
            if obj:
                await api.create(GVRS[obj["kind"]], None, obj)
        await api.create(RESOURCE_CLAIM_TEMPLATES, "default", TEMPLATE)
        await api.create(PODS, "default", POD)

        async def running() -> dict | None:
            pod = await api.get(PODS, "default", "trainer")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        pod = await wait_for(running, timeout=20, message="the pod to run")
        assert pod["spec"]["nodeName"].startswith("gpu-node-")
        assert pod["status"]["resourceClaimStatuses"][0]["name"] == "gpu"

