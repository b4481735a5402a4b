"""Allocator errors: fatal for the pod's attempt, or (node variant) only for one node."""

from __future__ import annotations


class AllocationError(Exception):
    """Allocation cannot proceed for this pod (bad CEL, unknown class, limits, disabled features)."""


class NodeAllocationError(AllocationError):
    """Allocation failed on this node only; other nodes may still work (upstream
    ``ErrFailedAllocationOnNode``, today only "invalid resource pools were encountered")."""
