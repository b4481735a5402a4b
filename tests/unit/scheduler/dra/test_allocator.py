"""Allocator scenarios ported from upstream ``allocatortesting/allocator_testing.go`` (groups of
allocator-notes §3).  ``expect`` is the per-claim set of (request, driver, pool, device), None
for "does not fit", or an exception type plus message fragment."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from fakeapi.scheduler.dra.allocator import AllocationError, Features, GroupMatch, NodeAllocationError

from .builders import (
    CLASS_A,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    allocated,
    claim,
    device,
    device_class,
    first_available,
    label_selector,
    node,
    request,
    result,
    run,
    slice_,
    sub,
    summary,
    taint,
)

D1, D2, D3, D4 = (device(f"device-{i}") for i in range(1, 5))
BLOCK = "driver-a/block"
GI1 = D1.with_capacity(memory="1Gi")
GI2 = D2.with_capacity(memory="2Gi")
SMALL = 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'
LARGE = 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'


def r(req: str, dev: str, pool: str = POOL1, driver: str = DRIVER_A) -> tuple[str, str, str, str]:
    return (req, driver, pool, dev)


@dataclass
class Case:
    id: str
    slices: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    expect: Any  # list of per-claim lists, None, or (ExceptionType, fragment)
    kwargs: dict[str, Any] = field(default_factory=dict)


CASES = [
    # 1. simple placement
    Case("simple", [slice_("slice-1", D1)], [claim()], [[r("req-0", "device-1")]]),
    Case("other-node", [slice_("slice-1", D1, node=NODE2, pool=POOL2), slice_("slice-2", D1)], [claim()],
         [[r("req-0", "device-1", POOL2)]], {"on": node(NODE2)}),
    # 2. backtracking
    Case("small-and-large", [slice_("slice-1", GI1, GI2)],
         [claim("c", request("req-0", selectors=(SMALL,)), request("req-1", selectors=(LARGE,)))],
         [[r("req-0", "device-1"), r("req-1", "device-2")]]),
    Case("small-and-large-backtrack-requests", [slice_("slice-1", GI2.with_capacity(memory="2Gi"),
                                                        D1.with_capacity(memory="1Gi"))],
         [claim("c", request("req-0", selectors=(SMALL,)), request("req-1", selectors=(LARGE,)))],
         [[r("req-0", "device-1"), r("req-1", "device-2")]]),
    Case("small-and-large-backtrack-claims", [slice_("slice-1", GI2, GI1)],
         [claim("c0", request("req-0", selectors=(SMALL,))), claim("c1", request("req-1", selectors=(LARGE,)))],
         [[r("req-0", "device-1")], [r("req-1", "device-2")]]),
    # 3. devices split across slices/pools
    Case("devices-split-across-different-slices",
         [slice_("slice-1", D1, pool=POOL1), slice_("slice-2", D1, pool=POOL2)],
         [claim("c", request(count=2))], [[r("req-0", "device-1"), r("req-0", "device-1", POOL2)]]),
    # 4. pools: generations, duplicates
    Case("obsolete-slice", [slice_("slice-1", D1), slice_("slice-2", D1, generation=2, count=2)],
         [claim()], None),
    Case("duplicate-slice", [slice_("slice-1", D1, count=2), slice_("slice-2", D1, count=2)],
         [claim()], (NodeAllocationError, "invalid resource pools were encountered")),
    Case("newer-generation-replaces", [slice_("slice-1", D1), slice_("slice-2", D2, generation=2)],
         [claim()], [[r("req-0", "device-2")]]),
    # 5. nothing to allocate from
    Case("no-slices", [], [claim()], None),
    Case("not-enough-suitable-devices", [slice_("slice-1", D1)], [claim("c", request(count=2))], None),
    Case("already-allocated-devices", [slice_("slice-1", D1)], [claim()], None,
         {"allocated_claims": (allocated(claim("other"), result("req-0", "device-1")),)}),
    # 6. classes
    Case("no-classes", [slice_("slice-1", D1)], [claim()], (AllocationError, "could not retrieve device class"),
         {"classes": ()}),
    Case("unknown-class", [slice_("slice-1", D1)], [claim("c", request(cls="nope"))],
         (AllocationError, "could not retrieve device class nope")),
    Case("empty-class", [slice_("slice-1", D1)], [claim("c", request(cls=""))],
         (AllocationError, "missing device class name")),
    # 7-9. All mode
    Case("all-devices-single", [slice_("slice-1", D1)], [claim("c", request(mode="All"))],
         [[r("req-0", "device-1")]]),
    Case("all-devices-many", [slice_("slice-1", D1, D2), slice_("slice-2", D1, pool=POOL2)],
         [claim("c", request(mode="All"))],
         [[r("req-0", "device-1"), r("req-0", "device-1", POOL2), r("req-0", "device-2")]]),
    Case("all-devices-of-the-incomplete-pool", [slice_("slice-1", D1, count=2)],
         [claim("c", request(mode="All"))], (AllocationError, "is currently being updated")),
    Case("all-devices-plus-another", [slice_("slice-1", D1), slice_("slice-2", D1, driver=DRIVER_B)],
         [claim("c0", request(mode="All")), claim("c1", request(cls="class-b"))],
         [[r("req-0", "device-1")], [r("req-0", "device-1", driver=DRIVER_B)]]),
    Case("all-devices-plus-another-reversed", [slice_("slice-1", D1), slice_("slice-2", D1, driver=DRIVER_B)],
         [claim("c1", request(cls="class-b")), claim("c0", request(mode="All"))],
         [[r("req-0", "device-1", driver=DRIVER_B)], [r("req-0", "device-1")]]),
    Case("all-devices-no-solution", [slice_("slice-1", D1)],
         [claim("c0", request()), claim("c1", request(mode="All"))], None),
    Case("all-devices-no-solution-reversed", [slice_("slice-1", D1)],
         [claim("c1", request(mode="All")), claim("c0", request())], None),
    Case("all-devices-slice-without-devices", [slice_("slice-1")], [claim("c", request(mode="All"))], None),
    Case("all-devices-no-slices", [], [claim("c", request(mode="All"))], None),
    Case("all-devices-some-allocated", [slice_("slice-1", D1, D2)], [claim("c", request(mode="All"))], None,
         {"allocated_claims": (allocated(claim("other"), result("req-0", "device-1")),)}),
    # 10-12. admin access
    Case("all-devices-some-allocated-admin-access", [slice_("slice-1", D1, D2)],
         [claim("c", request(mode="All", admin=True))], [[r("req-0", "device-1"), r("req-0", "device-2")]],
         {"allocated_claims": (allocated(claim("other"), result("req-0", "device-1")),)}),
    Case("count-devices-some-allocated-admin-access", [slice_("slice-1", D1, D2)],
         [claim("c", request(count=2, admin=True))], [[r("req-0", "device-1"), r("req-0", "device-2")]],
         {"allocated_claims": (allocated(claim("other"), result("req-0", "device-1")),)}),
    Case("all-devices-some-allocating-admin-access", [slice_("slice-1", D1)],
         [claim("c", request("req-0"), request("req-1", mode="All", admin=True))], None),
    Case("separate-claims-share-device-admin-access", [slice_("slice-1", D1)],
         [claim("c0", request(admin=True)), claim("c1", request(admin=True))],
         [[r("req-0", "device-1")], [r("req-0", "device-1")]]),
    Case("admin-access-claims-device-allocating-for-non-admin-access", [slice_("slice-1", D1)],
         [claim("c0", request()), claim("c1", request(admin=True))],
         [[r("req-0", "device-1")], [r("req-0", "device-1")]]),
    Case("admin-access-disabled", [slice_("slice-1", D1)], [claim("c", request(admin=True))],
         (AllocationError, "admin access is requested, but the feature is disabled"),
         {"features": Features(admin_access=False)}),
    # 13-16. constraints
    *[
        Case(f"with-constraint-{kind}", [slice_("slice-1", D1.with_attr("attr", value), D2.with_attr("attr", value))],
             [claim("c", request(count=2), constraints=({"matchAttribute": "driver-a/attr"},))],
             [[r("req-0", "device-1"), r("req-0", "device-2")]])
        for kind, value in (("int", 1), ("version", ("1.0.0",)), ("string", "x"), ("bool", True))
    ],
    Case("with-constraint-non-existent-attribute", [slice_("slice-1", D1, D2)],
         [claim("c", request(count=2), constraints=({"matchAttribute": "driver-a/attr"},))], None),
    *[
        Case(f"with-constraint-not-matching-{kind}-attribute",
             [slice_("slice-1", D1.with_attr("attr", a), D2.with_attr("attr", b))],
             [claim("c", request(count=2), constraints=({"matchAttribute": "driver-a/attr"},))], None)
        for kind, a, b in (("int", 1, 2), ("string", "x", "y"), ("bool", True, False),
                           ("version", ("1.0.0",), ("2.0.0",)))
    ],
    Case("with-constraint-not-matching-int-attribute-all-devices",
         [slice_("slice-1", D1.with_attrs(attr=1), D2.with_attrs(attr=2))],
         [claim("c", request(mode="All"), constraints=({"matchAttribute": "driver-a/attr"},))],
         (AllocationError, "because a claim constraint would not be satisfied")),
    Case("with-constraint-for-request",
         [slice_("slice-1", D1.with_attrs(attr=1), D2.with_attrs(attr=2))],
         [claim("c", request("req-0"), request("req-1"),
                constraints=({"requests": ["req-0"], "matchAttribute": "driver-a/attr"},))],
         [[r("req-0", "device-1"), r("req-1", "device-2")]]),
    Case("with-constraint-for-request-retry",
         [slice_("slice-1", D1.with_attrs(attr=1), D2.with_attrs(attr=2), D3.with_attrs(attr=2))],
         [claim("c", request("req-0"), request("req-1", selectors=('device.attributes["driver-a"].attr == 2',)),
                constraints=({"matchAttribute": "driver-a/attr"},))],
         [[r("req-0", "device-2"), r("req-1", "device-3")]]),
    Case("with-distinct-constraints",
         [slice_("slice-1", *(device(f"device-{i}").with_attrs(attr=i) for i in range(1, 5)))],
         [claim("c", request(count=4), constraints=({"distinctAttribute": "driver-a/attr"},))],
         [[r("req-0", f"device-{i}") for i in range(1, 5)]]),
    Case("with-distinct-constraints-attribute-not-set", [slice_("slice-1", D1, D2)],
         [claim("c", request(count=2), constraints=({"distinctAttribute": "driver-a/attr"},))], None),
    Case("with-distinct-constraints-same-value", [slice_("slice-1", D1.with_attrs(a=1), D2.with_attrs(a=1))],
         [claim("c", request(count=2), constraints=({"distinctAttribute": "driver-a/a"},))], None),
    Case("with-distinct-constraints-unknown-type-attribute",
         [slice_("slice-1", D1.with_attr("attr", {"ints": [1]}))],
         [claim("c", request(), constraints=({"distinctAttribute": "driver-a/attr"},))],
         (AllocationError, "unsupported attribute value")),
    # 18. unknown API extensions and invalid CEL
    Case("unknown-selector", [slice_("slice-1", D1)],
         [claim("c", {"name": "req-0", "exactly": {"deviceClassName": "class-a", "selectors": [{"x": {}}]}})],
         (AllocationError, "CEL expression empty (unsupported selector type?)")),
    Case("unknown-allocation-mode", [slice_("slice-1", D1)], [claim("c", request(mode="Other"))],
         (AllocationError, "unsupported count mode Other")),
    Case("unknown-constraint", [slice_("slice-1", D1)], [claim("c", request(), constraints=({},))],
         (AllocationError, "empty constraint (unsupported constraint type?)")),
    Case("invalid-CEL-one-device", [slice_("slice-1", D1)], [claim("c", request(selectors=("noSuchVar",)))],
         (AllocationError, "undeclared reference")),
    Case("invalid-CEL-one-device-class", [slice_("slice-1", D1)], [claim()],
         (AllocationError, "undeclared reference"), {"classes": (device_class("class-a", None, "noSuchVar"),)}),
    Case("invalid-CEL-all-devices", [slice_("slice-1", D1)],
         [claim("c", request(mode="All", selectors=("noSuchVar",)))],
         (AllocationError, "undeclared reference")),
    Case("CEL-runtime-error", [slice_("slice-1", D1)],
         [claim("c", request(selectors=('device.attributes["driver-a"].missing == 1',)))],
         (AllocationError, "selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such key")),
    Case("CEL-unknown-domain-is-empty", [slice_("slice-1", D1)],
         [claim("c", request(selectors=('!("x" in device.attributes["other.example.com"])',)))],
         [[r("req-0", "device-1")]]),
    # 19. 32-device limit
    Case("too-many-devices-single-request", [slice_("slice-1", D1)], [claim("c", request(count=500))],
         (AllocationError, "number of requested devices 500 exceeds the claim limit of 32")),
    Case("too-many-devices-total", [slice_("slice-1", D1)],
         [claim("c", *(request(f"req-{i}") for i in range(33)))],
         (AllocationError, "exceeds the claim limit of 32")),
    Case("max-number-devices", [slice_("slice-1", *(device(f"device-{i}") for i in range(32)))],
         [claim("c", request(count=32))], [[r("req-0", f"device-{i}") for i in sorted(range(32), key=str)]]),
    # 20. network-attached devices
    Case("network-attached-device", [slice_("slice-1", D1, selector=label_selector("region", "region-1"))],
         [claim()], [[r("req-0", "device-1")]]),
    Case("unsuccessful-allocation-network-attached-device",
         [slice_("slice-1", D1, selector=label_selector("region", "region-2"))], [claim()], None),
    Case("all-nodes-device", [slice_("slice-1", D1, all_nodes=True)], [claim()], [[r("req-0", "device-1")]]),
    # 21-22. prioritized list
    Case("prioritized-list-first-unavailable", [slice_("slice-1", D1)],
         [claim("c", first_available("req-0", sub("subReq-0", cls="class-b"), sub("subReq-1")))],
         [[r("req-0/subReq-1", "device-1")]]),
    Case("prioritized-list-non-available", [slice_("slice-1", D1)],
         [claim("c", first_available("req-0", sub("subReq-0", cls="class-b"), sub("subReq-1", count=2)))], None),
    Case("prioritized-list-disabled", [slice_("slice-1", D1)],
         [claim("c", first_available("req-0", sub("subReq-0")))],
         (AllocationError, "has subrequests, but the DRAPrioritizedList feature is disabled"),
         {"features": Features(prioritized_list=False)}),
    Case("prioritized-list-too-many-in-first-subrequest", [slice_("slice-1", D1)],
         [claim("c", first_available("req-0", sub("subReq-0", count=500), sub("subReq-1")))],
         [[r("req-0/subReq-1", "device-1")]]),
    Case("prioritized-list-with-backtracking", [slice_("slice-1", D1, D2)],
         [claim("c", first_available("req-0", sub("subReq-0", count=2), sub("subReq-1")), request("req-1"))],
         [[r("req-0/subReq-1", "device-1"), r("req-1", "device-2")]]),
    Case("prioritized-list-with-constraints-ref-sub-request",
         [slice_("slice-1", D1.with_attrs(a=1), D2.with_attrs(a=2), D3.with_attrs(a=2))],
         [claim("c", first_available("req-0", sub("subReq-0"), sub("subReq-1")),
                request("req-1", selectors=('device.attributes["driver-a"].a == 2',)),
                constraints=({"requests": ["req-0/subReq-0", "req-1"], "matchAttribute": "driver-a/a"},))],
         [[r("req-0/subReq-0", "device-2"), r("req-1", "device-3")]]),
    Case("prioritized-list-allocation-mode-all", [slice_("slice-1", D1, D2)],
         [claim("c", first_available("req-0", sub("subReq-0", cls="class-b", mode="All"),
                                     sub("subReq-1", mode="All")))],
         [[r("req-0/subReq-1", "device-1"), r("req-0/subReq-1", "device-2")]]),
    Case("prioritized-list-max-allocation-limit",
         [slice_("slice-1", *(device(f"device-{i:02d}") for i in range(40)))],
         [claim("c", first_available("req-0", sub("a", count=32), sub("b", count=16)),
                first_available("req-1", sub("a", count=32), sub("b", count=16)))],
         [sorted([r("req-0/b", f"device-{i:02d}") for i in range(16)]
                 + [r("req-1/b", f"device-{i:02d}") for i in range(16, 32)])]),
    # 23-24. partitionable devices
    Case("partitionable-devices-multiple-devices",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=2),
          slice_("slice-2", device("d-4g").with_counters("gpu-0", memory="4Gi"),
                 device("d-6g").with_counters("gpu-0", memory="6Gi"),
                 device("d-4g-b").with_counters("gpu-0", memory="4Gi"), count=2)],
         [claim("c", request(count=2))], [[r("req-0", "d-4g"), r("req-0", "d-4g-b")]]),
    Case("partitionable-devices-no-capacity-available",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=2),
          slice_("slice-2", device("d-6g").with_counters("gpu-0", memory="6Gi"),
                 device("d-4g").with_counters("gpu-0", memory="4Gi"), count=2)],
         [claim("c", request(count=2))], None),
    Case("partitionable-devices-allocated-counters",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=2),
          slice_("slice-2", device("d-6g").with_counters("gpu-0", memory="6Gi"),
                 device("d-4g").with_counters("gpu-0", memory="4Gi"), count=2)],
         [claim()], None, {"allocated_claims": (allocated(claim("other"), result("req-0", "d-6g")),)}),
    Case("partitionable-devices-disabled",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=2),
          slice_("slice-2", device("d-4g").with_counters("gpu-0", memory="4Gi"), count=2)],
         [claim()], None, {"features": Features(partitionable=False)}),
    Case("partitionable-devices-unknown-counter-set",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=2),
          slice_("slice-2", device("d").with_counters("gpu-1", memory="4Gi"), count=2)],
         [claim()], (NodeAllocationError, "invalid resource pools")),
    Case("partitionable-devices-duplicate-counter-set",
         [slice_("slice-1", counters={"gpu-0": {"memory": "8Gi"}}, count=3),
          slice_("slice-3", counters={"gpu-0": {"memory": "8Gi"}}, count=3),
          slice_("slice-2", device("d").with_counters("gpu-0", memory="4Gi"), count=3)],
         [claim()], (NodeAllocationError, "invalid resource pools")),
    Case("partitionable-devices-per-device-node-selection-nodename",
         [slice_("slice-1", device("d-other").on_node(NODE2), device("d-mine").on_node(NODE1),
                 node=None, per_device=True)],
         [claim()], [[r("req-0", "d-mine")]]),
    Case("partitionable-devices-per-device-node-selector",
         [slice_("slice-1", device("d-other").on_selector(label_selector("region", "region-2")),
                 device("d-mine").on_selector(label_selector("region", "region-1")), node=None, per_device=True)],
         [claim()], [[r("req-0", "d-mine")]]),
    Case("multi-host-counters-on-other-node-consumed",
         [slice_("counters", counters={"cs": {"c": "1"}}, node=None, all_nodes=True, count=3),
          slice_("slice-n1", device("d1").with_counters("cs", c="1"), count=3),
          slice_("slice-n2", device("d2").with_counters("cs", c="1"), node=NODE2, count=3)],
         [claim()], None, {"allocated_claims": (allocated(claim("other"), result("req-0", "d2")),)}),
    # 25. taints
    Case("tainted-two-devices", [slice_("slice-1", D1.with_taints(taint()), D2.with_taints(taint()))],
         [claim()], None),
    Case("tainted-one-device-two-taints", [slice_("slice-1", D1.with_taints(taint(), taint("other")))],
         [claim("c", request(tolerations=({"key": "taint-key", "operator": "Exists"},)))], None),
    Case("tainted-all-devices-single", [slice_("slice-1", D1.with_taints(taint()))],
         [claim("c", request(mode="All"))], None),
    Case("tainted-admin-access", [slice_("slice-1", D1.with_taints(taint()))],
         [claim("c", request(admin=True))], None),
    Case("tainted-prioritized-list", [slice_("slice-1", D1.with_taints(taint()))],
         [claim("c", first_available("req-0", sub("subReq-0")))], None),
    Case("tainted-two-devices-tolerated",
         [slice_("slice-1", D1.with_taints(taint()), D2.with_taints(taint(effect="NoExecute")))],
         [claim("c", request(tolerations=({"key": "taint-key", "operator": "Equal", "value": "taint-value",
                                           "effect": "NoExecute"},)))],
         [[r("req-0", "device-2")]]),
    Case("tainted-no-effect", [slice_("slice-1", D1.with_taints(taint(effect="None")))], [claim()],
         [[r("req-0", "device-1")]]),
    Case("tainted-disabled", [slice_("slice-1", D1.with_taints(taint()))], [claim()], [[r("req-0", "device-1")]],
         {"features": Features(device_taints=False)}),
    Case("taint-rule", [slice_("slice-1", D1, D2)], [claim()], [[r("req-0", "device-2")]],
         {"rules": ({"metadata": {"name": "rule"}, "spec": {"deviceSelector": {"device": "device-1"},
                                                           "taint": taint()}},)}),
    # 26. binding conditions
    Case("binding-conditions-with-and-without", [slice_("slice-1", D1.with_binding("ready")),
                                                 slice_("slice-2", D2, pool=POOL2)],
         [claim()], [[r("req-0", "device-2", POOL2)]]),
    # 27. consumable capacity
    Case("consumable-capacity-disabled-feature", [slice_("slice-1", D1)],
         [claim("c", request(capacity={"memory": "1Gi"}))],
         (AllocationError, "has capacity requests, but the DRAConsumableCapacity feature is disabled"),
         {"features": Features(consumable_capacity=False)}),
    Case("consumable-capacity-shared-device-two-claims",
         [slice_("slice-1", D1.shared().with_capacity(memory="4Gi"))],
         [claim("c0", request(capacity={"memory": "1Gi"})), claim("c1", request(capacity={"memory": "3Gi"}))],
         [[r("req-0", "device-1")], [r("req-0", "device-1")]]),
    Case("consumable-capacity-default-full-capacity-blocks",
         [slice_("slice-1", D1.shared().with_capacity(memory="4Gi"))],
         [claim("c0", request()), claim("c1", request())], None),
    Case("consumable-capacity-over-remaining",
         [slice_("slice-1", D1.shared().with_capacity(memory="4Gi"))],
         [claim("c0", request(capacity={"memory": "3Gi"}))], None,
         {"allocated_claims": (allocated(claim("other"), result("req-0", "device-1", shareID="x",
                                                               consumedCapacity={"memory": "2Gi"})),)}),
    Case("consumable-capacity-dedicated-request-is-filter",
         [slice_("slice-1", D1.with_capacity(memory="1Gi"), D2.with_capacity(memory="4Gi"))],
         [claim("c", request(capacity={"memory": "2Gi"}))], [[r("req-0", "device-2")]]),
    # fakeapi's pod-group constraint: a matchAttribute spanning claims, possibly pinned
    Case("group-match-spans-claims", [slice_("slice-1", D1.with_attrs(block="a"), D2.with_attrs(block="b"),
                                             D3.with_attrs(block="a"))],
         [claim("c0"), claim("c1")], [[r("req-0", "device-1")], [r("req-0", "device-3")]],
         {"group_matches": (GroupMatch(BLOCK, frozenset({0, 1})),)}),
    Case("group-match-pinned", [slice_("slice-1", D1.with_attrs(block="a"), D2.with_attrs(block="b"))],
         [claim("c0")], [[r("req-0", "device-2")]],
         {"group_matches": (GroupMatch(BLOCK, frozenset({0}), ("string", "b")),)}),
    Case("group-match-pinned-exhausted", [slice_("slice-1", D1.with_attrs(block="a"), D2.with_attrs(block="b"))],
         [claim("c0", request(count=2))], None,
         {"group_matches": (GroupMatch(BLOCK, frozenset({0}), ("string", "b")),)}),
    Case("group-match-device-without-attribute", [slice_("slice-1", D1, D2.with_attrs(block="a"))],
         [claim("c0")], [[r("req-0", "device-2")]], {"group_matches": (GroupMatch(BLOCK, frozenset({0})),)}),
    Case("group-match-leaves-other-claims-alone", [slice_("slice-1", D1.with_attrs(block="a"),
                                                          D2.with_attrs(block="b"))],
         [claim("c0"), claim("c1")], [[r("req-0", "device-1")], [r("req-0", "device-2")]],
         {"group_matches": (GroupMatch(BLOCK, frozenset({0}), ("string", "a")),)}),
]


def _check(case: Case) -> None:
    inputs = copy.deepcopy((case.slices, case.claims))
    if isinstance(case.expect, tuple):
        error_type, fragment = case.expect
        with pytest.raises(error_type, match=fragment.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
            run(case.slices, case.claims, **case.kwargs)
    else:
        assert summary(run(case.slices, case.claims, **case.kwargs)) == \
            (None if case.expect is None else [sorted(c) for c in case.expect])
    assert (case.slices, case.claims) == inputs, "inputs must not be mutated"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocate(case: Case) -> None:
    _check(case)


def test_result_shape_node_local() -> None:
    out = run([slice_("slice-1", D1)], [claim()])
    assert out == [{"devices": {"results": [result("req-0", "device-1")]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]}}]


@pytest.mark.parametrize(
    ("slices", "expected"),
    [
        ([slice_("slice-1", D1, selector=label_selector("region", "region-1"))],
         {"nodeSelectorTerms": [{"matchExpressions": [
             {"key": "region", "operator": "In", "values": ["region-1"]}]}]}),
        ([slice_("slice-1", D1, all_nodes=True)], None),
        ([slice_("slice-1", D1, selector=label_selector("region", "region-1")),
          slice_("slice-2", D1, pool=POOL2, selector=label_selector("planet", "earth"))],
         {"nodeSelectorTerms": [{"matchExpressions": [
             {"key": "region", "operator": "In", "values": ["region-1"]},
             {"key": "planet", "operator": "In", "values": ["earth"]}]}]}),
        ([slice_("slice-1", D1, selector=label_selector("region", "region-1")), slice_("slice-2", D1, pool=POOL2)],
         {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]}),
        ([slice_("slice-1", D1.with_binding("ready", binds_to_node=True), all_nodes=True)],
         {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]}),
    ],
    ids=["network-attached", "all-nodes", "many-network-attached-merged", "local-and-network-attached",
         "binds-to-node"],
)
def test_result_node_selector(slices: list[dict[str, Any]], expected: dict[str, Any] | None) -> None:
    count = len(slices)
    out = run(slices, [claim("c", request(count=count))])
    assert out is not None
    assert out[0].get("nodeSelector") == expected


def test_config_layout_class_then_claim() -> None:
    cls = device_class("class-a", DRIVER_A, config=[{"driver": DRIVER_A, "parameters": {"c": 1}}])
    claim_cfg = ({"requests": ["req-1"], "opaque": {"driver": DRIVER_A, "parameters": {"r": 1}}},
                 {"opaque": {"driver": DRIVER_A, "parameters": {"all": 1}}})
    out = run([slice_("slice-1", D1, D2)], [claim("c", request("req-0"), request("req-1"), config=claim_cfg)],
              classes=(cls,))
    assert out is not None
    assert out[0]["devices"]["config"] == [
        {"source": "FromClass", "opaque": {"driver": DRIVER_A, "parameters": {"c": 1}}},
        {"source": "FromClaim", "requests": ["req-1"], "opaque": {"driver": DRIVER_A, "parameters": {"r": 1}}},
        {"source": "FromClaim", "opaque": {"driver": DRIVER_A, "parameters": {"all": 1}}},
    ]


def test_config_prioritized_list_only_chosen_subrequest() -> None:
    claim_cfg = ({"requests": ["req-0/subReq-0"], "opaque": {"driver": DRIVER_A, "parameters": {"s": 0}}},
                 {"requests": ["req-0/subReq-1"], "opaque": {"driver": DRIVER_A, "parameters": {"s": 1}}})
    out = run([slice_("slice-1", D1)], [claim("c", first_available(
        "req-0", sub("subReq-0", cls="class-b"), sub("subReq-1")), config=claim_cfg)])
    assert out is not None
    assert out[0]["devices"]["config"] == [
        {"source": "FromClaim", "opaque": {"driver": DRIVER_A, "parameters": {"s": 1}}}]


def test_tolerations_and_admin_echoed() -> None:
    toleration = {"key": "taint-key", "operator": "Exists"}
    out = run([slice_("slice-1", D1.with_taints(taint()))],
              [claim("c", request(admin=True, tolerations=(toleration,)))])
    assert out is not None
    assert out[0]["devices"]["results"] == [result("req-0", "device-1", adminAccess=True, tolerations=[toleration])]


@pytest.mark.parametrize(
    ("policy", "requested", "expected"),
    [
        ({"validRange": {"min": "2", "step": "2"}}, "1", "2"),
        ({"validRange": {"min": "2", "step": "2"}}, "3", "4"),
        ({"validValues": ["1", "5", "10"]}, "2", "5"),
        ({"default": "3", "validRange": {"min": "1"}}, None, "3"),
        (None, None, "10"),
    ],
    ids=["range-min", "range-step", "valid-values", "policy-default", "full-capacity"],
)
def test_shared_device_consumed_capacity(policy: dict[str, Any] | None, requested: str | None, expected: str) -> None:
    out = run([slice_("slice-1", D1.shared().with_capacity(policy=policy, bw="10"))],
              [claim("c", request(capacity={"bw": requested} if requested else None))])
    assert out is not None
    entry = out[0]["devices"]["results"][0]
    assert entry["consumedCapacity"] == {"bw": expected}
    assert len(entry["shareID"]) == 36


def test_shared_device_over_max_does_not_fit() -> None:
    policy = {"validRange": {"min": "1", "max": "4"}}
    assert run([slice_("slice-1", D1.shared().with_capacity(policy=policy, bw="10"))],
               [claim("c", request(capacity={"bw": "5"}))]) is None


def test_combinations_not_permutations() -> None:
    # 5 of 4 devices: no solution (the search walks combinations, so this ends quickly).
    index_slices = [slice_("slice-1", D1, D2, D3, D4)]
    assert run(index_slices, [claim("c", request(count=5))]) is None


def test_deadline_exceeded_is_error() -> None:
    with pytest.raises(AllocationError, match="timed out"):
        run([slice_("slice-1", D1)], [claim()], deadline=time.monotonic() - 1)


def test_in_flight_allocation_blocks_device() -> None:
    from fakeapi.scheduler.dra.allocator import AllocatedState, Allocator, DeviceIndex

    index = DeviceIndex(Features())
    index.set_slice(slice_("slice-1", D1))
    index.set_class(CLASS_A)
    state = AllocatedState()
    first = Allocator(index, state).allocate(node(), [claim("c0")])
    assert first is not None
    state.add_allocation(first[0])
    assert Allocator(index, state).allocate(node(), [claim("c1")]) is None
    state.remove_allocation(first[0])
    assert Allocator(index, state).allocate(node(), [claim("c1")]) is not None


def test_slice_update_invalidates_cached_pools() -> None:
    from fakeapi.scheduler.dra.allocator import AllocatedState, Allocator, DeviceIndex

    index = DeviceIndex(Features())
    index.set_class(CLASS_A)
    index.set_slice(slice_("slice-1", D1))
    assert summary(Allocator(index, AllocatedState()).allocate(node(), [claim()])) == [[r("req-0", "device-1")]]
    index.set_slice(slice_("slice-1", D2))
    assert summary(Allocator(index, AllocatedState()).allocate(node(), [claim()])) == [[r("req-0", "device-2")]]
    index.remove_slice("slice-1")
    assert Allocator(index, AllocatedState()).allocate(node(), [claim()]) is None
