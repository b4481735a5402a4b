"""TaintToleration: NoSchedule/NoExecute node taints must be tolerated (``plugins/tainttoleration``)."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ClusterEventWithHint,
    Status,
    node_now_passes,
    sign_fragment,
    unresolvable,
)
from fakeapi.scheduler.snapshot import NodeInfo

from fakeapi.machinery.nodeselector import find_untolerated_taint

NAME = "TaintToleration"
ERR_REASON = "node(s) had untolerated taint(s)"
_EFFECTS = ("NoSchedule", "NoExecute")


def _untolerated(pod: dict[str, Any], node: dict[str, Any] | None) -> dict[str, Any] | None:
    taints = ((node or {}).get("spec") or {}).get("taints")
    if not taints:
        return None
    return find_untolerated_taint(taints, (pod.get("spec") or {}).get("tolerations") or [], _EFFECTS)


class TaintToleration:
    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [node_now_passes(lambda pod, node: _untolerated(pod, node) is None)]

    def sign(self, pod: dict[str, Any]) -> bytes:
        return sign_fragment((pod.get("spec") or {}).get("tolerations") or [])

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        if _untolerated(pod, node_info.node) is None:
            return SUCCESS
        return unresolvable(NAME, ERR_REASON)
