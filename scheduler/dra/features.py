"""Allocator feature flags, derived once from the feature gates (upstream ``internal.Features``)."""

from __future__ import annotations

from dataclasses import dataclass

from fakeapi.config import FeatureGates


@dataclass(frozen=True)
class Features:
    """Which optional DRA features the allocator honours; all on by default (Kubernetes 1.37)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable: bool = True
    device_taints: bool = True
    consumable_capacity: bool = True

    @classmethod
    def from_gates(cls, gates: FeatureGates) -> Features:
        return cls(
            admin_access=gates.DRAAdminAccess,
            prioritized_list=gates.DRAPrioritizedList,
            partitionable=gates.DRAPartitionableDevices,
            device_taints=gates.DRADeviceTaints,
            consumable_capacity=gates.DRAConsumableCapacity,
        )
