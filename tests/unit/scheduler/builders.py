"""Small builders for scheduler unit tests: plain wire-shaped dicts, modified copies."""

from __future__ import annotations

import itertools
from typing import Any

_uids = itertools.count(1)


def pod(name: str = "p", *, namespace: str = "default", requests: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None, tolerations: list[dict[str, Any]] | None = None,
        claims: list[dict[str, Any]] | None = None, claim_statuses: list[dict[str, Any]] | None = None,
        priority: int | None = None, uid: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": requests or {}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if claims:
        spec["resourceClaims"] = claims
    if priority is not None:
        spec["priority"] = priority
    status: dict[str, Any] = {"phase": "Pending"}
    if claim_statuses:
        status["resourceClaimStatuses"] = claim_statuses
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{next(_uids)}"},
            "spec": spec, "status": status}


def node(name: str = "n1", *, labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None,
         allocatable: dict[str, str] | None = None, unschedulable: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    obj: dict[str, Any] = {"kind": "Node", "apiVersion": "v1",
                           "metadata": {"name": name, "uid": f"node-{name}", "labels": labels or {}},
                           "spec": spec}
    if allocatable is not None:
        obj["status"] = {"allocatable": allocatable}
    return obj


def claim(name: str, *, namespace: str = "default", uid: str | None = None, rv: str = "1",
          allocation: dict[str, Any] | None = None, reserved_for: list[dict[str, Any]] | None = None,
          requests: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for is not None:
        status["reservedFor"] = reserved_for
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "uid": uid or f"claim-{name}",
                         "resourceVersion": rv},
            "spec": {"devices": {"requests": requests or [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": status}


def allocation(*devices: str, driver: str = "gpu.example.com", pool: str = "n1") -> dict[str, Any]:
    return {"devices": {"results": [{"request": "gpu", "driver": driver, "pool": pool, "device": d}
                                    for d in devices]}}
