"""Resource pools as seen from one node (upstream ``GatherPools``).

Flow: candidate slices (this node's plus node-less ones) → keep the relevant ones → group by
(driver, pool), highest generation wins → completeness by ``resourceSliceCount`` (looking at
the whole pool when the node's view is short: a newer generation elsewhere makes the pool
obsolete) → validation (duplicate devices, counter sets) → order by (driver, pool), pools with
binding-condition devices last.  The search is first-fit, so this order is the priority.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fakeapi.scheduler.dra.devices import Slice
from fakeapi.scheduler.dra.features import Features

from fakeapi.machinery.nodeselector import node_selector_matches

PoolID = tuple[str, str]  # (driver, pool name)


@dataclass(eq=False)
class Pool:
    """One pool: device slices targeting the node (sorted by name) and its counter sets."""

    id: PoolID
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[Slice] = field(default_factory=list)
    other_slices: list[Slice] = field(default_factory=list)  # not targeting the node (counters)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)

    def __str__(self) -> str:
        return "/".join(self.id)


def node_matches(node: dict[str, Any], node_name: str, all_nodes: bool, selector: dict[str, Any] | None) -> bool:
    """Upstream ``NodeMatches``: nodeName, then allNodes, then a node selector."""
    if node_name:
        return node_name == node["metadata"]["name"]
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node)
    return False


def _relevant(slice_: Slice, node: dict[str, Any]) -> bool:
    if slice_.shared_counters:
        return True  # counters are needed to use the pool, whatever the node selection says
    if slice_.mode in ("nodeName", "allNodes", "nodeSelector"):
        return node_matches(node, slice_.node_name, slice_.mode == "allNodes", slice_.node_selector)
    if slice_.per_device:
        return any(node_matches(node, d.node_name, d.node_all, d.node_selector) for d in slice_.devices)
    return False  # some future node-selection mode we do not know: ignore the slice


def gather_pools(candidates: Iterable[Slice], node: dict[str, Any], features: Features,
                 pool_slices: Callable[[PoolID], Iterable[Slice]]) -> list[Pool]:
    """Pools usable from ``node``; ``pool_slices`` lists every slice of a pool (all nodes)."""
    grouped: dict[PoolID, list[Slice]] = {}
    for slice_ in candidates:
        if not features.partitionable and (slice_.per_device or slice_.shared_counters):
            continue
        if not _relevant(slice_, node):
            continue
        current = grouped.get(slice_.pool_id)
        if current is None or slice_.generation > current[0].generation:
            grouped[slice_.pool_id] = [slice_]
        elif slice_.generation == current[0].generation:
            current.append(slice_)

    pools: list[Pool] = []
    late: list[Pool] = []
    for pool_id, slices in grouped.items():
        every: list[Slice] | None = None
        if len(slices) != slices[0].slice_count:
            every = _current_generation(pool_slices(pool_id), slices[0].generation)
            if every is None:
                continue  # obsolete: the driver is publishing a newer generation elsewhere
            if len(every) != slices[0].slice_count:
                pools.append(Pool(pool_id, incomplete=True))
                continue
        pool = _build_pool(pool_id, slices, features, every)
        has_binding = any(d.binding_conditions for s in pool.slices for d in s.devices)
        (late if has_binding else pools).append(pool)
    pools.sort(key=lambda p: p.id)
    late.sort(key=lambda p: p.id)
    return pools + late


def _current_generation(slices: Iterable[Slice], generation: int) -> list[Slice] | None:
    found = []
    for slice_ in slices:
        if slice_.generation > generation:
            return None
        if slice_.generation == generation:
            found.append(slice_)
    return found


def _build_pool(pool_id: PoolID, slices: list[Slice], features: Features, every: list[Slice] | None) -> Pool:
    slices = sorted(slices, key=lambda s: s.name)
    if features.partitionable:
        device_slices = [s for s in slices if not s.shared_counters]
        counter_slices = [s for s in slices if s.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    reason = _duplicate_device(device_slices)
    if reason:
        return Pool(pool_id, invalid=True, invalid_reason=reason)
    if not features.partitionable:
        return Pool(pool_id, slices=device_slices)
    counter_sets: dict[str, dict[str, Fraction]] = {}
    for slice_ in counter_slices:
        for name, counters in slice_.shared_counters:
            if name in counter_sets:
                return Pool(pool_id, invalid=True, invalid_reason=f"duplicate counter set name {name}")
            counter_sets[name] = counters
    reason = _bad_consumption(counter_sets, slices)
    if reason:
        return Pool(pool_id, invalid=True, invalid_reason=reason)
    seen = {id(s) for s in slices}
    others = sorted((s for s in every or () if id(s) not in seen), key=lambda s: s.name)
    # Devices on slices for other nodes consume the same counters: validate them too.
    reason = _bad_consumption(counter_sets, others)
    if reason:
        return Pool(pool_id, invalid=True, invalid_reason=reason)
    return Pool(pool_id, slices=device_slices, other_slices=others, counter_sets=counter_sets)


def _duplicate_device(slices: Iterable[Slice]) -> str:
    names: set[str] = set()
    for slice_ in slices:
        for device in slice_.devices:
            if device.name in names:
                return f"duplicate device name {device.name}"
            names.add(device.name)
    return ""


def _bad_consumption(counter_sets: dict[str, dict[str, Fraction]], slices: Iterable[Slice]) -> str:
    for slice_ in slices:
        for device in slice_.devices:
            for set_name, counters in device.consumes:
                if set_name not in counter_sets:
                    return f"counter set {set_name} not found"
                for name in counters:
                    if name not in counter_sets[set_name]:
                        return f"counter {name} not found in counter set {set_name}"
    return ""
