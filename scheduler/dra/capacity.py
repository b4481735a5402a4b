"""Consumable capacity (KEP-5075): what one allocation consumes and whether it still fits.

Pure functions over :class:`~scheduler.dra.devices.Device` records.  Names are resolved like
upstream: an unqualified name means the driver's domain, an entry published with the driver's
domain wins over an unqualified one, and a request naming the same capacity twice is an error.
Arithmetic is exact (``Fraction``), so upstream's integer/milli paths collapse into one.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from fakeapi.scheduler.dra.devices import Capacity, Device, qualify
from fakeapi.scheduler.dra.errors import AllocationError

from fakeapi.machinery.quantity import format_quantity, parse_quantity, parse_quantity_with_format

# Consumed amount per fully-qualified capacity name, with the spelling to report in results.
Consumption = dict[str, tuple[Fraction, str]]


def resolve_device_capacity(device: Device) -> dict[str, Capacity]:
    """Device capacity by fully-qualified name, each capacity counted once."""
    driver = device.slice.driver
    resolved = {name: cap for name, cap in device.capacity.items() if name.startswith(driver + "/")}
    for name, cap in device.capacity.items():
        resolved.setdefault(qualify(name, driver), cap)
    return resolved


def status_name(fq_name: str, device: Device) -> str:
    """The spelling used in ``consumedCapacity``: as the device published it."""
    return fq_name if fq_name in device.capacity else fq_name.partition("/")[2]


def _resolve_name(name: str, device: Device) -> str | None:
    driver = device.slice.driver
    if name in device.capacity:
        return qualify(name, driver)
    domain, sep, ident = name.partition("/")
    if sep:
        return name if domain == driver and ident in device.capacity else None
    return qualify(name, driver) if f"{driver}/{name}" in device.capacity else None


def resolve_requests(requests: Mapping[str, Any] | None, device: Device) -> dict[str, Fraction] | None:
    """Requested amounts by fully-qualified name; None when the device lacks one of them."""
    resolved: dict[str, Fraction] = {}
    for name, value in (requests or {}).items():
        key = _resolve_name(name, device)
        if key is None:
            return None
        if key in resolved:
            ident = key.partition("/")[2]
            other = ident if name == key else key
            raise AllocationError(f"capacity {ident!r} requested both as {name!r} and as {other!r}")
        resolved[key] = parse_quantity(str(value))
    return resolved


def consumed_amount(requested: Fraction | None, requested_text: str, cap: Capacity) -> tuple[Fraction, str]:
    """What one allocation consumes of ``cap``: request rounded up per policy, else default/all."""
    policy = cap.policy
    if requested is None:
        if policy and policy.get("default") is not None:
            return parse_quantity(str(policy["default"])), str(policy["default"])
        return cap.value, cap.text
    if not policy:
        return requested, requested_text
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        minimum = parse_quantity(str(valid_range["min"]))
        if requested < minimum:
            return minimum, str(valid_range["min"])
        if valid_range.get("step") is None:
            return requested, requested_text
        step, fmt = parse_quantity_with_format(str(valid_range["step"]))
        steps = -((minimum - requested) // step)  # ceiling division
        value = minimum + steps * step
        # Upstream builds the rounded value in the step's format.
        return value, requested_text if value == requested else format_quantity(value, fmt)
    for text in policy.get("validValues") or ():
        if requested <= parse_quantity(str(text)):
            return parse_quantity(str(text)), str(text)
    return requested, requested_text


def violates_policy(value: Fraction, policy: Mapping[str, Any] | None) -> bool:
    """True if ``value`` is not a legal consumption under the device's request policy."""
    if not policy:
        return False
    if policy.get("default") is not None and value == parse_quantity(str(policy["default"])):
        return False
    valid_range = policy.get("validRange")
    if valid_range:
        if valid_range.get("max") is not None and value > parse_quantity(str(valid_range["max"])):
            return True
        if valid_range.get("step") is not None:
            minimum = parse_quantity(str(valid_range.get("min", "0")))
            return (value - minimum) % parse_quantity(str(valid_range["step"])) != 0
        return False
    values = policy.get("validValues") or ()
    return bool(values) and all(value != parse_quantity(str(v)) for v in values)


def fit(device: Device, requests: Mapping[str, Any] | None, in_use: Mapping[str, Fraction] | None,
        allocating: Mapping[str, Fraction] | None) -> Consumption | None:
    """Consumption of one more allocation on ``device``, or None if it does not fit.

    ``in_use`` is what allocated claims consume, ``allocating`` what this allocation attempt
    already picked.  Unrepresentable (negative) amounts are fatal, as upstream.
    """
    resolved = resolve_requests(requests, device)
    if resolved is None:
        return None
    texts = {qualify(n, device.slice.driver): str(v) for n, v in (requests or {}).items()}
    capacity = resolve_device_capacity(device)
    consumption: Consumption = {}
    for name, cap in capacity.items():
        amount = consumed_amount(resolved.get(name), texts.get(name, ""), cap)
        if amount[0] < 0:
            raise AllocationError(f"capacity {name!r}: capacity value is negative")
        consumption[name] = amount
    for name, cap in capacity.items():
        amount = consumption[name][0]
        if violates_policy(amount, cap.policy):
            return None
        total = amount + (in_use or {}).get(name, 0) + (allocating or {}).get(name, 0)
        if total > cap.value:
            return None
    return consumption
