"""Shared counters of partitionable devices (KEP-4815).

Available = the pool's counter sets minus what already-allocated devices of the pool consume
(including devices on slices that do not target this node); computed once per pool and
Allocator.  Devices picked during one allocation attempt add tentative consumption, which the
search undoes on backtrack.  As upstream, any counter of the pool below zero rejects the device.
"""

from __future__ import annotations

from fractions import Fraction

from fakeapi.scheduler.dra.devices import Device
from fakeapi.scheduler.dra.pools import Pool, PoolID
from fakeapi.scheduler.dra.state import AllocatedState

CounterSets = dict[str, dict[str, Fraction]]


def available_counters(pool: Pool, state: AllocatedState) -> CounterSets:
    """Counter values of ``pool`` left after the allocated devices' consumption."""
    available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
    for slice_ in (*pool.slices, *pool.other_slices):
        for device in slice_.devices:
            if not device.consumes or not state.is_allocated(device.id):
                continue
            for set_name, counters in device.consumes:
                target = available.get(set_name, {})
                for name, value in counters.items():
                    if name in target:
                        target[name] -= value
    return available


class CounterTracker:
    """Tentative counter consumption of one allocation attempt, checked against availability."""

    def __init__(self, state: AllocatedState, cache: dict[PoolID, CounterSets]) -> None:
        self._state = state
        self._available = cache  # shared per Allocator: allocated state does not change
        self._consumed: dict[PoolID, CounterSets] = {}

    def try_consume(self, pool: Pool, device: Device) -> bool:
        """Add the device's consumption; False (and nothing changed) if a counter would go negative."""
        available = self._available.get(pool.id)
        if available is None:
            available = self._available[pool.id] = available_counters(pool, self._state)
        self._change(pool.id, device, 1)
        consumed = self._consumed[pool.id]
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self.release(pool.id, device)
                    return False
        return True

    def release(self, pool_id: PoolID, device: Device) -> None:
        """Undo a successful :meth:`try_consume`."""
        self._change(pool_id, device, -1)

    def _change(self, pool_id: PoolID, device: Device, sign: int) -> None:
        consumed = self._consumed.setdefault(pool_id, {})
        for set_name, counters in device.consumes:
            target = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, 0) + sign * value
