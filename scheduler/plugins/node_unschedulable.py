"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate it."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.nodeselector import taint_tolerated
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
    unresolvable,
)
from scheduler.snapshot import NodeInfo

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
# The taint the node lifecycle controller mirrors ``spec.unschedulable`` into.
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def _is_cordoned(node: dict[str, Any] | None) -> bool:
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))


def _node_became_schedulable(pod: dict[str, Any], old: dict[str, Any] | None,
                             new: dict[str, Any] | None) -> QueueingHint:
    if new is not None and not _is_cordoned(new) and (old is None or _is_cordoned(old)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class NodeUnschedulable:
    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE),
                                     _node_became_schedulable)]

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        if not _is_cordoned(node_info.node):
            return SUCCESS
        if taint_tolerated(UNSCHEDULABLE_TAINT, (pod.get("spec") or {}).get("tolerations") or []):
            return SUCCESS
        return unresolvable(NAME, ERR_REASON)
