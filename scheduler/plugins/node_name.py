"""NodeName: a pod that names its node fits only that node (``plugins/nodename``)."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, Status, skip, unresolvable
from fakeapi.scheduler.rules.pods import node_of
from fakeapi.scheduler.snapshot import NodeInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> Status:
        return SUCCESS if node_of(pod) else skip(NAME)

    def sign(self, pod: dict[str, Any]) -> str:
        return node_of(pod)

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        if node_of(pod) != node_info.name:
            return unresolvable(NAME, ERR_REASON)
        return SUCCESS
