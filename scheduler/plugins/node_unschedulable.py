"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate it."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ClusterEventWithHint,
    Status,
    node_now_passes,
    unresolvable,
)
from fakeapi.scheduler.snapshot import NodeInfo

from fakeapi.machinery.nodeselector import taint_tolerated

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
# The taint the node lifecycle controller mirrors ``spec.unschedulable`` into.
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def _is_cordoned(node: dict[str, Any] | None) -> bool:
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))


def _accepts(pod: dict[str, Any], node: dict[str, Any] | None) -> bool:
    return not _is_cordoned(node) or taint_tolerated(UNSCHEDULABLE_TAINT, (pod.get("spec") or {}).get("tolerations")
                                                     or [])


class NodeUnschedulable:
    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [node_now_passes(_accepts)]

    def sign(self, pod: dict[str, Any]) -> bool:
        return taint_tolerated(UNSCHEDULABLE_TAINT, (pod.get("spec") or {}).get("tolerations") or [])

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        return SUCCESS if _accepts(pod, node_info.node) else unresolvable(NAME, ERR_REASON)
