"""Operator tests: a full FakeCluster (control plane included) with one GPU node, and CRD installation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import DEVICE_CLASSES, GVR, NODES, RESOURCE_SLICES, ApiClient

from fakeapi.cluster import FakeCluster
from tests.crds import established

CRD_GVR = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions", False)
GPU_CLASS = "gpu.example.com"
GPU_NODE = [
    (NODES, {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "gpu-node", "labels": {"kubernetes.io/hostname": "gpu-node"}},
             "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}),
    (DEVICE_CLASSES, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": GPU_CLASS},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_CLASS}"'}}]}}),
    (RESOURCE_SLICES, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": "gpu-node-gpus"},
                       "spec": {"driver": GPU_CLASS, "nodeName": "gpu-node",
                                "pool": {"name": "gpu-node", "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{i}"} for i in range(4)]}}),
]


@pytest_asyncio.fixture
async def api(fake_cluster: FakeCluster) -> AsyncIterator[ApiClient]:
    """A client of a cluster with one node of four GPUs."""
    async with ApiClient(fake_cluster.url) as client:
        for gvr, obj in GPU_NODE:
            await client.create(gvr, None, obj)
        yield client


async def install_crd(api: ApiClient, crd: dict[str, Any]) -> None:
    """Create a CRD and wait until its resource is served."""
    await api.create(CRD_GVR, None, crd)

    async def ready() -> bool:
        return established(await api.get(CRD_GVR, None, crd["metadata"]["name"]))

    await wait_for(ready, message=f"{crd['metadata']['name']} to be Established")
