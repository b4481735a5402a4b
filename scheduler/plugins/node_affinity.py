"""NodeAffinity: ``spec.nodeSelector`` and required node affinity must match the node's labels."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ClusterEventWithHint,
    Status,
    node_now_passes,
    sign_fragment,
    skip,
    unresolvable,
)
from fakeapi.scheduler.snapshot import NodeInfo

from fakeapi.machinery.nodeselector import node_matches_pod_affinity_and_selector

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"


def _has_constraints(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("nodeSelector") or ((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))


class NodeAffinity:
    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [node_now_passes(node_matches_pod_affinity_and_selector)]

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> Status:
        return SUCCESS if _has_constraints(pod) else skip(NAME)

    def sign(self, pod: dict[str, Any]) -> bytes:
        spec = pod.get("spec") or {}
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        return sign_fragment(spec.get("nodeSelector"), required)

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        if node_matches_pod_affinity_and_selector(pod, node_info.node or {}):
            return SUCCESS
        return unresolvable(NAME, ERR_REASON_POD)
