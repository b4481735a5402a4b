"""Helpers for scheduler integration tests: manifests, builders, waiting on pod state."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import (
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    GVR,
    NAMESPACES,
    NODES,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    ApiClient,
)

MANIFESTS = resources.files("fakeapi.fixtures") / "manifests"
GPU_CLASS = "gpu.example.com"
_BY_KIND: dict[str, GVR] = {"Node": NODES, "Namespace": NAMESPACES, "Pod": PODS, "DeviceClass": DEVICE_CLASSES,
                            "ResourceSlice": RESOURCE_SLICES, "ResourceClaim": RESOURCE_CLAIMS,
                            "ResourceClaimTemplate": RESOURCE_CLAIM_TEMPLATES,
                            "DeviceTaintRule": DEVICE_TAINT_RULES}


async def create(api: ApiClient, obj: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    gvr = _BY_KIND[obj["kind"]]
    return await api.create(gvr, namespace if gvr.namespaced else None, obj)


async def apply_manifest(api: ApiClient, name: str) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d]
    return [await create(api, doc) for doc in docs]


async def add_gpu_node(api: ApiClient, name: str, gpus: int = 4, *, cpu: str = "8",
                       attributes: dict[str, dict[str, Any]] | None = None) -> None:
    """A node with ``gpus`` devices of the GPU class in its own pool; ``attributes`` go on every device."""
    await create(api, {"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                       "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}})
    devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}, **(attributes or {})}} for i in range(gpus)]
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                       "spec": {"driver": GPU_CLASS, "nodeName": name, "devices": devices,
                                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}}})


def device_request(name: str = "gpu", count: int | None = None, selectors: list[str] | None = None,
                   mode: str | None = None, **extra: Any) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": GPU_CLASS, **extra}
    if count is not None:
        exactly["count"] = count
    if mode:
        exactly["allocationMode"] = mode
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": exactly}


def claim_spec(*requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests or [device_request()])}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def claim_obj(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": spec or claim_spec()}


def template_obj(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": spec or claim_spec()}}


def pod_obj(name: str, *, template: str | None = None, claim: str | None = None,
            **spec: Any) -> dict[str, Any]:
    pod_claims = []
    if template:
        pod_claims.append({"name": "gpu", "resourceClaimTemplateName": template})
    if claim:
        pod_claims.append({"name": "gpu", "resourceClaimName": claim})
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if pod_claims:
        container["resources"] = {"claims": [{"name": "gpu"}]}
    body: dict[str, Any] = {"containers": [container], **spec}
    if pod_claims:
        body["resourceClaims"] = pod_claims
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


async def get_pod(api: ApiClient, name: str) -> dict[str, Any]:
    return await api.get(PODS, "default", name)


async def wait_running(api: ApiClient, name: str, timeout: float = 10.0) -> dict[str, Any]:
    async def running() -> dict[str, Any] | None:
        pod = await get_pod(api, name)
        return pod if (pod.get("status") or {}).get("phase") == "Running" else None
    return await wait_for(running, timeout, message=f"pod {name} Running")


async def wait_unschedulable(api: ApiClient, name: str, reason: str = "Unschedulable",
                             timeout: float = 10.0) -> dict[str, Any]:
    """The pod's PodScheduled=False condition once it has ``reason``."""
    async def condition() -> dict[str, Any] | None:
        pod = await get_pod(api, name)
        for cond in (pod.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False" and cond.get("reason") == reason:
                return cond
        return None
    return await wait_for(condition, timeout, message=f"pod {name} PodScheduled=False/{reason}")


async def pod_claim(api: ApiClient, pod: dict[str, Any]) -> dict[str, Any]:
    """The claim a running pod uses (template-generated or by name)."""
    pod_claims = pod["spec"]["resourceClaims"]
    name = pod_claims[0].get("resourceClaimName")
    if name is None:
        name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    return await api.get(RESOURCE_CLAIMS, "default", name)


def devices_of(claim: dict[str, Any]) -> list[tuple[str, str]]:
    """(request, pool/device) of each allocated result."""
    results = claim["status"]["allocation"]["devices"]["results"]
    return [(r["request"], f"{r['pool']}/{r['device']}") for r in results]
