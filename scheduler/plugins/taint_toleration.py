"""TaintToleration: NoSchedule/NoExecute node taints must be tolerated (``plugins/tainttoleration``)."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.nodeselector import find_untolerated_taint
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

NAME = "TaintToleration"
ERR_REASON = "node(s) had untolerated taint(s)"
_EFFECTS = ("NoSchedule", "NoExecute")


def _untolerated(pod: dict[str, Any], node: dict[str, Any] | None) -> dict[str, Any] | None:
    taints = ((node or {}).get("spec") or {}).get("taints")
    if not taints:
        return None
    return find_untolerated_taint(taints, (pod.get("spec") or {}).get("tolerations") or [], _EFFECTS)


def _taints_now_tolerated(pod: dict[str, Any], old: dict[str, Any] | None,
                          new: dict[str, Any] | None) -> QueueingHint:
    if new is None or _untolerated(pod, new) is not None:
        return QueueingHint.SKIP
    if old is not None and _untolerated(pod, old) is None:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


class TaintToleration:
    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE),
                                     _taints_now_tolerated)]

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        if _untolerated(pod, node_info.node) is None:
            return SUCCESS
        return unresolvable(NAME, ERR_REASON)
