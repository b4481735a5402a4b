"""Real clients against a fake API server: kubectl 1.37 and the official ``kubernetes`` 37 client.

The official client blocks, and the server runs on this test's event loop, so every client call goes
through :func:`call` (a worker thread); kubectl runs as a subprocess. Manifests travel on stdin
(``-f -``) so tests need no files.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar

import pytest
import yaml
from fakeapi.fixtures.plugin import Kubectl, wait_for
from kubernetes import client, config

from fakeapi.cluster import FakeCluster

P = ParamSpec("P")
T = TypeVar("T")

GPU_CLASS = "gpu.example.com"


async def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run one blocking client call off the event loop (the server shares this loop)."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def watch_opened(cluster: FakeCluster) -> None:
    """Wait until some client holds a watch open (e.g. a started ``kubectl wait``), read in-process."""
    await wait_for(lambda: cluster.registry.store.hub.count() > 0, message="a watch to be opened")


@asynccontextmanager
async def started(kubectl: Kubectl, *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """A long-running kubectl, killed on exit whatever happened."""
    proc = await kubectl.start(*args)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def to_yaml(*docs: dict[str, Any]) -> str:
    """A multi-document manifest for ``kubectl ... -f -``."""
    return yaml.safe_dump_all(docs, sort_keys=False)


def columns(line: str) -> list[str]:
    """Split a kubectl table line into cells (kubectl pads cells with at least two spaces)."""
    return re.split(r"\s{2,}", line.strip())


def table(stdout: str) -> dict[str, list[str]]:
    """Rows of a kubectl table keyed by their first cell; the header row under ``"NAME"``."""
    return {cells[0]: cells for cells in map(columns, stdout.strip().splitlines())}


def configmap(name: str, data: dict[str, str] | None = None, *, labels: dict[str, str] | None = None,
              namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


def pod(name: str, *, labels: dict[str, str] | None = None, image: str = "busybox") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": image}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def claim(name: str, *, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS}}]}}}


def resource_slice(name: str, node_name: str, *, pool: str | None = None, devices: int = 2) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": GPU_CLASS, "nodeName": node_name,
                     "pool": {"name": pool or node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


def device_class(name: str = GPU_CLASS) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{name}'"}}]}}


def event(name: str, about: dict[str, Any], *, reason: str = "FailedScheduling", message: str = "0/3 nodes",
          type_: str = "Warning", component: str = "default-scheduler") -> dict[str, Any]:
    """A core/v1 Event whose involvedObject is ``about`` (an object as returned by the server)."""
    meta = about["metadata"]
    involved = {"apiVersion": about["apiVersion"], "kind": about["kind"], "name": meta["name"],
                "namespace": meta.get("namespace", "default"), "uid": meta["uid"]}
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name}, "involvedObject": involved,
            "reason": reason, "message": message, "type": type_, "source": {"component": component},
            "lastTimestamp": "2026-01-01T00:00:00Z", "count": 1}


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


@pytest.fixture
def api_client(fake_api: FakeCluster) -> Iterator[client.ApiClient]:
    """The official client configured from the cluster's kubeconfig, as a user would."""
    api = config.new_client_from_config(config_file=str(fake_api.kubeconfig_path))
    yield api
    api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def resource_api(api_client: client.ApiClient) -> client.ResourceV1Api:
    return client.ResourceV1Api(api_client)
