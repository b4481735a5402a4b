"""Device taints (KEP-5055) outside the allocator: which devices a DeviceTaintRule selects, and
which allocated devices must be given up, and when.

Pure rules for the device-taint-eviction controller (and the rule selection the allocator shares),
after upstream's ``pkg/controller/devicetainteviction``:

- a device's NoExecute taints are those of its ResourceSlice (only slices of the pool's newest
  generation count) plus those of every DeviceTaintRule with effect NoExecute that selects it;
- a taint evicts at its ``timeAdded``, or ``tolerationSeconds`` later when the allocation
  result holds a matching toleration **with effect NoExecute** (upstream's controller ignores
  tolerations of any effect here, though the allocator honours them); a matching NoExecute
  toleration without ``tolerationSeconds`` tolerates the taint for ever;
- a claim's eviction is the earliest of its devices' taints, a pod's the earliest of its
  claims'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.rules.keys import DeviceID
from fakeapi.scheduler.rules.workloads import parse_time

from fakeapi.machinery.nodeselector import toleration_tolerates

NO_EXECUTE = "NoExecute"

# A taint and the DeviceTaintRule it comes from (None: the device's slice).
SourcedTaint = tuple[Mapping[str, Any], Mapping[str, Any] | None]
TaintsOf = Callable[[DeviceID], Iterable[SourcedTaint]]


@dataclass(frozen=True)
class Eviction:
    """When pods must go (seconds since the epoch), and the DeviceTaintRules among the reasons,
    as ``(name, uid)``."""

    when: float
    rules: frozenset[tuple[str, str]] = frozenset()

    def earliest(self, other: Eviction | None) -> Eviction:
        """Both reasons, at the earlier time."""
        if other is None:
            return self
        return Eviction(min(self.when, other.when), self.rules | other.rules)


def rule_matches(rule: Mapping[str, Any], device_id: DeviceID) -> bool:
    """Whether a DeviceTaintRule's ``deviceSelector`` selects the device: every field set must
    match, so an empty selector selects all devices, and a rule without one selects none."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if selector is None:
        return False
    driver, pool, device = device_id
    return all(
        not selector.get(field) or selector[field] == value
        for field, value in (("driver", driver), ("pool", pool), ("device", device))
    )


