"""scheduling.k8s.io: PodGroup and Workload (v1beta1) and the v1alpha1 draft Workload."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.config import FeatureGates
from fakeapi.machinery.finalizers import PODGROUP_PROTECTION_FINALIZER
from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext
from tests.unit.validation.builders import causes, validate

PODGROUP = ("scheduling.k8s.io", "v1beta1", "PodGroup")
WORKLOAD = ("scheduling.k8s.io", "v1beta1", "Workload")
WORKLOAD_ALPHA = ("scheduling.k8s.io", "v1alpha1", "Workload")
GANG = {"gang": {"minCount": 2}}
CLAIM_REF = {"name": "shared-gpu", "resourceClaimTemplateName": "gpu-template"}


def pod_group(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "group-1", "namespace": "default"},
            "spec": {"schedulingPolicy": GANG, "resourceClaims": [CLAIM_REF]} | spec}


def claims(n: int) -> list[dict[str, Any]]:
    return [{"name": f"c{i}", "resourceClaimName": f"claim-{i}"} for i in range(n)]


PODGROUP_CASES = [
    ("kep-5729-example", pod_group(workloadRef={"workloadName": "job-1", "templateName": "workers"}), []),
    ("basic", pod_group(schedulingPolicy={"basic": {}}, resourceClaims=None), []),
    # 1.36+ words unions and a zero minCount as declarative validation does.
    ("no-policy", pod_group(schedulingPolicy=None), [("FieldValueInvalid", "spec.schedulingPolicy")]),
    ("both-policies", pod_group(schedulingPolicy={"basic": {}, **GANG}),
     [("FieldValueInvalid", "spec.schedulingPolicy")]),
    ("min-count-zero", pod_group(schedulingPolicy={"gang": {"minCount": 0}}),
     [("FieldValueRequired", "spec.schedulingPolicy.gang.minCount")]),
    ("min-count-negative", pod_group(schedulingPolicy={"gang": {"minCount": -1}}),
     [("FieldValueInvalid", "spec.schedulingPolicy.gang.minCount")]),
    ("five-claims", pod_group(resourceClaims=claims(5)), [("FieldValueTooMany", "spec.resourceClaims")]),
    ("claim-without-source", pod_group(resourceClaims=[{"name": "x"}]),
     [("FieldValueInvalid", "spec.resourceClaims[0]")]),
    ("claim-two-sources", pod_group(resourceClaims=[CLAIM_REF | {"resourceClaimName": "y"}]),
     [("FieldValueInvalid", "spec.resourceClaims[0]")]),
    ("duplicate-claims", pod_group(resourceClaims=[CLAIM_REF, CLAIM_REF]),
     [("FieldValueDuplicate", "spec.resourceClaims[1]")]),
    ("bad-template-name", pod_group(workloadRef={"workloadName": "job-1", "templateName": "Workers"}),
     [("FieldValueInvalid", "spec.workloadRef.templateName")]),
    ("two-topology", pod_group(schedulingConstraints={"topology": [{"key": "zone"}, {"key": "rack"}]}),
     [("FieldValueTooMany", "spec.schedulingConstraints.topology")]),
    ("both-disruption-modes", pod_group(disruptionMode={"single": {}, "all": {}}),
     [("FieldValueInvalid", "spec.disruptionMode")]),
]


def without_none(spec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if v is not None}


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in PODGROUP_CASES], ids=[c[0] for c in PODGROUP_CASES])
def test_pod_group(obj: dict[str, Any], expected: list) -> None:
    obj["spec"] = without_none(obj["spec"])
    assert causes(validate(obj, PODGROUP)) == expected


def test_pod_group_defaults_and_finalizer() -> None:
    obj, strategy, ctx = pod_group(), STRATEGIES[PODGROUP], AdmissionContext()
    strategy.default(obj, ctx)
    strategy.admit(obj, None, ctx)
    assert obj["spec"]["disruptionMode"] == {"single": {}}
    assert obj["metadata"]["finalizers"] == [PODGROUP_PROTECTION_FINALIZER]
    off = pod_group()
    strategy.admit(off, None, AdmissionContext(gates=FeatureGates(GenericWorkload=False)))
    assert "finalizers" not in off["metadata"]


def test_pod_group_claims_dropped_when_gate_off() -> None:
    ctx = AdmissionContext(gates=FeatureGates(DRAWorkloadResourceClaims=False))
    obj = pod_group() | {"status": {"resourceClaimStatuses": [{"name": "shared-gpu"}]}}
    STRATEGIES[PODGROUP].drop_disabled_fields(obj, None, ctx)
    assert "resourceClaims" not in obj["spec"] and "resourceClaimStatuses" not in obj["status"]
    in_use = pod_group()
    STRATEGIES[PODGROUP].drop_disabled_fields(in_use, pod_group(), ctx)
    assert in_use["spec"]["resourceClaims"] == [CLAIM_REF]


@pytest.mark.parametrize(("change", "expected"), [
    ({"schedulingPolicy": {"gang": {"minCount": 5}}}, []),
    ({"resourceClaims": []}, [("FieldValueInvalid", "spec.resourceClaims")]),
    ({"schedulingPolicy": {"basic": {}}}, [("FieldValueInvalid", "spec.schedulingPolicy.basic"),
                                           ("FieldValueInvalid", "spec.schedulingPolicy.gang")]),
    ({"priority": 5}, [("FieldValueInvalid", "spec.priority")]),
], ids=["min-count-mutable", "claims-immutable", "policy-kind-immutable", "priority-immutable"])
def test_pod_group_update(change: dict, expected: list) -> None:
    old = pod_group()
    new = copy.deepcopy(old)
    new["spec"].update(change)
    assert causes(STRATEGIES[PODGROUP].validate_update(new, old, AdmissionContext())) == expected


@pytest.mark.parametrize(("statuses", "expected"), [
    ([{"name": "shared-gpu", "resourceClaimName": "group-1-shared-gpu-abcde"}], []),
    ([{"name": "other"}], [("FieldValueInvalid", "status.resourceClaimStatuses[0].name")]),
], ids=["matching-name", "unknown-name"])
def test_pod_group_status(statuses: list, expected: list) -> None:
    new = pod_group() | {"status": {"resourceClaimStatuses": statuses}}
    assert causes(STRATEGIES[PODGROUP].validate_status_update(new, pod_group(), AdmissionContext())) == expected


def workload(*templates: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "job-1", "namespace": "default"},
            "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job-1"},
                     "podGroupTemplates": list(templates)}}


def tpl(name: str = "workers", **fields: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": GANG} | fields


WORKLOAD_CASES = [
    ("with-claims", workload(tpl(resourceClaims=[CLAIM_REF]), tpl("driver", schedulingPolicy={"basic": {}})), []),
    ("no-templates", workload(), [("FieldValueRequired", "spec.podGroupTemplates")]),
    ("nine-templates", workload(*[tpl(f"t{i}") for i in range(9)]), [("FieldValueTooMany", "spec.podGroupTemplates")]),
    ("duplicate-template", workload(tpl(), tpl()), [("FieldValueDuplicate", "spec.podGroupTemplates[1]")]),
    ("template-claims", workload(tpl(resourceClaims=claims(5))),
     [("FieldValueTooMany", "spec.podGroupTemplates[0].resourceClaims")]),
    ("controller-without-kind", workload(tpl()) | {"spec": {"controllerRef": {"name": "x"},
                                                             "podGroupTemplates": [tpl()]}},
     [("FieldValueRequired", "spec.controllerRef.kind")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in WORKLOAD_CASES], ids=[c[0] for c in WORKLOAD_CASES])
def test_workload(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, WORKLOAD)) == expected


def test_workload_templates_immutable() -> None:
    old, new = workload(tpl()), workload(tpl(), tpl("more"))
    assert causes(STRATEGIES[WORKLOAD].validate_update(new, old, AdmissionContext())) == [
        ("FieldValueInvalid", "spec.podGroupTemplates")]


def alpha(*groups: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "job-1", "namespace": "default"}, "spec": {"podGroups": list(groups)}}


def group(name: str = "workers", **fields: Any) -> dict[str, Any]:
    return {"name": name, "policy": GANG} | fields


ALPHA_CASES = [
    ("kep-draft", alpha(group(resourceClaims=[CLAIM_REF | {"constraints": [
        {"matchAttribute": "gpu.example.com/nvlinkDomain"}]}])), []),
    ("basic", alpha(group(policy={"basic": {}})), []),
    ("no-groups", alpha(), [("FieldValueRequired", "spec.podGroups")]),
    ("nine-groups", alpha(*[group(f"g{i}") for i in range(9)]), [("FieldValueTooMany", "spec.podGroups")]),
    ("min-count", alpha(group(policy={"gang": {"minCount": 0}})),
     [("FieldValueInvalid", "spec.podGroups[0].policy.gang.minCount")]),
    ("claim-two-sources", alpha(group(resourceClaims=[CLAIM_REF | {"resourceClaimName": "x"}])),
     [("FieldValueInvalid", "spec.podGroups[0].resourceClaims[0]")]),
    ("unqualified-match", alpha(group(resourceClaims=[CLAIM_REF | {"constraints": [{"matchAttribute": "numa"}]}])),
     [("FieldValueInvalid", "spec.podGroups[0].resourceClaims[0].constraints[0].matchAttribute")]),
    ("empty-constraint", alpha(group(resourceClaims=[CLAIM_REF | {"constraints": [{}]}])),
     [("FieldValueRequired", "spec.podGroups[0].resourceClaims[0].constraints[0].matchAttribute")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in ALPHA_CASES], ids=[c[0] for c in ALPHA_CASES])
def test_alpha_workload(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, WORKLOAD_ALPHA)) == expected


def test_alpha_workload_groups_immutable_and_gated() -> None:
    old = alpha(group())
    new = alpha(group(policy={"gang": {"minCount": 3}}))
    assert causes(STRATEGIES[WORKLOAD_ALPHA].validate_update(new, old, AdmissionContext())) == [
        ("FieldValueInvalid", "spec.podGroups")]
    gated = alpha(group(resourceClaims=[CLAIM_REF]))
    STRATEGIES[WORKLOAD_ALPHA].drop_disabled_fields(
        gated, None, AdmissionContext(gates=FeatureGates(DRAWorkloadResourceClaims=False)))
    assert gated["spec"]["podGroups"] == [group()]
