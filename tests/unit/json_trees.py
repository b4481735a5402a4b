"""Helpers for tests about JSON trees: which objects a result shares with its inputs."""

from __future__ import annotations

from typing import Any


def containers(value: Any) -> list[Any]:
    """Every dict and list in ``value``, itself included."""
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in containers(v))]
    return []
