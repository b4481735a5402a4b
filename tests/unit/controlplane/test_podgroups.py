"""Pod-group instance resolution (both API shapes) and the KEP-5729 group-claim matching rule."""

import pytest
from fakeapi.scheduler.podgroups import (
    PodGroupInstance,
    claim_allows_pod,
    consumer_ref,
    group_resource_claims,
    is_group_consumer,
    matching_group_claim,
    pod_group_instance,
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


def reserved(*refs):
    return {"status": {"reservedFor": list(refs)}}


PG_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg", "uid": "u-pg"}
WL_REF = {"apiGroup": "scheduling.k8s.io", "resource": "workloads", "name": "w", "uid": "u-w"}


@pytest.mark.parametrize(
    ("claim", "p", "allowed"),
    [
        (reserved({"resource": "pods", "name": "p", "uid": "u-p"}), pod(), True),
        (reserved({"resource": "pods", "name": "p", "uid": "old"}), pod(), False),
        (reserved(PG_REF), pod(scheduling_group="pg"), True),
        (reserved(PG_REF), pod(scheduling_group="other"), False),
        (reserved(PG_REF), pod(), False),
        (reserved(WL_REF), pod(workload_ref={"name": "w", "podGroup": "g"}), True),
        (reserved(WL_REF), pod(scheduling_group="w"), False),
        (reserved(), pod(), False),
    ],
    ids=["own-uid", "replaced-pod", "own-podgroup", "other-podgroup", "no-group", "own-workload",
         "workload-ref-vs-podgroup", "unreserved"],
)
def test_claim_allows_pod(claim, p, allowed):
    assert claim_allows_pod(claim, p) is allowed


def test_consumer_ref_round_trips():
    instance = PodGroupInstance("ns", "pg")
    ref = consumer_ref({"metadata": {"name": "pg", "uid": "u-pg"}}, instance)
    assert ref == PG_REF
    assert is_group_consumer(ref, instance)
