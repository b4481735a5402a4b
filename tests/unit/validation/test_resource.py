"""resource.k8s.io/v1: one table per kind, valid objects first, then one invalid case per rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.config import FeatureGates
from fakeapi.errors import invalid_object
from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext
from tests.unit.validation.builders import causes, claim, exact, gpu_slice, validate

CLAIM = ("resource.k8s.io", "v1", "ResourceClaim")
TEMPLATE = ("resource.k8s.io", "v1", "ResourceClaimTemplate")
SLICE = ("resource.k8s.io", "v1", "ResourceSlice")
CLASS = ("resource.k8s.io", "v1", "DeviceClass")
RULE = ("resource.k8s.io", "v1", "DeviceTaintRule")
REQ = "spec.devices.requests"

CLAIM_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("empty-spec", claim(), []),
    ("one-gpu", claim(exact()), []),
    ("all-mode-with-selector", claim(exact(allocationMode="All", selectors=[
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "A100"'}}])), []),
    ("first-available", claim({"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com"},
        {"name": "small", "deviceClassName": "gpu.example.com", "count": 2}]},
        constraints=[{"requests": ["gpu/big"], "matchAttribute": "gpu.example.com/numa"}],
        config=[{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]), []),
    ("tolerations", claim(exact(tolerations=[{"key": "example.com/unhealthy", "operator": "Exists"}])), []),
    ("no-name", claim(exact(name="")), [("FieldValueRequired", f"{REQ}[0].name")]),
    ("bad-name", claim(exact(name="GPU")), [("FieldValueInvalid", f"{REQ}[0].name")]),
    ("duplicate-request", claim(exact(), exact()), [("FieldValueDuplicate", f"{REQ}[1]")]),
    ("too-many-requests", claim(*[exact(f"r{i}") for i in range(33)]), [("FieldValueTooMany", REQ)]),
    ("neither-exactly-nor-first", claim({"name": "gpu"}), [("FieldValueRequired", f"{REQ}[0]")]),
    ("both-exactly-and-first", claim({"name": "gpu", "exactly": {"deviceClassName": "c"},
                                      "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}),
     [("FieldValueInvalid", f"{REQ}[0]")]),
    ("too-many-subrequests", claim({"name": "gpu", "firstAvailable": [
        {"name": f"s{i}", "deviceClassName": "c"} for i in range(9)]}),
     [("FieldValueTooMany", f"{REQ}[0].firstAvailable")]),
    ("no-class", claim(exact(cls="")), [("FieldValueRequired", f"{REQ}[0].exactly.deviceClassName")]),
    ("zero-count", claim(exact(count=-1)), [("FieldValueInvalid", f"{REQ}[0].exactly.count")]),
    ("count-with-all", claim(exact(allocationMode="All", count=2)),
     [("FieldValueInvalid", f"{REQ}[0].exactly.count")]),
    ("bad-mode", claim(exact(allocationMode="Some")),
     [("FieldValueNotSupported", f"{REQ}[0].exactly.allocationMode")]),
    ("too-many-selectors", claim(exact(selectors=[{"cel": {"expression": "true"}}] * 33)),
     [("FieldValueTooMany", f"{REQ}[0].exactly.selectors")]),
    ("cel-syntax", claim(exact(selectors=[{"cel": {"expression": "device.driver =="}}])),
     [("FieldValueInvalid", f"{REQ}[0].exactly.selectors[0].cel.expression")]),
    ("cel-not-bool", claim(exact(selectors=[{"cel": {"expression": "1 + 2"}}])),
     [("FieldValueInvalid", f"{REQ}[0].exactly.selectors[0].cel.expression")]),
    ("selector-without-cel", claim(exact(selectors=[{}])),
     [("FieldValueRequired", f"{REQ}[0].exactly.selectors[0].cel")]),
    ("exists-with-value", claim(exact(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])),
     [("FieldValueInvalid", f"{REQ}[0].exactly.tolerations[0].value")]),
    ("constraint-unknown-request", claim(exact(), constraints=[{"requests": ["cpu"], "matchAttribute": "a.b/c"}]),
     [("FieldValueInvalid", "spec.devices.constraints[0].requests[0]")]),
    ("constraint-unqualified", claim(exact(), constraints=[{"matchAttribute": "numa"}]),
     [("FieldValueInvalid", "spec.devices.constraints[0].matchAttribute")]),
    ("constraint-without-attribute", claim(exact(), constraints=[{}]),
     [("FieldValueRequired", "spec.devices.constraints[0]")]),
    ("too-many-constraints", claim(exact(), constraints=[{"matchAttribute": "a.b/c"}] * 33),
     [("FieldValueTooMany", "spec.devices.constraints")]),
    ("config-without-opaque", claim(exact(), config=[{}]), [("FieldValueRequired", "spec.devices.config[0].opaque")]),
    ("config-bad-driver", claim(exact(), config=[{"opaque": {"driver": "Bad_Driver", "parameters": {}}}]),
     [("FieldValueInvalid", "spec.devices.config[0].opaque.driver")]),
    ("config-params-not-object", claim(exact(), config=[{"opaque": {"driver": "d.example.com", "parameters": [1]}}]),
     [("FieldValueInvalid", "spec.devices.config[0].opaque.parameters")]),
    ("bad-claim-name", claim(exact()) | {"metadata": {"name": "Claim_1", "namespace": "default"}},
     [("FieldValueInvalid", "metadata.name")]),
    ("no-namespace", claim(exact()) | {"metadata": {"name": "c"}}, [("FieldValueRequired", "metadata.namespace")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CLAIM_CASES], ids=[c[0] for c in CLAIM_CASES])
def test_claim(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert causes(validate(obj, CLAIM)) == expected


def test_claim_defaults() -> None:
    obj = claim(exact(tolerations=[{"key": "k"}]), {"name": "alt", "firstAvailable": [
        {"name": "a", "deviceClassName": "c"}, {"name": "b", "deviceClassName": "c", "allocationMode": "All"}]})
    STRATEGIES[CLAIM].default(obj, AdmissionContext())
    first, alt = obj["spec"]["devices"]["requests"]
    assert first["exactly"] | {"tolerations": None} == {"deviceClassName": "gpu.example.com",
                                                       "allocationMode": "ExactCount", "count": 1, "tolerations": None}
    assert first["exactly"]["tolerations"] == [{"key": "k", "operator": "Equal"}]
    assert alt["firstAvailable"] == [
        {"name": "a", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 1},
        {"name": "b", "deviceClassName": "c", "allocationMode": "All"}]


def test_invalid_object_message() -> None:
    errors = validate(claim(exact(cls="")), CLAIM)
    err = invalid_object("ResourceClaim", "resource.k8s.io", "claim", errors)
    assert err.code == 422 and err.reason == "Invalid"
    assert err.message == ('ResourceClaim.resource.k8s.io "claim" is invalid: '
                           "spec.devices.requests[0].exactly.deviceClassName: Required value")


@pytest.mark.parametrize(("labels", "expected"), [
    ({"resource.kubernetes.io/admin-access": "true"}, []),
    ({}, [("FieldValueForbidden", "spec")]),
], ids=["labelled-namespace", "unlabelled-namespace"])
def test_admin_access_needs_namespace_label(labels: dict[str, str], expected: list) -> None:
    ctx = AdmissionContext(namespace_labels=labels)
    assert causes(validate(claim(exact(adminAccess=True)), CLAIM, ctx)) == expected


def test_disabled_gates_drop_new_fields_unless_in_use() -> None:
    ctx = AdmissionContext(gates=FeatureGates(DRAAdminAccess=False, DRAPrioritizedList=False,
                                              DRADeviceTaints=False))
    obj = claim(exact(adminAccess=True, tolerations=[{"operator": "Exists"}]),
                {"name": "alt", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]})
    STRATEGIES[CLAIM].drop_disabled_fields(obj, None, ctx)
    assert obj["spec"]["devices"]["requests"] == [exact(), {"name": "alt"}]
    kept = claim(exact(adminAccess=True))
    STRATEGIES[CLAIM].drop_disabled_fields(kept, copy.deepcopy(kept), ctx)
    assert kept["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True


def test_claim_spec_is_immutable() -> None:
    old, new = claim(exact()), claim(exact(count=2))
    assert causes(STRATEGIES[CLAIM].validate_update(new, old, AdmissionContext())) == [("FieldValueInvalid", "spec")]


ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                                       "device": "gpu-0"}]}}
POD_REF = {"resource": "pods", "name": "p", "uid": "u1"}


def with_status(obj: dict[str, Any], deleting: bool = False, **status: Any) -> dict[str, Any]:
    obj = copy.deepcopy(obj) | {"status": status}
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return obj


STATUS_CASES = [
    ("allocate", {}, {"allocation": ALLOCATION}, False, []),
    ("allocate-and-reserve", {}, {"allocation": ALLOCATION, "reservedFor": [POD_REF]}, False, []),
    ("clear-allocation", {"allocation": ALLOCATION}, {}, False, []),
    ("remove-consumer-while-deleting", {"allocation": ALLOCATION, "reservedFor": [POD_REF]},
     {"allocation": ALLOCATION}, True, []),
    ("reserve-without-allocation", {}, {"reservedFor": [POD_REF]}, False,
     [("FieldValueForbidden", "status.reservedFor")]),
    ("change-allocation", {"allocation": ALLOCATION},
     {"allocation": {"devices": {"results": [ALLOCATION["devices"]["results"][0] | {"device": "gpu-1"}]}}},
     False, [("FieldValueInvalid", "status.allocation")]),
    ("add-consumer-while-deleting", {"allocation": ALLOCATION},
     {"allocation": ALLOCATION, "reservedFor": [POD_REF]}, True, [("FieldValueForbidden", "status.reservedFor")]),
    ("too-many-consumers", {}, {"allocation": ALLOCATION, "reservedFor": [
        POD_REF | {"uid": f"u{i}"} for i in range(257)]}, False, [("FieldValueTooMany", "status.reservedFor")]),
    ("consumer-without-uid", {}, {"allocation": ALLOCATION, "reservedFor": [{"resource": "pods", "name": "p"}]},
     False, [("FieldValueRequired", "status.reservedFor[0].uid")]),
    ("result-for-unknown-request", {}, {"allocation": {"devices": {"results": [
        ALLOCATION["devices"]["results"][0] | {"request": "cpu"}]}}}, False,
     [("FieldValueInvalid", "status.allocation.devices.results[0].request")]),
    ("device-status-not-allocated", {}, {"allocation": ALLOCATION, "devices": [
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9"}]}, False,
     [("FieldValueInvalid", "status.devices[0]")]),
]


@pytest.mark.parametrize(("old", "new", "deleting", "expected"), [c[1:] for c in STATUS_CASES],
                         ids=[c[0] for c in STATUS_CASES])
def test_claim_status_update(old: dict, new: dict, deleting: bool, expected: list) -> None:
    base = claim(exact())
    errors = STRATEGIES[CLAIM].validate_status_update(with_status(base, deleting, **new),
                                                      with_status(base, deleting, **old), AdmissionContext())
    assert causes(errors) == expected


def template(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "tpl", "namespace": "default"}, "spec": {"metadata": meta, "spec": spec}}


TEMPLATE_CASES = [
    ("kep-example", template(claim(exact())["spec"], labels={"app": "x"}), []),
    ("bad-request", template(claim({"name": "gpu"})["spec"]),
     [("FieldValueRequired", "spec.spec.devices.requests[0]")]),
    ("template-name", template(claim(exact())["spec"], name="x"), [("FieldValueForbidden", "spec.metadata.name")]),
    ("admin-access", template(claim(exact(adminAccess=True))["spec"]), [("FieldValueForbidden", "spec.spec")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in TEMPLATE_CASES], ids=[c[0] for c in TEMPLATE_CASES])
def test_template(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, TEMPLATE)) == expected


def test_template_spec_is_immutable_and_defaulted() -> None:
    obj = template(claim(exact())["spec"])
    STRATEGIES[TEMPLATE].default(obj, AdmissionContext())
    assert obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    changed = template(claim(exact(count=3))["spec"])
    assert causes(STRATEGIES[TEMPLATE].validate_update(changed, obj, AdmissionContext())) == [
        ("FieldValueInvalid", "spec")]


def spec_of(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    for key, value in changes.items():
        if value is None:
            obj["spec"].pop(key)
        else:
            obj["spec"][key] = value
    return obj


def tainted(n: int) -> dict[str, Any]:
    obj = gpu_slice(devices=n)
    for d in obj["spec"]["devices"]:
        d["taints"] = [{"key": "example.com/maintenance", "effect": "NoSchedule"}]
    return obj


def attrs(n: int) -> dict[str, Any]:
    obj = gpu_slice(devices=1)
    obj["spec"]["devices"][0]["attributes"] = {f"a{i}": {"int": i} for i in range(n)}
    obj["spec"]["devices"][0]["capacity"] = {}
    return obj


def device_change(**fields: Any) -> dict[str, Any]:
    obj = gpu_slice(devices=1)
    obj["spec"]["devices"][0].update(fields)
    return obj


COUNTERS = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}, "sms": {"value": "108"}}}]
SLICE_CASES = [
    ("gpu-node", gpu_slice(), []),
    ("128-devices", gpu_slice(devices=128), []),
    ("network-attached", spec_of(gpu_slice(), nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}), []),
    ("all-nodes", spec_of(gpu_slice(), nodeName=None, allNodes=True), []),
    ("shared-counters", spec_of(gpu_slice(), devices=None, sharedCounters=COUNTERS), []),
    ("partition", device_change(consumesCounters=[{"counterSet": "gpu-0-counters",
                                                   "counters": {"memory": {"value": "40Gi"}}}]), []),
    ("per-device-node", spec_of(device_change(nodeName="node-1"), nodeName=None, perDeviceNodeSelection=True), []),
    ("no-driver", spec_of(gpu_slice(), driver=""), [("FieldValueRequired", "spec.driver")]),
    ("bad-pool", spec_of(gpu_slice(), pool={"name": "Pool!", "generation": 0, "resourceSliceCount": 1}),
     [("FieldValueInvalid", "spec.pool.name")]),
    ("zero-slice-count", spec_of(gpu_slice(), pool={"name": "p", "generation": 0, "resourceSliceCount": 0}),
     [("FieldValueInvalid", "spec.pool.resourceSliceCount")]),
    ("no-node-selection", spec_of(gpu_slice(), nodeName=None), [("FieldValueRequired", "spec")]),
    ("two-node-selections", spec_of(gpu_slice(), allNodes=True), [("FieldValueInvalid", "spec")]),
    ("all-nodes-false", spec_of(gpu_slice(), nodeName=None, allNodes=False),
     [("FieldValueInvalid", "spec.allNodes"), ("FieldValueRequired", "spec")]),
    ("two-selector-terms", spec_of(gpu_slice(), nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}] * 2}),
     [("FieldValueInvalid", "spec.nodeSelector.nodeSelectorTerms")]),
    ("devices-and-counters", spec_of(gpu_slice(), sharedCounters=COUNTERS), [("FieldValueInvalid", "spec")]),
    ("129-devices", gpu_slice(devices=129), [("FieldValueTooMany", "spec.devices")]),
    ("65-tainted-devices", tainted(65), [("FieldValueTooMany", "spec.devices")]),
    ("duplicate-device", spec_of(gpu_slice(), devices=gpu_slice(devices=1)["spec"]["devices"] * 2),
     [("FieldValueDuplicate", "spec.devices[1]")]),
    ("33-attributes", attrs(33), [("FieldValueInvalid", "spec.devices[0]")]),
    ("attribute-two-values", device_change(attributes={"a": {"int": 1, "bool": True}}),
     [("FieldValueInvalid", "spec.devices[0].attributes[a]")]),
    ("attribute-bad-version", device_change(attributes={"v": {"version": "1.2"}}),
     [("FieldValueInvalid", "spec.devices[0].attributes[v].version")]),
    ("attribute-long-string", device_change(attributes={"s": {"string": "x" * 65}}),
     [("FieldValueTooLong", "spec.devices[0].attributes[s].string")]),
    ("attribute-bad-name", device_change(attributes={"1bad": {"int": 1}}),
     [("FieldValueInvalid", "spec.devices[0].attributes[1bad]")]),
    ("bad-taint-effect", device_change(taints=[{"key": "k", "effect": "Sometimes"}]),
     [("FieldValueNotSupported", "spec.devices[0].taints[0].effect")]),
    ("17-taints", device_change(taints=[{"key": f"k{i}", "effect": "None"} for i in range(17)]),
     [("FieldValueTooMany", "spec.devices[0].taints")]),
    ("3-counter-consumptions", device_change(consumesCounters=[
        {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(3)]),
     [("FieldValueTooMany", "spec.devices[0].consumesCounters")]),
    ("9-counter-sets", spec_of(gpu_slice(), devices=None, sharedCounters=[
        {"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(9)]),
     [("FieldValueTooMany", "spec.sharedCounters")]),
    ("device-node-without-mode", device_change(nodeName="node-1"), [("FieldValueInvalid", "spec.devices[0]")]),
    ("request-policy-single-allocation", device_change(capacity={"mem": {"value": "1Gi", "requestPolicy": {
        "default": "1Gi"}}}), [("FieldValueForbidden", "spec.devices[0].capacity[mem].requestPolicy")]),
    ("binding-conditions-alone", device_change(bindingConditions=["Ready"]),
     [("FieldValueInvalid", "spec.devices[0].bindingFailureConditions")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in SLICE_CASES], ids=[c[0] for c in SLICE_CASES])
def test_slice(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, SLICE)) == expected


@pytest.mark.parametrize(("change", "path"), [
    ({"driver": "other.example.com"}, "spec.driver"),
    ({"pool": {"name": "other", "generation": 2, "resourceSliceCount": 1}}, "spec.pool.name"),
    ({"nodeName": "node-2"}, "spec.nodeName"),
], ids=["driver", "pool-name", "node-name"])
def test_slice_immutable_fields(change: dict, path: str) -> None:
    old = gpu_slice()
    errors = STRATEGIES[SLICE].validate_update(spec_of(old, **change), old, AdmissionContext())
    assert causes(errors) == [("FieldValueInvalid", path)]


def test_slice_drops_partitionable_fields_when_gate_off() -> None:
    obj = spec_of(device_change(consumesCounters=[{"counterSet": "s", "counters": {"c": {"value": "1"}}}],
                                taints=[{"key": "k", "effect": "None"}]), )
    ctx = AdmissionContext(gates=FeatureGates(DRAPartitionableDevices=False, DRADeviceTaints=False))
    STRATEGIES[SLICE].drop_disabled_fields(obj, None, ctx)
    assert "consumesCounters" not in obj["spec"]["devices"][0] and "taints" not in obj["spec"]["devices"][0]


def device_class(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "gpu.example.com"}, "spec": spec}


CLASS_CASES = [
    ("selector", device_class(selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]), []),
    ("empty", device_class(), []),
    ("cel-error", device_class(selectors=[{"cel": {"expression": "device.driver ="}}]),
     [("FieldValueInvalid", "spec.selectors[0].cel.expression")]),
    ("too-many-selectors", device_class(selectors=[{"cel": {"expression": "true"}}] * 33),
     [("FieldValueTooMany", "spec.selectors")]),
    ("too-many-configs", device_class(config=[{"opaque": {"driver": "d.io", "parameters": {}}}] * 33),
     [("FieldValueTooMany", "spec.config")]),
    ("namespaced", device_class() | {"metadata": {"name": "c", "namespace": "default"}},
     [("FieldValueForbidden", "metadata.namespace")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CLASS_CASES], ids=[c[0] for c in CLASS_CASES])
def test_device_class(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, CLASS)) == expected


def rule(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "maintenance"},
            "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
                     "taint": {"key": "example.com/maintenance", "effect": "NoExecute"}} | spec}


RULE_CASES = [
    ("valid", rule(), []),
    ("no-effect", rule(taint={"key": "k"}), [("FieldValueRequired", "spec.taint.effect")]),
    ("bad-key", rule(taint={"key": "a/b/c", "effect": "None"}), [("FieldValueInvalid", "spec.taint.key")]),
    ("bad-device", rule(deviceSelector={"device": "GPU_0"}), [("FieldValueInvalid", "spec.deviceSelector.device")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_device_taint_rule(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, RULE)) == expected
