"""Workload controllers end to end: a cluster with nodes, clients over HTTP, kubectl, the official client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import GVR, NODES, PODS, ApiClient
from fakeapi.scheduler.clock import ManualClock

from fakeapi.cluster import FakeCluster

NS = "default"


def node(name: str, *, cpu: str = "16", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []},
            "status": {"capacity": {"cpu": cpu, "pods": "110"}, "allocatable": {"cpu": cpu, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def template(app: str, *, annotations: dict[str, str] | None = None, image: str = "nginx:1",
             restart: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {"app": app}, **({"annotations": annotations} if annotations else {})}
    pod_spec: dict[str, Any] = {"containers": [{"name": "main", "image": image}], **spec}
    if restart:
        pod_spec["restartPolicy"] = restart
    return {"metadata": meta, "spec": pod_spec}


def deployment(name: str, replicas: int, tpl: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": tpl["metadata"]["labels"]}, "template": tpl,
                     **spec}}


def job(name: str, tpl: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": tpl, **spec}}


def live(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods not being deleted."""
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


async def pods_of(api: ApiClient, label: str) -> list[dict[str, Any]]:
    return (await api.list(PODS, NS, label_selector=label))["items"]


def has_condition(obj: dict[str, Any], ctype: str, reason: str | None = None) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" and (reason is None or c.get("reason") == reason)
               for c in (obj.get("status") or {}).get("conditions") or [])


async def wait_status(api: ApiClient, gvr: GVR, name: str, check: Any, *, timeout: float = 10.0,
                      message: str = "") -> dict[str, Any]:
    """Poll one object until ``check(obj)`` holds; return it."""
    async def probe() -> dict[str, Any] | None:
        obj = await api.get(gvr, NS, name)
        obj.setdefault("status", {})
        return obj if check(obj) else None
    return await wait_for(probe, timeout=timeout, message=message or f"{gvr.plural}/{name}")


@pytest.fixture
async def api(fake_cluster: FakeCluster) -> AsyncIterator[ApiClient]:
    async with ApiClient(fake_cluster.url) as client:
        for name in ("node-a", "node-b"):
            await client.create(NODES, None, node(name))
        yield client


@contextlib.asynccontextmanager
async def cluster_with_clock(**options: Any) -> AsyncIterator[tuple[FakeCluster, ApiClient, ManualClock]]:
    """A cluster whose control plane runs on a ManualClock, with two nodes and a client."""
    clock = ManualClock()
    async with FakeCluster(clock=clock, **options) as cluster, ApiClient(cluster.url) as client:
        for name in ("node-a", "node-b"):
            await client.create(NODES, None, node(name))
        yield cluster, client, clock
