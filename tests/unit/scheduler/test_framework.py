"""Framework runtime: phase order, skip, permit wait/allow/reject/timeout; fit messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    Code,
    Status,
    fit_error_message,
    skip,
    unresolvable,
    unschedulable,
)
from fakeapi.scheduler.framework.runtime import Framework
from fakeapi.scheduler.node_search import num_feasible_nodes_to_find
from fakeapi.scheduler.snapshot import NodeInfo

from .builders import node, pod


class _Filter:
    def __init__(self, name: str, answers: dict[str, Status], pre: Status = SUCCESS) -> None:
        self.name = name
        self.answers = answers
        self.pre = pre
        self.calls: list[str] = []

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> Status:
        return self.pre

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        self.calls.append(node_info.name)
        return self.answers.get(node_info.name, SUCCESS)


class _Gang:
    name = "Gang"

    def permit(self, state: CycleState, pod: dict[str, Any], node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), 5.0


def test_filter_stops_at_first_rejection_and_names_plugin() -> None:
    first = _Filter("A", {"n1": unschedulable("", "nope")})
    second = _Filter("B", {})
    fw = Framework([first, second])
    state = CycleState()
    status = fw.run_filter(state, pod(), NodeInfo("n1", node("n1")))
    assert (status.code, status.plugin, status.message) == (Code.UNSCHEDULABLE, "A", "nope")
    assert second.calls == []


def test_prefilter_skip_skips_filter() -> None:
    plugin = _Filter("A", {"n1": unschedulable("A", "nope")}, pre=skip("A"))
    fw = Framework([plugin])
    state = CycleState()
    assert fw.run_pre_filter(state, pod(), []).is_success
    assert fw.run_filter(state, pod(), NodeInfo("n1", node("n1"))).is_success
    assert plugin.calls == []


async def test_permit_wait_then_allow() -> None:
    fw = Framework([_Gang()])
    p = pod()
    assert fw.run_permit(CycleState(), p, "n1").code == Code.WAIT
    waiter = asyncio.ensure_future(fw.wait_on_permit(p))
    await asyncio.sleep(0)
    fw.waiting_pods[p["metadata"]["uid"]].allow("Gang")
    assert (await waiter).is_success
    assert fw.waiting_pods == {}


async def test_permit_wait_rejected() -> None:
    fw = Framework([_Gang()])
    p = pod()
    fw.run_permit(CycleState(), p, "n1")
    fw.waiting_pods[p["metadata"]["uid"]].reject("Gang", "minCount (2) cannot be satisfied")
    status = await fw.wait_on_permit(p)
    assert status.is_rejected and status.message == "minCount (2) cannot be satisfied"


async def test_permit_wait_times_out() -> None:
    class Short(_Gang):
        def permit(self, state: CycleState, pod: dict[str, Any], node_name: str) -> tuple[Status, float]:
            return Status(Code.WAIT), 0.01

    fw = Framework([Short()])
    p = pod()
    fw.run_permit(CycleState(), p, "n1")
    status = await fw.wait_on_permit(p)
    assert status.is_rejected and "timeout" in status.message


@pytest.mark.parametrize(("nodes", "percentage", "want"), [
    (5, 0, 5), (99, 0, 99), (100, 0, 100), (500, 0, 230), (1000, 0, 420), (5000, 0, 500),
    (20000, 0, 1000), (500, 10, 100), (500, 100, 500), (500, 60, 300),
], ids=["tiny", "under-min", "min", "500-adaptive", "1000-adaptive", "5000-adaptive", "floor-5pct",
        "explicit-low-clamped", "all", "explicit"])
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, want: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == want


@pytest.mark.parametrize(("statuses", "kwargs", "want"), [
    ({"a": unresolvable("X", "node(s) had untolerated taint(s)"),
      "b": unschedulable("Y", "Insufficient cpu", "Insufficient memory"),
      "c": unresolvable("X", "node(s) had untolerated taint(s)")}, {},
     "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 2 node(s) had untolerated taint(s)."),
    ({"a": unresolvable("D", "cannot allocate all claims")}, {"post_filter_msg": "no new claims to deallocate"},
     "0/3 nodes are available: 1 cannot allocate all claims. no new claims to deallocate."),
    ({}, {"pre_filter_msg": "request gpu: device class x does not exist"},
     "0/3 nodes are available: request gpu: device class x does not exist."),
], ids=["histogram-sorted", "post-filter", "pre-filter"])
def test_fit_error_message(statuses: dict[str, Status], kwargs: dict[str, str], want: str) -> None:
    assert fit_error_message(3, statuses, **kwargs) == want
