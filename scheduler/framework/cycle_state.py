"""Per-pod, per-attempt scratch space shared by the plugins of one scheduling + binding cycle."""

from __future__ import annotations

from typing import Any


class CycleState:
    """Plugin data keyed by plugin name, plus the plugins PreFilter told us to skip.

    One instance lives from PreFilter to the end of the binding cycle of one attempt; it is not
    shared between pods, so no locking is needed even though binding runs as a separate task.
    """

    __slots__ = ("_data", "placement", "skip_filter", "skip_score")

    def __init__(self, placement: dict[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # What a pod-group cycle fixed for all its members in this attempt, by plugin name
        # (upstream's PlacementCycleState); empty outside pod-group cycles.
        self.placement: dict[str, Any] = placement or {}

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``, or None when the plugin stored nothing (skipped)."""
        return self._data.get(key)