def taint_eviction_time(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> float | None:
    """When a NoExecute ``taint`` evicts a device allocated with ``tolerations``; None when a
    toleration without ``tolerationSeconds`` tolerates it for ever.  A taint without
    ``timeAdded`` (the API server sets it) counts as added at the epoch: it evicts at once."""
    seconds: int | None = None
    for toleration in tolerations:
        if toleration.get("effect") != NO_EXECUTE or not toleration_tolerates(toleration, taint):
            continue
        limit = toleration.get("tolerationSeconds")
        if limit is None:
            return None
        limit = max(int(limit), 0)
        seconds = limit if seconds is None else min(seconds, limit)
    return (parse_time(taint.get("timeAdded")) or 0.0) + (seconds or 0)


def allocated_devices(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The device results of a claim's allocation (empty when it is not allocated)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def result_device_id(result: Mapping[str, Any]) -> DeviceID:
    """(driver, pool, device) of one allocation result."""
    return result.get("driver", ""), result.get("pool", ""), result.get("device", "")


def claim_eviction(claim: Mapping[str, Any], taints_of: TaintsOf) -> Eviction | None:
    """When the pods using ``claim`` must go because of its devices' NoExecute taints
    (``taints_of`` gives them per device), or None."""
    found: Eviction | None = None
    for result in allocated_devices(claim):
        tolerations = result.get("tolerations") or ()
        for taint, rule in taints_of(result_device_id(result)):
            when = taint_eviction_time(taint, tolerations)
            if when is None:
                continue
            rules = frozenset() if rule is None else frozenset({_rule_ref(rule)})
            found = Eviction(when, rules).earliest(found)
    return found


def _rule_ref(rule: Mapping[str, Any]) -> tuple[str, str]:
    meta = rule.get("metadata") or {}
    return meta.get("name", ""), meta.get("uid", "")


def _no_execute(taints: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(t for t in taints if t.get("effect") == NO_EXECUTE)


@dataclass
class _PublishedSlice:
    generation: int
    devices: tuple[str, ...]
    # Only the devices with NoExecute taints, and those taints.
    taints: dict[str, tuple[Mapping[str, Any], ...]]


class TaintedDevices:
    """The NoExecute taints of every published device, kept up to date from slice and rule events.

    Slices are grouped by pool; only the pool's newest generation counts, as for the allocator.
    """

    def __init__(self) -> None:
        self._pools: dict[tuple[str, str], dict[str, _PublishedSlice]] = {}
        self._rules: dict[str, Mapping[str, Any]] = {}
        # Slices with NoExecute taints, and NoExecute rules: counted, as every pod event asks.
        self._tainted_slices = 0
        self._no_execute_rules = 0

    @property
    def any_no_execute(self) -> bool:
        """Whether some device or rule has a NoExecute taint (nothing to evict otherwise)."""
        return bool(self._tainted_slices or self._no_execute_rules)

    def set_slice(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> set[DeviceID]:
        """Replace slice ``old`` by ``new`` (either may be None); the devices whose NoExecute
        taints changed."""
        touched = {_pool_id(s) for s in (old, new) if s is not None}
        before = {pool_id: self._pool_taints(pool_id) for pool_id in touched}
        if old is not None:
            pool = self._pools.get(_pool_id(old), {})
            gone = pool.pop(old["metadata"]["name"], None)
            self._tainted_slices -= bool(gone and gone.taints)
            if not pool:
                self._pools.pop(_pool_id(old), None)
        if new is not None:
            spec = new.get("spec") or {}
            devices = spec.get("devices") or ()
            record = self._pools.setdefault(_pool_id(new), {})[new["metadata"]["name"]] = _PublishedSlice(
                int((spec.get("pool") or {}).get("generation") or 0),
                tuple(d.get("name", "") for d in devices),
                {d.get("name", ""): taints for d in devices if (taints := _no_execute(d.get("taints") or ()))})
            self._tainted_slices += bool(record.taints)
        changed: set[DeviceID] = set()
        for pool_id, old_taints in before.items():
            new_taints = self._pool_taints(pool_id)
            changed.update((*pool_id, device) for device in old_taints.keys() | new_taints.keys()
                           if old_taints.get(device) != new_taints.get(device))
        return changed

    def set_rule(self, rule: Mapping[str, Any]) -> None:
        """Add or replace a DeviceTaintRule."""
        self.remove_rule(rule["metadata"]["name"])
        self._rules[rule["metadata"]["name"]] = rule
        self._no_execute_rules += rule_effect(rule) == NO_EXECUTE

    def remove_rule(self, name: str) -> None:
        """Forget a DeviceTaintRule (unknown names are ignored)."""
        gone = self._rules.pop(name, None)
        self._no_execute_rules -= gone is not None and rule_effect(gone) == NO_EXECUTE

    def taints(self, device_id: DeviceID, simulate: Mapping[str, Any] | None = None) -> list[SourcedTaint]:
        """The device's NoExecute taints with their rule (None for the slice's own); with
        ``simulate``, that rule counts as NoExecute instead of the stored one of its name."""
        driver, pool, device = device_id
        found: list[SourcedTaint] = [(t, None) for t in self._pool_taints((driver, pool)).get(device, ())]
        rules: Iterable[Mapping[str, Any]] = self._rules.values()
        if simulate is not None:
            name = simulate["metadata"]["name"]
            rules = [*(r for r in rules if r["metadata"]["name"] != name), as_no_execute(simulate)]
        for rule in rules:
            if rule_effect(rule) == NO_EXECUTE and rule_matches(rule, device_id):
                found.append(((rule.get("spec") or {}).get("taint") or {}, rule))
        return found

    def published(self) -> Iterable[DeviceID]:
        """Every published device (newest generation of each pool)."""
        for pool_id in self._pools:
            for record in self._current(pool_id):
                yield from ((*pool_id, device) for device in record.devices)

    def _pool_taints(self, pool_id: tuple[str, str]) -> dict[str, tuple[Mapping[str, Any], ...]]:
        taints: dict[str, tuple[Mapping[str, Any], ...]] = {}
        for record in self._current(pool_id):
            taints.update(record.taints)
        return taints

    def _current(self, pool_id: tuple[str, str]) -> list[_PublishedSlice]:
        """The pool's slices of its newest generation (the others are outdated)."""
        pool = self._pools.get(pool_id) or {}
        newest = max((s.generation for s in pool.values()), default=0)
        return [s for s in pool.values() if s.generation == newest]


def _pool_id(slice_obj: Mapping[str, Any]) -> tuple[str, str]:
    spec = slice_obj.get("spec") or {}
    return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")


def rule_effect(rule: Mapping[str, Any]) -> str:
    """The effect of a DeviceTaintRule's taint."""
    return (((rule.get("spec") or {}).get("taint")) or {}).get("effect", "")


def as_no_execute(rule: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``rule`` whose taint has effect NoExecute (what a None rule would do)."""
    spec = dict(rule.get("spec") or {})
    spec["taint"] = {**(spec.get("taint") or {}), "effect": NO_EXECUTE}
    return {**rule, "spec": spec}
