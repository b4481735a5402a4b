"""Small builders for allocator tests, modelled on upstream ``allocator_testing.go`` fixtures.

Every builder returns a fresh wire-format dict (or a modified copy), so tables stay readable:
``slice_("slice-1", device("device-1").with_attrs(model="a100"))``.
"""

from __future__ import annotations

import copy
from typing import Any

from fakeapi.scheduler.dra.allocator import AllocatedState, Allocator, DeviceIndex, Features, GroupMatch

NODE1, NODE2 = "node-1", "node-2"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2 = "pool-1", "pool-2"


class DeviceBuilder(dict):
    """A wire Device with chainable, copy-returning modifiers."""

    def _with(self, **fields: Any) -> DeviceBuilder:
        new = DeviceBuilder(copy.deepcopy(dict(self)))
        new.update(fields)
        return new

    def with_attrs(self, **attrs: Any) -> DeviceBuilder:
        """Unqualified attributes by python type (int, bool, str); a 1-tuple is a version."""
        out = self
        for name, value in attrs.items():
            out = out.with_attr(name, value)
        return out

    def with_attr(self, name: str, value: Any) -> DeviceBuilder:
        if isinstance(value, tuple):
            typed = {"version": value[0]}
        elif isinstance(value, bool):
            typed = {"bool": value}
        elif isinstance(value, int):
            typed = {"int": value}
        elif isinstance(value, dict):
            typed = value
        else:
            typed = {"string": value}
        return self._with(attributes={**(self.get("attributes") or {}), name: typed})

    def with_capacity(self, policy: dict[str, Any] | None = None, **capacity: str) -> DeviceBuilder:
        out = {name: {"value": value} for name, value in capacity.items()}
        if policy:
            for entry in out.values():
                entry["requestPolicy"] = policy
        return self._with(capacity=out)

    def with_taints(self, *taints: dict[str, Any]) -> DeviceBuilder:
        return self._with(taints=list(taints))

    def with_counters(self, counter_set: str, **counters: str) -> DeviceBuilder:
        consumes = [*(self.get("consumesCounters") or []),
                    {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}]
        return self._with(consumesCounters=consumes)

    def on_node(self, name: str) -> DeviceBuilder:
        return self._with(nodeName=name)

    def on_all_nodes(self) -> DeviceBuilder:
        return self._with(allNodes=True)

    def on_selector(self, selector: dict[str, Any]) -> DeviceBuilder:
        return self._with(nodeSelector=selector)

    def shared(self) -> DeviceBuilder:
        return self._with(allowMultipleAllocations=True)

    def with_binding(self, *conditions: str, failure: tuple[str, ...] = ("failed",),
                     binds_to_node: bool = False) -> DeviceBuilder:
        out = self._with(bindingConditions=list(conditions), bindingFailureConditions=list(failure))
        return out._with(bindsToNode=True) if binds_to_node else out


def device(name: str) -> DeviceBuilder:
    return DeviceBuilder(name=name)


def slice_(name: str, *devices: dict[str, Any], node: str | None = NODE1, driver: str = DRIVER_A,
           pool: str = POOL1, generation: int = 1, count: int = 1, all_nodes: bool = False,
           selector: dict[str, Any] | None = None, per_device: bool = False,
           counters: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                                       "resourceSliceCount": count}}
    if all_nodes:
        spec["allNodes"] = True
    elif selector is not None:
        spec["nodeSelector"] = selector
    elif per_device:
        spec["perDeviceNodeSelection"] = True
    elif node:
        spec["nodeName"] = node
    if counters is not None:
        spec["sharedCounters"] = [{"name": n, "counters": {k: {"value": v} for k, v in c.items()}}
                                  for n, c in counters.items()]
    else:
        spec["devices"] = [dict(d) for d in devices]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": spec}


def label_selector(key: str, *values: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def node(name: str = NODE1, **labels: str) -> dict[str, Any]:
    default = {"region": "region-1" if name == NODE1 else "region-2", "planet": "earth"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {**default, **labels}}}


def device_class(name: str, driver: str | None = None, *selectors: str,
                 config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    exprs = ([f'device.driver == "{driver}"'] if driver else []) + list(selectors)
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if config:
        spec["config"] = [{"opaque": c} for c in config]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


CLASS_A = device_class("class-a", DRIVER_A)
CLASS_B = device_class("class-b", DRIVER_B)


def exact(cls: str = "class-a", count: int | None = None, mode: str | None = None, selectors: tuple[str, ...] = (),
          admin: bool | None = None, tolerations: tuple[dict[str, Any], ...] = (),
          capacity: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"deviceClassName": cls}
    if mode:
        spec["allocationMode"] = mode
    if count is not None:
        spec["count"] = count
    if selectors:
        spec["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin is not None:
        spec["adminAccess"] = admin
    if tolerations:
        spec["tolerations"] = list(tolerations)
    if capacity:
        spec["capacity"] = {"requests": capacity}
    return spec


def request(name: str = "req-0", **kwargs: Any) -> dict[str, Any]:
    return {"name": name, "exactly": exact(**kwargs)}


def sub(name: str, **kwargs: Any) -> dict[str, Any]:
    return {"name": name, **exact(**kwargs)}


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str = "claim-0", *requests: dict[str, Any], constraints: tuple[dict[str, Any], ...] = (),
          config: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests) or [request()]}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def allocated(claim_obj: dict[str, Any], *results: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(claim_obj)
    out["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return out


def result(req: str, dev: str, pool: str = POOL1, driver: str = DRIVER_A, **extra: Any) -> dict[str, Any]:
    return {"request": req, "driver": driver, "pool": pool, "device": dev, **extra}


def local(name: str = NODE1) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def taint(key: str = "taint-key", effect: str = "NoSchedule", value: str = "taint-value") -> dict[str, Any]:
    return {"key": key, "value": value, "effect": effect}


def run(slices: list[dict[str, Any]], claims: list[dict[str, Any]], *, classes: tuple[dict[str, Any], ...] = (
        CLASS_A, CLASS_B), allocated_claims: tuple[dict[str, Any], ...] = (), features: Features | None = None,
        on: dict[str, Any] | None = None, rules: tuple[dict[str, Any], ...] = (),
        deadline: float | None = None, group_matches: tuple[GroupMatch, ...] = ()) -> list[dict[str, Any]] | None:
    index = DeviceIndex(features or Features())
    for s in slices:
        index.set_slice(s)
    for c in classes:
        index.set_class(c)
    for r in rules:
        index.set_taint_rule(r)
    allocator = Allocator(index, AllocatedState.from_claims(allocated_claims), deadline=deadline)
    return allocator.allocate(on or node(), claims, group_matches)


def summary(results: list[dict[str, Any]] | None) -> list[list[tuple[str, ...]]] | None:
    """Per claim, the sorted (request, driver, pool, device) tuples — upstream compares unordered."""
    if results is None:
        return None
    return [sorted((r["request"], r["driver"], r["pool"], r["device"]) for r in a["devices"]["results"])
            for a in results]
