"""Values for a pod group's ``matchAttribute`` (fakeapi's draft extension), pure.

All devices allocated to a group instance's constrained claims must share each attribute's
value.  The value is either held already (a member's claim is allocated) or chosen by the
pod-group cycle, which tries the candidates this module lists: every value tuple some device
carries, in first-fit device order, leaving out those with too few free devices for the
members still to be placed (a necessary condition, so nothing feasible is skipped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from fakeapi.scheduler.dra.constraints import typed_value
from fakeapi.scheduler.dra.devices import Device

TypedValue = tuple[str, Any]


def device_values(device: Device, attributes: Sequence[str]) -> tuple[TypedValue, ...] | None:
    """The typed value of each attribute on ``device``; None when one is missing (no qualifying device)."""
    values = []
    for attribute in attributes:
        attr = device.attribute(attribute)
        value = typed_value(attr) if attr is not None else None
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def candidate_values(devices: Iterable[Device], attributes: Sequence[str], *, free: Callable[[Device], bool],
                     needed: int) -> list[tuple[TypedValue, ...]]:
    """Distinct value tuples in first-seen order that at least ``needed`` free devices carry."""
    counts: dict[tuple[TypedValue, ...], int] = {}
    for device in devices:
        values = device_values(device, attributes)
        if values is not None:
            counts[values] = counts.get(values, 0) + free(device)
    return [values for values, count in counts.items() if count >= needed]


def devices_per_claim(claim: Mapping[str, Any]) -> int:
    """The fewest devices a claim can be satisfied with (``All`` requests count one)."""
    total = 0
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        options = request.get("firstAvailable") or [request.get("exactly") or {}]
        total += min(1 if o.get("allocationMode") == "All" else int(o.get("count") or 1) for o in options)
    return total


def constraint_reason(attributes: Sequence[str], values: Mapping[str, TypedValue | None]) -> str:
    """Why a member's claims did not fit under the group's constraint; names each attribute."""
    parts = [f'{a}="{values[a][1]}"' if values.get(a) is not None else a for a in attributes]   # type: ignore[index]
    return "cannot allocate all claims: the pod group's devices must match on " + ", ".join(parts)
