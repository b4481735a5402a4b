"""Small builders for validation tables: each returns a fresh, valid object to modify."""

from __future__ import annotations

import copy
from typing import Any

from fakeapi.errors import FieldError
from fakeapi.registry.kinds import KINDS
from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext, validate_create

NAMESPACED = {(k.group, k.version, k.kind): k.namespaced for k in KINDS}


def claim(*requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "claim", "namespace": "default"},
            "spec": {"devices": {"requests": list(requests), **devices}}}


def exact(name: str = "gpu", cls: str = "gpu.example.com", **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **extra}}


def gpu_slice(node: str = "node-1", devices: int = 2, **spec: Any) -> dict[str, Any]:
    """A realistic node-local GPU slice."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {
                         "model": {"string": "A100"}, "index": {"int": i},
                         "driverVersion": {"version": "1.2.3"},
                         "gpu.example.com/uuid": {"string": f"GPU-{i}"}},
                         "capacity": {"memory": {"value": "80Gi"}}} for i in range(devices)], **spec}}


def validate(obj: dict[str, Any], gvk: tuple[str, str, str], ctx: AdmissionContext | None = None
             ) -> list[FieldError]:
    """Default then validate as the registry does on create."""
    ctx = ctx or AdmissionContext()
    obj = copy.deepcopy(obj)
    strategy = STRATEGIES[gvk]
    strategy.default(obj, ctx)
    strategy.drop_disabled_fields(obj, None, ctx)
    strategy.admit(obj, None, ctx)
    return validate_create(strategy, obj, ctx, namespaced=NAMESPACED[gvk])


def causes(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errors]
