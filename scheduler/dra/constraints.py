"""Claim constraints: ``matchAttribute`` and ``distinctAttribute``.

Both are monotonic (once a device is rejected, more devices will not help), which lets the
search prune early.  ``add``/``remove`` are strictly paired by the search's undo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakeapi.scheduler.dra.devices import Device
from fakeapi.scheduler.dra.errors import AllocationError

from fakeapi.machinery.cel import parse_semver

_SCALAR_KINDS = ("string", "int", "bool", "version")


def typed_value(attr: dict[str, Any]) -> tuple[str, Any] | None:
    """An attribute's (type, value) as constraints compare it; None for list or unknown types."""
    for kind in _SCALAR_KINDS:
        if kind in attr:
            return kind, attr[kind]
    return None


def _canonical_version(text: str) -> str:
    try:
        return parse_semver(text)
    except ValueError:
        return text


class Constraint:
    """Scoped to ``requests`` (``req`` or ``req/sub``; empty = every request of the claim)."""

    def __init__(self, attribute: str, requests: Sequence[str]) -> None:
        self.attribute = attribute
        self._requests = frozenset(requests)

    def applies(self, request: str, sub_request: str) -> bool:
        if not self._requests:
            return True
        return request in self._requests or (bool(sub_request) and f"{request}/{sub_request}" in self._requests)

    def add(self, request: str, sub_request: str, device: Device) -> bool:
        """Take ``device`` for a request in scope; False if the constraint rejects it."""
        if not self.applies(request, sub_request):
            return True
        attr = device.attribute(self.attribute)
        return attr is not None and self._accept(device, typed_value(attr))

    def remove(self, request: str, sub_request: str, device: Device) -> None:
        """Undo the matching :meth:`add`."""
        if self.applies(request, sub_request):
            self._forget()

    def _accept(self, device: Device, value: tuple[str, Any] | None) -> bool:
        raise NotImplementedError

    def _forget(self) -> None:
        raise NotImplementedError


class MatchAttribute(Constraint):
    """All devices carry the attribute with the same type and value.

    ``pinned`` fixes that value in advance (a pod group's devices chose it already); the
    constraint then never forgets it.
    """

    def __init__(self, attribute: str, requests: Sequence[str], pinned: tuple[str, Any] | None = None) -> None:
        super().__init__(attribute, requests)
        self._value: tuple[str, Any] | None = pinned
        self._count = 0 if pinned is None else 1

    def _accept(self, device: Device, value: tuple[str, Any] | None) -> bool:
        if self._count == 0:
            self._value = value
        elif value is None or value != self._value:
            return False
        self._count += 1
        return True

    def _forget(self) -> None:
        self._count -= 1


class DistinctAttribute(Constraint):
    """All devices carry the attribute with pairwise different values."""

    def __init__(self, attribute: str, requests: Sequence[str]) -> None:
        super().__init__(attribute, requests)
        self._values: list[tuple[str, Any]] = []

    def _accept(self, device: Device, value: tuple[str, Any] | None) -> bool:
        if value is None:
            raise AllocationError(f"device {'/'.join(device.id)}: attribute {self.attribute}: "
                                  "unsupported attribute value")
        if value[0] == "version":
            value = ("version", _canonical_version(value[1]))
        if not self._distinct(value):
            return False
        self._values.append(value)
        return True

    def _distinct(self, value: tuple[str, Any]) -> bool:
        for existing in self._values:
            if existing[0] != value[0]:
                return True  # upstream stops at a type mismatch and calls it distinct
            if existing[1] == value[1]:
                return False
        return True

    def _forget(self) -> None:
        self._values.pop()


def build_constraints(claim_ref: str, constraints: Sequence[dict[str, Any]]) -> list[Constraint]:
    """Constraint trackers for one claim; unknown constraint types are fatal as upstream."""
    built: list[Constraint] = []
    for i, spec in enumerate(constraints):
        requests = spec.get("requests") or ()
        if spec.get("matchAttribute"):
            built.append(MatchAttribute(spec["matchAttribute"], requests))
        elif spec.get("distinctAttribute"):
            built.append(DistinctAttribute(spec["distinctAttribute"], requests))
        else:
            raise AllocationError(f"claim {claim_ref}, constraint #{i}: empty constraint "
                                  "(unsupported constraint type?)")
    return built
