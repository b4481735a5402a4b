"""Where a DaemonSet's pods belong (``pkg/controller/daemon/util``, ``NodeShouldRunDaemonPod``), pure."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fakeapi.scheduler.rules.pods import node_of

from fakeapi.machinery.nodeselector import find_untolerated_taint, node_matches_pod_affinity_and_selector

# AddOrUpdateDaemonPodTolerations: every daemon pod survives these node conditions.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def with_daemon_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pod's tolerations plus the daemon defaults it lacks."""
    tolerations = [dict(t) for t in spec.get("tolerations") or []]
    wanted = [*DAEMON_TOLERATIONS, *([NETWORK_UNAVAILABLE] if spec.get("hostNetwork") else [])]
    for key, effect in wanted:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    return tolerations


def daemon_pod_spec(template_spec: Mapping[str, Any], node_name: str) -> dict[str, Any]:
    """The pod spec for ``node_name``: default tolerations, and the required node affinity replaced by
    ``matchFields metadata.name In [node]`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``)."""
    spec = copy.deepcopy(dict(template_spec))
    spec["tolerations"] = with_daemon_tolerations(spec)
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    return spec


def should_run(template_spec: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, bool]:
    """(shouldRun, shouldContinueRunning) of a daemon pod on ``node``."""
    pod = {"spec": {**template_spec, "tolerations": with_daemon_tolerations(template_spec)}}
    if not node_matches_pod_affinity_and_selector(pod, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints")
    tolerations = pod["spec"]["tolerations"]
    if find_untolerated_taint(taints, tolerations, ("NoExecute",)) is not None:
        return False, False
    if find_untolerated_taint(taints, tolerations, ("NoSchedule",)) is not None:
        return False, True
    return True, True


def daemon_node(pod: Mapping[str, Any]) -> str | None:
    """The node a daemon pod is for: its nodeName, else its matchFields affinity."""
    if node := node_of(pod):
        return node
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return str(field["values"][0])
    return None
