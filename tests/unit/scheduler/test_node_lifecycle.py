"""The node lifecycle controller's pure rules: conditions of a silent node, taints by readiness,
and what a kubelet back from a stop posts."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.controllers.nodelifecycle import (
    NOT_READY,
    UNREACHABLE,
    health_taints,
    is_down,
    unknown_conditions,
)
from fakeapi.scheduler.nodelease import posted_conditions
from fakeapi.scheduler.rules.lifecycle import KUBELET_STOPPED, kubelet_stopped, kubelet_stopped_at

NOW = "2026-12-02T10:00:00Z"
CREATED = "2026-12-01T00:00:00Z"


def node(ready: str | None = "True", *taints: dict[str, Any], pressure: str | None = None) -> dict[str, Any]:
    conditions = [] if ready is None else [{"type": "Ready", "status": ready, "reason": "KubeletReady",
                                            "lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED}]
    if pressure is not None:
        conditions.append({"type": "MemoryPressure", "status": pressure})
    return {"metadata": {"name": "n", "creationTimestamp": CREATED}, "spec": {"taints": list(taints)},
            "status": {"conditions": conditions}}


def test_a_silent_node_gets_its_conditions_unknown_and_the_missing_ones_added() -> None:
    conditions = {c["type"]: c for c in unknown_conditions(node("True", pressure="False"), NOW)}
    assert conditions["Ready"] == {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                                   "message": "Kubelet stopped posting node status.",
                                   "lastHeartbeatTime": CREATED, "lastTransitionTime": NOW}
    assert conditions["MemoryPressure"]["status"] == "Unknown"
    assert conditions["DiskPressure"] == {
        "type": "DiskPressure", "status": "Unknown", "reason": "NodeStatusNeverUpdated",
        "message": "Kubelet never posted node status.", "lastHeartbeatTime": CREATED, "lastTransitionTime": NOW}
    already = unknown_conditions(node("True"), NOW)
    assert unknown_conditions({**node(), "status": {"conditions": already}}, "later") == already  # no new transition


@pytest.mark.parametrize(("ready", "evict", "expected"), [
    ("True", True, []),
    ("False", True, [(NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")]),
    ("Unknown", True, [(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")]),
    ("Unknown", False, [(UNREACHABLE, "NoSchedule")]),  # every node down: no eviction
])
def test_health_taints(ready: str, evict: bool, expected: list[tuple[str, str]]) -> None:
    taints = health_taints(node(ready), evict=evict, now=NOW)
    assert [(t["key"], t["effect"]) for t in taints] == expected
    # NoExecute counts from when Ready changed, not from when this saw it.
    assert all(t["timeAdded"] == CREATED for t in taints if t["effect"] == "NoExecute")


def test_taints_by_condition_and_cordon() -> None:
    pressured = node("True", pressure="True")
    pressured["spec"]["unschedulable"] = True
    assert [(t["key"], t["effect"]) for t in health_taints(pressured, evict=True, now=NOW)] == [
        ("node.kubernetes.io/memory-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule")]
    relieved = node("True", *health_taints(pressured, evict=True, now=NOW), pressure="False")
    assert health_taints(relieved, evict=True, now=NOW) == []  # uncordoned, no pressure: both go
    cordoned = node(None)
    cordoned["spec"]["unschedulable"] = True
    assert [t["key"] for t in health_taints(cordoned, evict=True, now=NOW)] == ["node.kubernetes.io/unschedulable"]


def test_health_taints_swap_keep_and_leave_others() -> None:
    own = {"key": "gpu", "effect": "NoSchedule"}
    old = {"key": NOT_READY, "effect": "NoExecute", "timeAdded": CREATED}
    # Unknown replaces not-ready by unreachable; the node's own taint stays first.
    assert [t["key"] for t in health_taints(node("Unknown", own, old), evict=True, now=NOW)] == [
        "gpu", UNREACHABLE, UNREACHABLE]
    # Still False: the NoExecute taint keeps its time; Ready again: both go.
    assert old in health_taints(node("False", own, old), evict=True, now=NOW)
    assert health_taints(node("True", own, old), evict=True, now=NOW) == [own]
    # No Ready condition at all: taints are left as they are.
    assert health_taints(node(None, own, old), evict=True, now=NOW) == [own, old]


def test_is_down() -> None:
    assert [is_down(node(r)) for r in ("True", "False", "Unknown", None)] == [False, True, True, False]


def test_a_kubelet_back_posts_the_unknown_conditions_healthy() -> None:
    silent = {"status": {"conditions": unknown_conditions(node("True"), NOW)}, "metadata": {}}
    posted = {c["type"]: (c["status"], c["reason"]) for c in posted_conditions(silent, "later")}
    assert posted == {"Ready": ("True", "KubeletReady"), "MemoryPressure": ("False", "KubeletHasSufficientMemory"),
                      "DiskPressure": ("False", "KubeletHasNoDiskPressure"),
                      "PIDPressure": ("False", "KubeletHasSufficientPID")}
    assert posted_conditions(node("True"), "later") == []  # healthy already: nothing to post


@pytest.mark.parametrize(("value", "stopped", "at"), [
    (None, False, None),
    ("true", True, None),
    ("2026-12-02T10:00:00Z", True, 1796205600.0),
    ("yes", False, None),  # neither "true" nor a time: not stopped
])
def test_the_kubelet_stopped_annotation(value: str | None, stopped: bool, at: float | None) -> None:
    obj = node()
    if value is not None:
        obj["metadata"]["annotations"] = {KUBELET_STOPPED: value}
    assert (kubelet_stopped(obj), kubelet_stopped_at(obj)) == (stopped, at)
