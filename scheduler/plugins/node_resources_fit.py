"""NodeResourcesFit: requests must fit allocatable minus what placed pods use (``noderesources/fit.go``).

Also the default LeastAllocated score: prefer nodes with more free cpu/memory, counting pods
without requests at upstream's non-zero defaults so empty pods still spread.
"""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Status,
    unschedulable,
)
from fakeapi.scheduler.snapshot import CPU, MEMORY, PODS, NodeInfo, non_zero_requests, pod_requests

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"
_STATE_KEY = NAME


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


def fit_reasons(requests: dict[str, int], node_info: NodeInfo) -> list[str]:
    """Why ``requests`` (milli-units) do not fit ``node_info``; empty when they fit."""
    allocatable = node_info.allocatable
    if allocatable is None:
        return []
    reasons = []
    if PODS in allocatable and node_info.pod_count + 1 > allocatable[PODS] // 1000:
        reasons.append(TOO_MANY_PODS)
    # Upstream order: cpu, memory, then the other (extended/scalar) resources.
    for resource in sorted(requests, key=lambda r: (r != CPU, r != MEMORY, r)):
        wanted = requests[resource]
        if wanted and wanted > allocatable.get(resource, 0) - node_info.requested.get(resource, 0):
            reasons.append(insufficient(resource))
    return reasons


def least_allocated_score(requests: dict[str, int], node_info: NodeInfo) -> int:
    """Mean over cpu and memory of the free fraction after placing the pod, 0..100."""
    allocatable = node_info.allocatable
    if not allocatable:
        return 0
    cpu, memory = non_zero_requests(requests)
    total = 0
    for index, resource, wanted in ((0, CPU, cpu), (1, MEMORY, memory)):
        capacity = allocatable.get(resource, 0)
        used = node_info.non_zero[index] + wanted
        if capacity > 0 and used <= capacity:
            total += (capacity - used) * 100 // capacity
    return total // 2


class NodeResourcesFit:
    name = NAME
    weight = 1

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE))]

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> Status:
        state.write(_STATE_KEY, pod_requests(pod))
        return SUCCESS

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        reasons = fit_reasons(state.read(_STATE_KEY), node_info)
        return unschedulable(NAME, *reasons) if reasons else SUCCESS

    def score(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> int:
        return least_allocated_score(state.read(_STATE_KEY), node_info)
