"""NoExecute device taints: eviction times, the tainted-device view and DeviceTaintRule status
wording (``fakeapi.scheduler.rules.devicetaints``, ``controllers.devicetainteviction.rule_condition``)."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.controllers.devicetainteviction import rule_condition
from fakeapi.scheduler.rules.devicetaints import (
    Eviction,
    TaintedDevices,
    claim_eviction,
    rule_matches,
    taint_eviction_time,
)

T0 = "2026-01-01T00:00:00Z"
T0_SECONDS = 1767225600.0
TAINT = {"key": "maintenance", "value": "now", "effect": "NoExecute", "timeAdded": T0}


def toleration(effect: str | None = "NoExecute", seconds: int | None = None, key: str = "maintenance"
               ) -> dict[str, Any]:
    tol: dict[str, Any] = {"key": key, "operator": "Exists"}
    if effect is not None:
        tol["effect"] = effect
    if seconds is not None:
        tol["tolerationSeconds"] = seconds
    return tol


@pytest.mark.parametrize(("name", "tolerations", "expected"), [
    ("untolerated: at timeAdded", [], T0_SECONDS),
    ("tolerated for a while", [toleration(seconds=60)], T0_SECONDS + 60),
    ("the shortest of two", [toleration(seconds=60), toleration(seconds=10)], T0_SECONDS + 10),
    ("negative seconds count as zero", [toleration(seconds=-5)], T0_SECONDS),
    ("tolerated for ever", [toleration()], None),
    ("for ever wins over seconds", [toleration(seconds=10), toleration()], None),
    # Upstream's controller only reads NoExecute tolerations (the allocator honours any effect).
    ("an any-effect toleration does not delay", [toleration(effect=None)], T0_SECONDS),
    ("another key does not match", [toleration(key="other")], T0_SECONDS),
])
def test_taint_eviction_time(name: str, tolerations: list[dict[str, Any]], expected: float | None) -> None:
    assert taint_eviction_time(TAINT, tolerations) == expected


def test_a_taint_without_time_added_evicts_at_once() -> None:
    assert taint_eviction_time({"key": "k", "effect": "NoExecute"}, []) == 0.0


def slice_(name: str, *devices: dict[str, Any], pool: str = "pool", generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"driver": "drv", "pool": {"name": pool, "generation": generation},
                                                 "devices": list(devices)}}


def device(name: str, *taints: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "taints": list(taints)} if taints else {"name": name}


def rule(name: str, effect: str = "NoExecute", selector: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"taint": {**TAINT, "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def claim(*results: dict[str, Any]) -> dict[str, Any]:
    return {"status": {"allocation": {"devices": {"results": list(results)}}}}


def result(device_name: str, *tolerations: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = {"request": "req", "driver": "drv", "pool": "pool", "device": device_name}
    if tolerations:
        r["tolerations"] = list(tolerations)
    return r


def test_slice_changes_report_the_devices_whose_noexecute_taints_changed() -> None:
    view = TaintedDevices()
    assert view.set_slice(None, slice_("s", device("a"), device("b"))) == set()
    assert not view.any_no_execute
    tainted = slice_("s", device("a", TAINT), device("b", {**TAINT, "effect": "NoSchedule"}))
    assert view.set_slice(slice_("s", device("a"), device("b")), tainted) == {("drv", "pool", "a")}
    assert view.any_no_execute
    assert view.taints(("drv", "pool", "a")) == [(TAINT, None)]
    assert view.taints(("drv", "pool", "b")) == []  # NoSchedule evicts nothing
    assert view.set_slice(tainted, None) == {("drv", "pool", "a")}
    assert not view.any_no_execute


def test_only_the_newest_pool_generation_counts() -> None:
    view = TaintedDevices()
    old = slice_("old", device("a", TAINT), generation=1)
    view.set_slice(None, old)
    assert view.set_slice(None, slice_("new", device("a"), generation=2)) == {("drv", "pool", "a")}
    assert view.taints(("drv", "pool", "a")) == []
    assert sorted(view.published()) == [("drv", "pool", "a")]
    assert view.set_slice(slice_("new", device("a"), generation=2), None) == {("drv", "pool", "a")}


def test_rules_add_their_noexecute_taint_and_a_none_rule_can_be_simulated() -> None:
    view = TaintedDevices()
    view.set_slice(None, slice_("s", device("a"), device("b")))
    evicting, dry_run = rule("evict", selector={"device": "a"}), rule("dry", "None", selector={})
    view.set_rule(dry_run)
    assert not view.any_no_execute
    view.set_rule(evicting)
    assert view.any_no_execute
    assert [r["metadata"]["name"] for _, r in view.taints(("drv", "pool", "a"))] == ["evict"]
    simulated = view.taints(("drv", "pool", "b"), simulate=dry_run)
    assert [(t["effect"], r["metadata"]["name"]) for t, r in simulated] == [("NoExecute", "dry")]
    view.set_rule(rule("evict", "NoSchedule", selector={"device": "a"}))
    assert not view.any_no_execute
    assert view.taints(("drv", "pool", "a")) == []
    view.remove_rule("evict")
    view.remove_rule("never-added")
    assert not view.any_no_execute


@pytest.mark.parametrize(("selector", "matches"), [
    (None, False),  # no selector: no device (upstream)
    ({}, True),  # empty selector: every device
    ({"driver": "drv", "pool": "pool"}, True),
    ({"device": "other"}, False),
])
def test_rule_matches(selector: dict[str, Any] | None, matches: bool) -> None:
    assert rule_matches(rule("r", selector=selector), ("drv", "pool", "a")) is matches


def test_claim_eviction_is_the_earliest_taint_with_every_rule_as_reason() -> None:
    view = TaintedDevices()
    view.set_slice(None, slice_("s", device("a", TAINT), device("b")))
    view.set_rule(rule("late", selector={"device": "b"}))
    tolerated = claim(result("a", toleration(seconds=30)), result("b", toleration(seconds=90)))
    assert claim_eviction(tolerated, view.taints) == Eviction(T0_SECONDS + 30, frozenset({("late", "uid-late")}))
    forever = claim(result("a", toleration()), result("b", toleration()))
    assert claim_eviction(forever, view.taints) is None
    assert claim_eviction({"status": {}}, view.taints) is None


@pytest.mark.parametrize(("effect", "counts", "expected"), [
    ("NoExecute", {"pending_pods": 1, "pending_namespaces": 1},
     ("True", "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")),
    ("NoExecute", {"pending_pods": 3, "pending_namespaces": 2, "evicted": 1},
     ("True", "PodsPendingEviction", "3 pods need to be evicted in 2 different namespaces. "
                                     "1 pod evicted since starting the controller.")),
    ("NoExecute", {}, ("False", "NotStarted", "")),
    ("NoExecute", {"evicted": 2}, ("False", "Completed", "2 pods evicted since starting the controller.")),
    ("NoSchedule", {}, ("False", "OtherEffect", "Eviction only happens for the NoExecute effect.")),
    ("None", {"slice_devices": 1, "allocated_devices": 0, "pending_pods": 0, "pending_namespaces": 0},
     ("False", "NoEffect", "1 published device selected. 0 allocated devices selected. 0 pods would be evicted "
                           "in 0 different namespaces if the effect was NoExecute. This information will not be "
                           "updated again. Recreate the DeviceTaintRule to trigger an update.")),
])
def test_rule_condition_wording(effect: str, counts: dict[str, int], expected: tuple[str, str, str]) -> None:
    obj = rule("r", effect)
    obj["metadata"]["generation"] = 3
    condition = rule_condition(obj, **counts)
    assert (condition["status"], condition["reason"], condition["message"]) == expected
    assert (condition["type"], condition["observedGeneration"]) == ("EvictionInProgress", 3)
