"""NodeResourcesFit: requests must fit allocatable minus what placed pods use (``noderesources/fit.go``).

Pods nominated to the node (waiting for their preemption victims to go) count too when their
priority is at least the pod's, as upstream's filters run with nominated pods added.  Also the
default LeastAllocated score: prefer nodes with more free cpu/memory, counting pods without
requests at upstream's non-zero defaults so empty pods still spread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

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


class Nominations(Protocol):
    """The nominated pods (:class:`fakeapi.scheduler.nominator.Nominator`)."""

    def usage(self, node_name: str, priority: int, exclude: str) -> tuple[Mapping[str, int], int]:
        """(requests, pod count) nominated pods of at least ``priority`` claim on the node, ``exclude`` aside."""
        ...

    def __len__(self) -> int:
        """How many pods are nominated."""
        ...


def fit_reasons(requests: Mapping[str, int], node_info: NodeInfo, extra: Mapping[str, int] | None = None,
                extra_pods: int = 0) -> list[str]:
    """Why ``requests`` (milli-units) do not fit ``node_info`` when ``extra`` (and ``extra_pods``)
    are taken as well; empty when they fit."""
    allocatable = node_info.allocatable
    if allocatable is None:
        return []
    reasons = []
    if PODS in allocatable and node_info.pod_count + extra_pods + 1 > allocatable[PODS] // 1000:
        reasons.append(TOO_MANY_PODS)
    # Upstream order: cpu, memory, then the other (extended/scalar) resources.
    for resource in sorted(requests, key=lambda r: (r != CPU, r != MEMORY, r)):
        wanted = requests[resource]
        used = node_info.requested.get(resource, 0) + (extra or {}).get(resource, 0)
        if wanted and wanted > allocatable.get(resource, 0) - used:
            reasons.append(insufficient(resource))
    return reasons


def overcommitted(node_info: NodeInfo) -> bool:
    """Whether what the node's pods request exceeds what it can hold (after a simulated change)."""
    allocatable = node_info.allocatable
    if allocatable is None:
        return False
    if PODS in allocatable and node_info.pod_count > allocatable[PODS] // 1000:
        return True
    return any(value > allocatable.get(name, 0) for name, value in node_info.requested.items() if value)


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

    def __init__(self, nominated: Nominations | None = None) -> None:
        self._nominated = nominated

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE))]

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> Status:
        state.write(_STATE_KEY, pod_requests(pod))
        return SUCCESS

    def sign(self, pod: dict[str, Any]) -> tuple[tuple[str, int], ...] | None:
        # Which nominated pods count depends on the pod's priority and identity: none signs then.
        if self._nominated:
            return None
        return tuple(sorted(pod_requests(pod).items()))

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        extra: Mapping[str, int] | None = None
        extra_pods = 0
        if self._nominated is not None:
            priority = int((pod.get("spec") or {}).get("priority") or 0)
            extra, extra_pods = self._nominated.usage(node_info.name, priority, pod["metadata"]["uid"])
        reasons = fit_reasons(state.read(_STATE_KEY), node_info, extra, extra_pods)
        return unschedulable(NAME, *reasons) if reasons else SUCCESS

    def score(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> int:
        return least_allocated_score(state.read(_STATE_KEY), node_info)
