"""Normalised, immutable views of ResourceSlices and their devices, built once per slice version.

The allocator walks these records instead of wire dicts: quantities are parsed, names split,
and each device carries its own CEL input and selector-result cache.  A changed slice gets new
records, which is what invalidates those caches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from fakeapi.scheduler.rules.keys import DeviceID

from fakeapi.machinery.cel import CelError, DeviceEnv, device_env
from fakeapi.machinery.quantity import parse_quantity

# ``device.driver == "literal"`` either way round, in CEL's whitespace; literals with escapes
# (and anything else) go to the CEL engine.
_WS = r"[ \t\n\r\f]*"


def _literal(group: str) -> str:
    return rf"""(?:"(?P<{group}d>[^"\\\n\r]*)"|'(?P<{group}s>[^'\\\n\r]*)')"""


_DRIVER_EQUALS = re.compile(
    rf"{_WS}(?:device\.driver{_WS}=={_WS}{_literal('r')}|{_literal('l')}{_WS}=={_WS}device\.driver){_WS}")


@dataclass(frozen=True, slots=True)
class DriverEquals:
    """A selector that only compares ``device.driver`` with a string literal (DeviceClasses most
    often select a driver so): evaluated without the CEL engine, same verdict."""

    driver: str

    def evaluate(self, env: DeviceEnv) -> bool:
        return env.data["driver"] == self.driver


@lru_cache(maxsize=1024)
def driver_equality(expression: str) -> DriverEquals | None:
    """The :class:`DriverEquals` that ``expression`` is, or None for any other selector (cached
    by text, as :func:`compile_selector`)."""
    found = _DRIVER_EQUALS.fullmatch(expression)
    if found is None:
        return None
    return DriverEquals(next(text for text in found.groups() if text is not None))


def qualify(name: str, driver: str) -> str:
    """Fully-qualified ``domain/id`` name; unqualified names belong to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


@dataclass(frozen=True)
class Capacity:
    value: Fraction
    text: str  # the published spelling, reused in results
    policy: dict[str, Any] | None


class Device:
    """One published device.  ``selector_results`` caches CEL outcomes per expression."""

    __slots__ = (
        "_env",
        "allow_multiple",
        "attributes",
        "binding_conditions",
        "binding_failure_conditions",
        "binds_to_node",
        "capacity",
        "consumes",
        "id",
        "name",
        "node_all",
        "node_name",
        "node_selector",
        "raw",
        "selector_results",
        "slice",
        "taints",
    )

    def __init__(self, raw: dict[str, Any], slice_: Slice) -> None:
        self.raw = raw
        self.slice = slice_
        self.name: str = raw["name"]
        self.id: DeviceID = (slice_.driver, slice_.pool, self.name)
        self.attributes: dict[str, dict[str, Any]] = raw.get("attributes") or {}
        self.capacity: dict[str, Capacity] = {
            name: Capacity(parse_quantity(str(cap.get("value", "0"))), str(cap.get("value", "0")),
                           cap.get("requestPolicy"))
            for name, cap in (raw.get("capacity") or {}).items()
        }
        self.consumes: tuple[tuple[str, dict[str, Fraction]], ...] = tuple(
            (entry.get("counterSet", ""),
             {name: parse_quantity(str(c.get("value", "0"))) for name, c in (entry.get("counters") or {}).items()})
            for entry in raw.get("consumesCounters") or ()
        )
        self.taints: tuple[dict[str, Any], ...] = tuple(raw.get("taints") or ())
        self.node_name: str = raw.get("nodeName") or ""
        self.node_all: bool = bool(raw.get("allNodes"))
        self.node_selector: dict[str, Any] | None = raw.get("nodeSelector")
        self.binds_to_node: bool = bool(raw.get("bindsToNode"))
        self.binding_conditions: list[str] = raw.get("bindingConditions") or []
        self.binding_failure_conditions: list[str] = raw.get("bindingFailureConditions") or []
        self.allow_multiple: bool = bool(raw.get("allowMultipleAllocations"))
        self.selector_results: dict[str, bool | CelError] = {}
        self._env: DeviceEnv | CelError | None = None

    def cel_env(self) -> DeviceEnv:
        """The CEL ``device`` input, built on first use; raises CelError for unusable values."""
        if self._env is None:
            try:
                self._env = device_env(self.slice.driver, self.raw)
            except CelError as err:
                self._env = err
        if isinstance(self._env, CelError):
            raise self._env
        return self._env

    def attribute(self, fq_name: str) -> dict[str, Any] | None:
        """Look up a fully-qualified attribute like upstream ``lookupAttribute``."""
        attr = self.attributes.get(fq_name)
        if attr is not None:
            return attr
        domain, sep, ident = fq_name.partition("/")
        if sep and domain == self.slice.driver:
            return self.attributes.get(ident)
        return None


@dataclass(eq=False)
class Slice:
    """One ResourceSlice version.  ``mode`` is the node-selection mode or "" when unknown."""

    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    mode: str  # nodeName | allNodes | nodeSelector | perDeviceNodeSelection | "" (unknown)
    node_name: str
    node_selector: dict[str, Any] | None
    shared_counters: tuple[tuple[str, dict[str, Fraction]], ...]
    devices: list[Device] = field(default_factory=list)

    @property
    def pool_id(self) -> tuple[str, str]:
        return (self.driver, self.pool)

    @property
    def per_device(self) -> bool:
        return self.mode == "perDeviceNodeSelection"


def _mode(spec: dict[str, Any]) -> str:
    if spec.get("nodeName"):
        return "nodeName"
    if spec.get("allNodes"):
        return "allNodes"
    if spec.get("nodeSelector") is not None:
        return "nodeSelector"
    if spec.get("perDeviceNodeSelection"):
        return "perDeviceNodeSelection"
    return ""


def build_slice(obj: dict[str, Any]) -> Slice:
    """Normalise a wire ResourceSlice (inputs are never mutated)."""
    spec = obj.get("spec") or {}
    pool = spec.get("pool") or {}
    counters = tuple(
        (cs.get("name", ""),
         {name: parse_quantity(str(c.get("value", "0"))) for name, c in (cs.get("counters") or {}).items()})
        for cs in spec.get("sharedCounters") or ()
    )
    record = Slice(
        name=obj["metadata"]["name"],
        driver=spec.get("driver", ""),
        pool=pool.get("name", ""),
        generation=int(pool.get("generation", 0)),
        slice_count=int(pool.get("resourceSliceCount", 1)),
        mode=_mode(spec),
        node_name=spec.get("nodeName") or "",
        node_selector=spec.get("nodeSelector"),
        shared_counters=counters,
    )
    record.devices = [Device(raw, record) for raw in spec.get("devices") or ()]
    return record
