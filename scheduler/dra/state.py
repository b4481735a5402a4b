"""What is already in use cluster-wide: allocated claims plus in-flight (assumed) allocations.

Mirrors upstream ``AllocatedState``: dedicated devices by DeviceID, shared allocations
(``shareID``) by their consumed capacity.  Admin-access results never block other claims, so
they are not recorded.  Counts are reference counts so that adding and removing the same
allocation (assumed, then written) stays balanced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from fakeapi.scheduler.dra.devices import qualify
from fakeapi.scheduler.journal import ChangeJournal
from fakeapi.scheduler.rules.keys import DeviceID

from fakeapi.machinery.quantity import parse_quantity


class AllocatedState:
    """Devices and capacity in use; the allocator only reads it."""

    def __init__(self) -> None:
        self._dedicated: Counter[DeviceID] = Counter()
        self._shared: Counter[DeviceID] = Counter()
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # (driver, pool) -> how many times its allocations changed: what the allocator found
        # for a node stays true while the generations of the node's pools do.
        self._generations: Counter[tuple[str, str]] = Counter()
        # The same changes by pool, newest last: which pools changed since a stamp.
        self.changes: ChangeJournal[tuple[str, str]] = ChangeJournal()

    @classmethod
    def from_claims(cls, claims: Iterable[dict[str, Any]]) -> AllocatedState:
        """State of all claims that have ``status.allocation``."""
        state = cls()
        for claim in claims:
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                state.add_allocation(allocation)
        return state

    def add_allocation(self, allocation: dict[str, Any]) -> None:
        """Record an AllocationResult (a written one or an in-flight assumption)."""
        self._apply(allocation, 1)

    def remove_allocation(self, allocation: dict[str, Any]) -> None:
        """Undo :meth:`add_allocation` for the same AllocationResult."""
        self._apply(allocation, -1)

    def _apply(self, allocation: dict[str, Any], sign: int) -> None:
        for result in (allocation.get("devices") or {}).get("results") or ():
            pool = (result.get("driver", ""), result.get("pool", ""))
            self._generations[pool] += 1
            self.changes.touch(pool)
            if result.get("adminAccess"):
                continue
            driver = result.get("driver", "")
            device_id: DeviceID = (driver, result.get("pool", ""), result.get("device", ""))
            if not result.get("shareID"):
                _bump(self._dedicated, device_id, sign)
                continue
            _bump(self._shared, device_id, sign)
            consumed = self._capacity.setdefault(device_id, {})
            for name, value in (result.get("consumedCapacity") or {}).items():
                key = qualify(name, driver)
                consumed[key] = consumed.get(key, Fraction(0)) + sign * parse_quantity(str(value))
            if not self._shared[device_id]:
                self._capacity.pop(device_id, None)

    def pool_generation(self, pool_id: tuple[str, str]) -> int:
        """Changes so far to the allocations of pool (driver, name)."""
        return self._generations[pool_id]

    def is_dedicated(self, device_id: DeviceID) -> bool:
        """Allocated exclusively (no shareID) to some claim."""
        return device_id in self._dedicated

    def is_allocated(self, device_id: DeviceID) -> bool:
        """Allocated in any way; such devices consume their counters."""
        return device_id in self._dedicated or device_id in self._shared

    def consumed_capacity(self, device_id: DeviceID) -> dict[str, Fraction] | None:
        """Capacity consumed by shared allocations (fully-qualified names), None if not shared."""
        return self._capacity.get(device_id)


def _bump(counter: Counter[DeviceID], key: DeviceID, sign: int) -> None:
    counter[key] += sign
    if counter[key] <= 0:
        del counter[key]
