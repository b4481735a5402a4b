"""DeviceIndex: the allocator's long-lived, incrementally updated view of the cluster's devices.

Fed by informer events (slices, classes, taint rules).  It keeps normalised slice records
(rebuilt only when a slice's resourceVersion changes, which is what keeps per-device CEL
results valid across pods and nodes), slices by node and by pool, and the pools of each node,
gathered and validated once and reused until a slice changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakeapi.scheduler.dra.devices import Device, Slice, build_slice
from fakeapi.scheduler.dra.features import Features
from fakeapi.scheduler.dra.pools import Pool, PoolID, gather_pools
from fakeapi.scheduler.dra.taints import rule_taints
from fakeapi.scheduler.rules.keys import DeviceID

# Past this many cached node views (label churn), start over rather than grow without bound.
_MAX_NODE_VIEWS = 20_000


class DeviceIndex:
    """Normalised, cached view of all ResourceSlices (+ DeviceTaintRules) and DeviceClasses.

    Built/updated incrementally as slices change; pools gathered and validated once per slice
    generation; per-node pool lists cached; CEL selector results cached per (expression, device).
    """

    def __init__(self, features: Features) -> None:
        self.features = features
        self._slices: dict[str, Slice] = {}
        self._versions: dict[str, str] = {}
        self._by_node: dict[str, dict[str, Slice]] = {}
        self._nodeless: dict[str, Slice] = {}
        self._by_pool: dict[PoolID, dict[str, Slice]] = {}
        self._classes: dict[str, dict[str, Any]] = {}
        self._rules: dict[str, dict[str, Any]] = {}
        self._rule_taints: dict[tuple[str, str, str], tuple[dict[str, Any], ...]] = {}
        self._node_pools: dict[Any, list[Pool]] = {}
        self._devices: dict[DeviceID, Device] = {}
        # Node labels only matter when some slice or device selects nodes by label.
        self._label_selectors = 0
        # Bumped by every change (slices, classes, taint rules): what an allocator found holds
        # only while it is unchanged.
        self.generation = 0

    # -- updates ------------------------------------------------------------------------------

    def set_slice(self, slice_obj: dict[str, Any]) -> None:
        """Add or replace a ResourceSlice (unchanged resourceVersion: no-op)."""
        name = slice_obj["metadata"]["name"]
        version = slice_obj["metadata"].get("resourceVersion", "")
        if version and self._versions.get(name) == version:
            return
        self.remove_slice(name)
        self.generation += 1
        record = build_slice(slice_obj)
        self._slices[name] = record
        self._versions[name] = version
        if record.node_name:
            self._by_node.setdefault(record.node_name, {})[name] = record
        else:
            self._nodeless[name] = record
        self._by_pool.setdefault(record.pool_id, {})[name] = record
        self._label_selectors += _uses_labels(record)
        self._node_pools.clear()
        for device in record.devices:
            self._devices[device.id] = device

    def remove_slice(self, name: str) -> None:
        """Forget a ResourceSlice (unknown names are ignored)."""
        record = self._slices.pop(name, None)
        if record is None:
            return
        self.generation += 1
        self._versions.pop(name, None)
        if record.node_name:
            self._by_node.get(record.node_name, {}).pop(name, None)
        else:
            self._nodeless.pop(name, None)
        self._by_pool.get(record.pool_id, {}).pop(name, None)
        self._label_selectors -= _uses_labels(record)
        self._node_pools.clear()
        for device in record.devices:
            if self._devices.get(device.id) is device:
                del self._devices[device.id]

    def set_class(self, cls: dict[str, Any]) -> None:
        """Add or replace a DeviceClass."""
        self._classes[cls["metadata"]["name"]] = cls
        self.generation += 1

    def remove_class(self, name: str) -> None:
        self._classes.pop(name, None)
        self.generation += 1

    def set_taint_rule(self, rule: dict[str, Any]) -> None:
        """Add or replace a DeviceTaintRule; its taint adds to the selected devices' taints."""
        self._rules[rule["metadata"]["name"]] = rule
        self._rule_taints.clear()
        self.generation += 1

    def remove_taint_rule(self, name: str) -> None:
        self._rules.pop(name, None)
        self._rule_taints.clear()
        self.generation += 1

    # -- queries (used by the allocator) --------------------------------------------------------

    def device_class(self, name: str) -> dict[str, Any] | None:
        return self._classes.get(name)

    def pools_for_node(self, node: dict[str, Any]) -> list[Pool]:
        """Pools visible from ``node`` in first-fit order (cached until slices change)."""
        meta = node["metadata"]
        key: Any = meta["name"]
        if self._label_selectors:
            key = (key, tuple(sorted((meta.get("labels") or {}).items())))
        pools = self._node_pools.get(key)
        if pools is None:
            if len(self._node_pools) >= _MAX_NODE_VIEWS:
                self._node_pools.clear()
            candidates: Iterable[Slice] = [*self._by_node.get(meta["name"], {}).values(),
                                           *self._nodeless.values()]
            pools = gather_pools(candidates, node, self.features, self._pool_slices)
            self._node_pools[key] = pools
        return pools

    def nodes_of_pool(self, pool_id: PoolID) -> set[str] | None:
        """The nodes that can see pool ``pool_id`` (driver, name), or None when any node may
        (a slice of it selects nodes, or is for all nodes)."""
        nodes = set()
        for record in self._pool_slices(pool_id):
            if not record.node_name:
                return None
            nodes.add(record.node_name)
        return nodes

    def device(self, device_id: DeviceID) -> Device | None:
        """The published device with this (driver, pool, device) ID, if any."""
        return self._devices.get(device_id)

    def devices(self) -> list[Device]:
        """Every published device in first-fit order: pools by (driver, name), slices by name."""
        ordered = sorted(self._slices.values(), key=lambda s: (s.pool_id, s.name))
        return list({d.id: d for record in ordered for d in record.devices}.values())

    def taints(self, device: Device) -> tuple[dict[str, Any], ...]:
        """Slice taints plus DeviceTaintRule taints of a device."""
        if not self._rules:
            return device.taints
        extra = self._rule_taints.get(device.id)
        if extra is None:
            extra = self._rule_taints[device.id] = rule_taints(self._rules.values(), device.id)
        return device.taints + extra

    def _pool_slices(self, pool_id: PoolID) -> Iterable[Slice]:
        return self._by_pool.get(pool_id, {}).values()


def _uses_labels(record: Slice) -> int:
    if record.mode == "nodeSelector":
        return 1
    return int(record.per_device and any(d.node_selector is not None for d in record.devices))
