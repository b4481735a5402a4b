"""Node filter plugins as tables: name, affinity/selector, unschedulable, taints, resources."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code
from fakeapi.scheduler.plugins import node_affinity, node_resources_fit, node_unschedulable, taint_toleration
from fakeapi.scheduler.plugins.node_affinity import NodeAffinity
from fakeapi.scheduler.plugins.node_resources_fit import NodeResourcesFit, fit_reasons, least_allocated_score
from fakeapi.scheduler.plugins.node_unschedulable import NodeUnschedulable
from fakeapi.scheduler.plugins.taint_toleration import TaintToleration
from fakeapi.scheduler.snapshot import NodeInfo, pod_requests

from .builders import node, pod

GPU_TAINT = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
EXEC_TAINT = {"key": "dedicated", "value": "x", "effect": "NoExecute"}
PREFER_TAINT = {"key": "soft", "effect": "PreferNoSchedule"}


def _filter(plugin: Any, p: dict[str, Any], n: dict[str, Any]) -> tuple[Code, tuple[str, ...]]:
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, p, [])
    status = plugin.filter(state, p, NodeInfo(n["metadata"]["name"], n))
    return status.code, status.reasons


OK = (Code.SUCCESS, ())


@pytest.mark.parametrize(("p", "n", "want"), [
    (pod(), node(), OK),
    (pod(node_selector={"zone": "a"}), node(labels={"zone": "a"}), OK),
    (pod(node_selector={"zone": "a"}), node(labels={"zone": "b"}),
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (node_affinity.ERR_REASON_POD,))),
], ids=["no-constraints", "selector-match", "selector-mismatch"])
def test_node_affinity(p: dict[str, Any], n: dict[str, Any], want: Any) -> None:
    assert _filter(NodeAffinity(), p, n) == want


@pytest.mark.parametrize(("p", "n", "want"), [
    (pod(), node(), OK),
    (pod(), node(taints=[GPU_TAINT]), (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (taint_toleration.ERR_REASON,))),
    (pod(), node(taints=[EXEC_TAINT]), (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (taint_toleration.ERR_REASON,))),
    (pod(), node(taints=[PREFER_TAINT]), OK),
    (pod(tolerations=[{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]),
     node(taints=[GPU_TAINT]), OK),
    (pod(tolerations=[{"operator": "Exists"}]), node(taints=[GPU_TAINT, EXEC_TAINT]), OK),
    (pod(tolerations=[{"key": "gpu", "operator": "Exists"}]), node(taints=[GPU_TAINT, EXEC_TAINT]),
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (taint_toleration.ERR_REASON,))),
], ids=["no-taints", "noschedule", "noexecute", "prefer-ignored", "tolerated-equal", "tolerate-all",
        "one-of-two"])
def test_taint_toleration(p: dict[str, Any], n: dict[str, Any], want: Any) -> None:
    assert _filter(TaintToleration(), p, n) == want


@pytest.mark.parametrize(("p", "n", "want"), [
    (pod(), node(), OK),
    (pod(), node(unschedulable=True), (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (node_unschedulable.ERR_REASON,))),
    (pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                       "effect": "NoSchedule"}]), node(unschedulable=True), OK),
], ids=["schedulable", "cordoned", "tolerates-cordon"])
def test_node_unschedulable(p: dict[str, Any], n: dict[str, Any], want: Any) -> None:
    assert _filter(NodeUnschedulable(), p, n) == want


ALLOC = {"cpu": "2", "memory": "4Gi", "pods": "3"}


@pytest.mark.parametrize(("requests", "placed", "allocatable", "want"), [
    ({"cpu": "1"}, [], ALLOC, []),
    ({"cpu": "2"}, [{"cpu": "500m"}], ALLOC, [node_resources_fit.insufficient("cpu")]),
    ({"cpu": "3", "memory": "5Gi"}, [], ALLOC, ["Insufficient cpu", "Insufficient memory"]),
    ({}, [{}, {}, {}], ALLOC, [node_resources_fit.TOO_MANY_PODS]),
    ({"example.com/foo": "1"}, [], ALLOC, ["Insufficient example.com/foo"]),
    ({"cpu": "64"}, [], None, []),
], ids=["fits", "cpu-used", "cpu-and-memory", "too-many-pods", "extended", "no-allocatable-unlimited"])
def test_fit_reasons(requests: dict[str, str], placed: list[dict[str, str]], allocatable: Any,
                     want: list[str]) -> None:
    info = NodeInfo("n1", node("n1", allocatable=allocatable))
    for i, other in enumerate(placed):
        info.add_pod(f"o{i}", pod_requests(pod(requests=other)))
    assert fit_reasons(pod_requests(pod(requests=requests)), info) == want


def test_fit_filter_returns_unschedulable() -> None:
    code, reasons = _filter(NodeResourcesFit(), pod(requests={"cpu": "3"}), node(allocatable=ALLOC))
    assert code == Code.UNSCHEDULABLE and reasons == ("Insufficient cpu",)


def test_least_allocated_prefers_emptier_node() -> None:
    empty = NodeInfo("a", node("a", allocatable=ALLOC))
    busy = NodeInfo("b", node("b", allocatable=ALLOC))
    busy.add_pod("x", pod_requests(pod(requests={"cpu": "1", "memory": "2Gi"})))
    req = pod_requests(pod())
    assert least_allocated_score(req, empty) > least_allocated_score(req, busy)


@pytest.mark.parametrize(("spec", "want"), [
    ({"containers": [{"resources": {"requests": {"cpu": "100m"}}}, {"resources": {"requests": {"cpu": "1"}}}]},
     {"cpu": 1100}),
    ({"containers": [{"resources": {"limits": {"memory": "1Ki"}}}]}, {"memory": 1024_000}),
    ({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
      "initContainers": [{"resources": {"requests": {"cpu": "2"}}}]}, {"cpu": 2000}),
    ({"containers": [{}], "overhead": {"cpu": "250m"}}, {"cpu": 250}),
    ({"containers": [{"resources": {"requests": {"cpu": "100m", "example.com/gpu": "1"}}}],
      "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}, "overhead": {"cpu": "250m"}},
     {"cpu": 2250, "memory": 1024**3 * 1000, "example.com/gpu": 1000}),
    ({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
      "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                         {"resources": {"requests": {"cpu": "1"}}}]}, {"cpu": 1500}),
], ids=["sum-containers", "limits-default-requests", "init-max", "overhead", "pod-level-cpu-and-memory",
        "sidecar-runs-beside"])
def test_pod_requests(spec: dict[str, Any], want: dict[str, int]) -> None:
    assert pod_requests({"spec": spec}) == want
