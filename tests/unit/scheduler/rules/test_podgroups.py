"""Pod-group instance resolution (both API shapes) and the KEP-5729 group-claim matching rule."""

import pytest
from fakeapi.scheduler.rules.podgroups import (
    GroupDeviceConstraint,
    PodGroupInstance,
    group_device_constraints,
    group_resource_claims,
    is_group_object,
    matching_group_claim,
    pod_group_instance,
    pod_group_keys,
)


def pod(name="p", uid="u-p", scheduling_group=None, workload_ref=None):
    spec = {}
    if scheduling_group:
        spec["schedulingGroup"] = {"podGroupName": scheduling_group}
    if workload_ref:
        spec["workloadRef"] = workload_ref
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": spec}


def claim_ref(name, template=None, claim=None):
    entry = {"name": name}
    if template:
        entry["resourceClaimTemplateName"] = template
    if claim:
        entry["resourceClaimName"] = claim
    return entry


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (pod(), None),
        (pod(scheduling_group="pg"), PodGroupInstance("ns", "pg")),
        (pod(workload_ref={"name": "w", "podGroup": "workers"}), PodGroupInstance("ns", "workers", "w")),
        (pod(workload_ref={"name": "w", "podGroup": "workers", "podGroupReplicaKey": "1"}),
         PodGroupInstance("ns", "workers", "w", "1")),
        (pod(workload_ref={"name": "w"}), None),
    ],
    ids=["no-group", "scheduling-group", "workload-ref", "workload-ref-replica", "incomplete-ref"],
)
def test_pod_group_instance(p, expected):
    assert pod_group_instance(p) == expected


def test_instance_keys_differ_per_replica_and_shape():
    keys = {
        PodGroupInstance("ns", "pg").key,
        PodGroupInstance("ns", "pg", "w").key,
        PodGroupInstance("ns", "pg", "w", "1").key,
        PodGroupInstance("other", "pg").key,
    }
    assert len(keys) == 4


GROUP_CLAIMS = [claim_ref("shared", claim="rc"), claim_ref("gpu", template="tmpl")]


@pytest.mark.parametrize(
    ("pod_claim", "is_group_claim"),
    [
        (claim_ref("shared", claim="rc"), True),
        (claim_ref("gpu", template="tmpl"), True),
        (claim_ref("other", claim="rc"), False),
        (claim_ref("shared", claim="rc2"), False),
        (claim_ref("gpu", template="other-tmpl"), False),
        (claim_ref("gpu", claim="tmpl"), False),
    ],
    ids=["by-name", "by-template", "other-entry-name", "other-claim", "other-template", "claim-vs-template"],
)
def test_matching_group_claim(pod_claim, is_group_claim):
    assert (matching_group_claim(pod_claim, GROUP_CLAIMS) is not None) == is_group_claim


def test_group_resource_claims_for_both_shapes():
    podgroup = {"metadata": {"name": "pg"}, "spec": {"resourceClaims": GROUP_CLAIMS}}
    workload = {"metadata": {"name": "w"}, "spec": {"podGroups": [
        {"name": "driver"}, {"name": "workers", "resourceClaims": GROUP_CLAIMS[:1]}]}}
    assert group_resource_claims(podgroup, PodGroupInstance("ns", "pg")) == GROUP_CLAIMS
    assert group_resource_claims(workload, PodGroupInstance("ns", "workers", "w")) == GROUP_CLAIMS[:1]
    assert group_resource_claims(workload, PodGroupInstance("ns", "driver", "w")) == []
    assert group_resource_claims(workload, PodGroupInstance("ns", "missing", "w")) == []


BLOCK = [{"matchAttribute": "gpu/blockName"}]


def test_template_entries_with_constraints_are_per_member_and_constrained():
    constrained = {**claim_ref("gpu", template="tmpl"), "constraints": BLOCK}
    by_name = {**claim_ref("shared", claim="rc"), "constraints": BLOCK}
    workload = {"metadata": {"name": "w"}, "spec": {"podGroups": [
        {"name": "workers", "resourceClaims": [constrained, by_name, claim_ref("plain", template="t2")]}]}}
    instance = PodGroupInstance("ns", "workers", "w", "r1")
    assert group_resource_claims(workload, instance) == [by_name, claim_ref("plain", template="t2")]
    assert matching_group_claim(claim_ref("gpu", template="tmpl"), group_resource_claims(workload, instance)) is None
    assert group_device_constraints(workload, instance) == [
        GroupDeviceConstraint(("gpu/blockName",), template="tmpl"),
        GroupDeviceConstraint(("gpu/blockName",), claim_name="rc")]


@pytest.mark.parametrize(
    ("constraint", "pod_claim", "covered"),
    [
        (GroupDeviceConstraint(("a/b",), template="tmpl"), claim_ref("any-name", template="tmpl"), True),
        (GroupDeviceConstraint(("a/b",), template="tmpl"), claim_ref("gpu", template="other"), False),
        (GroupDeviceConstraint(("a/b",), template="tmpl"), claim_ref("gpu", claim="tmpl"), False),
        (GroupDeviceConstraint(("a/b",), claim_name="rc"), claim_ref("x", claim="rc"), True),
    ],
    ids=["same-template-any-name", "other-template", "claim-named-like-template", "shared-claim-by-name"],
)
def test_group_device_constraint_covers(constraint, pod_claim, covered):
    assert constraint.covers(pod_claim) is covered


@pytest.mark.parametrize(
    ("p", "keys"),
    [
        (pod(), []),
        (pod(scheduling_group="pg"), ["ns/pg"]),
        (pod(workload_ref={"name": "w", "podGroup": "workers", "podGroupReplicaKey": "1"}), ["ns/w/workers/1"]),
    ],
    ids=["no-group", "podgroup", "workload-replica"],
)
def test_pod_group_keys(p, keys):
    assert pod_group_keys(p) == keys


def group_object(name, spec):
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": spec}


PG = PodGroupInstance("ns", "pg")
WL = PodGroupInstance("ns", "workers", "w", "r1")


@pytest.mark.parametrize(
    ("obj", "instance", "want"),
    [
        (group_object("pg", {"schedulingPolicy": {}}), PG, True),
        (group_object("other", {"schedulingPolicy": {}}), PG, False),
        ({**group_object("pg", {}), "metadata": {"name": "pg", "namespace": "other-ns"}}, PG, False),
        (group_object("w", {"podGroups": [{"name": "workers"}]}), WL, True),
        (group_object("pg", {"podGroups": []}), PG, False),
        (group_object("w", {}), WL, False),
        (None, PG, False),
    ],
    ids=["same-podgroup", "other-podgroup", "other-namespace", "same-workload", "workload-named-like-podgroup",
         "podgroup-named-like-workload", "none"],
)
def test_is_group_object(obj, instance, want):
    assert is_group_object(obj, instance) is want
