"""Pure ResourceClaim rules: claim names, generated claims, reservations, deallocation."""

import pytest
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER


def pod(name="pod", uid="pod-uid", claims=(), statuses=None, group=None, workload_ref=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "ns", "uid": uid},
         "spec": {"resourceClaims": list(claims)}, "status": {}}
    if statuses is not None:
        p["status"]["resourceClaimStatuses"] = statuses
    if group:
        p["spec"]["schedulingGroup"] = {"podGroupName": group}
    if workload_ref:
        p["spec"]["workloadRef"] = workload_ref
    return p


def claim(name="c", owner_uid=None, owner_kind="Pod", annotation=None, reserved=None, allocated=False,
          finalizer=False):
    meta = {"name": name, "namespace": "ns", "uid": f"{name}-uid", "annotations": {}}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1" if owner_kind == "Pod" else "scheduling.k8s.io/v1beta1",
                                    "kind": owner_kind, "name": "owner", "uid": owner_uid, "controller": True}]
    if annotation:
        meta["annotations"][rc.POD_CLAIM_NAME_ANNOTATION] = annotation
    if finalizer:
        meta["finalizers"] = [DELETE_PROTECTION_FINALIZER, "other"]
    status = {}
    if allocated:
        status["allocation"] = {"devices": {"results": []}}
    if reserved is not None:
        status["reservedFor"] = reserved
    return {"metadata": meta, "spec": {}, "status": status}


TEMPLATE_ENTRY = {"name": "gpu", "resourceClaimTemplateName": "tmpl"}
NAMED_ENTRY = {"name": "shared", "resourceClaimName": "rc-1"}


@pytest.mark.parametrize(
    ("p", "entry", "expected"),
    [
        (pod(), NAMED_ENTRY, ("rc-1", False)),
        (pod(statuses=[{"name": "gpu", "resourceClaimName": "pod-gpu-x"}]), TEMPLATE_ENTRY, ("pod-gpu-x", True)),
        (pod(statuses=[{"name": "gpu"}]), TEMPLATE_ENTRY, (None, True)),
    ],
    ids=["by-name", "generated", "not-needed"],
)
def test_pod_claim_name(p, entry, expected):
    assert rc.pod_claim_name(p, entry) == expected


def test_pod_claim_name_not_created_yet():
    with pytest.raises(rc.ClaimNotCreated):
        rc.pod_claim_name(pod(statuses=[{"name": "other", "resourceClaimName": "x"}]), TEMPLATE_ENTRY)


@pytest.mark.parametrize(
    ("owner", "entry", "expected"),
    [
        ("my-pod", "gpu", "my-pod-gpu-"),
        ("p" * 40, "c" * 15, "p" * 40 + "-" + "c" * 15 + "-"),  # exactly 57
        ("p" * 60, "gpu", "p" * 52 + "-" + "gp"),
        ("p" * 30, "c" * 30, "p" * 27 + "-" + "c" * 27),
    ],
    ids=["short", "at-limit", "long-owner", "both-long"],
)
def test_generate_name_truncates_proportionally(owner, entry, expected):
    name = rc.generate_name(owner, entry)
    assert name == expected
    assert len(name) <= 57


def test_new_claim_from_template():
    template = {"metadata": {"name": "tmpl"}, "spec": {
        "metadata": {"labels": {"app": "x"}, "annotations": {"note": "y"}},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}}
    body = rc.new_claim_from_template(template, pod(name="my-pod"), "gpu")
    assert body["metadata"]["generateName"] == "my-pod-gpu-"
    assert body["metadata"]["namespace"] == "ns"
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "pod-uid", "controller": True}]
    assert body["metadata"]["annotations"] == {"note": "y", rc.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert body["metadata"]["labels"] == {"app": "x"}
    assert body["spec"] == template["spec"]["spec"]
    body["spec"]["devices"]["requests"].clear()
    assert template["spec"]["spec"]["devices"]["requests"], "the template must not be aliased"


@pytest.mark.parametrize(
    ("claims", "found"),
    [
        ([claim("a", owner_uid="pod-uid", annotation="gpu")], "a"),
        ([claim("a", owner_uid="pod-uid", annotation="other")], None),
        ([claim("a", owner_uid="someone-else", annotation="gpu")], None),
        ([claim("a", owner_uid="pod-uid")], None),
    ],
    ids=["orphan", "other-entry", "other-owner", "not-generated"],
)
def test_find_generated_claim(claims, found):
    result = rc.find_generated_claim(claims, pod(), "gpu")
    assert (result["metadata"]["name"] if result else None) == found


@pytest.mark.parametrize(
    ("p", "keys"),
    [
        (pod(), []),
        (pod(claims=[NAMED_ENTRY]), ["ns/rc-1"]),
        (pod(claims=[TEMPLATE_ENTRY, NAMED_ENTRY], statuses=[{"name": "gpu", "resourceClaimName": "pod-gpu-x"}]),
         ["ns/pod-gpu-x", "ns/rc-1"]),
        (pod(claims=[TEMPLATE_ENTRY, NAMED_ENTRY]), ["ns/rc-1"]),
        (pod(claims=[TEMPLATE_ENTRY], statuses=[{"name": "gpu"}]), []),
        (pod(claims=[{"name": "odd"}]), []),
    ],
    ids=["no-claims", "by-name", "generated-and-by-name", "not-created-yet", "not-needed", "unsupported-source"],
)
def test_pod_claim_keys(p, keys):
    assert rc.pod_claim_keys(p) == keys


POD_REF = {"resource": "pods", "name": "pod", "uid": "pod-uid"}
PG_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg", "uid": "u-pg"}
WL_REF = {"apiGroup": "scheduling.k8s.io", "resource": "workloads", "name": "w", "uid": "u-w"}
PG = PodGroupInstance("ns", "pg")
WL = PodGroupInstance("ns", "g", "w")


@pytest.mark.parametrize(
    ("c", "valid", "allocated_after"),
    [
        (claim(reserved=[POD_REF, POD_REF], allocated=True, finalizer=True), [POD_REF], True),
        (claim(reserved=[POD_REF], allocated=True, finalizer=True), [], False),
        (claim(reserved=[POD_REF], allocated=True), [], True),
    ],
    ids=["some-left", "none-left-deallocates", "no-finalizer-keeps-allocation"],
)
def test_with_reservations(c, valid, allocated_after):
    updated = rc.with_reservations(c, valid)
    assert rc.reserved_for(updated) == valid
    assert rc.is_allocated(updated) is allocated_after
    assert rc.is_allocated(c), "the input must not be modified"


def test_without_delete_protection_keeps_other_finalizers():
    c = claim(finalizer=True)
    assert rc.without_delete_protection(c)["metadata"]["finalizers"] == ["other"]
    assert rc.has_delete_protection(c)


def test_can_be_reserved_limit():
    assert rc.can_be_reserved(claim(reserved=[POD_REF] * 255))
    assert not rc.can_be_reserved(claim(reserved=[POD_REF] * 256))


def test_controlling_pod_ignores_podgroup_owner():
    assert rc.controlling_pod(claim(owner_uid="u")) == ("owner", "u")
    assert rc.controlling_pod(claim(owner_uid="u", owner_kind="PodGroup")) is None


def test_merged_claim_statuses():
    current = [{"name": "a", "resourceClaimName": "old"}, {"name": "b"}]
    assert rc.merged_claim_statuses(current, {"a": "new", "c": "gen"}) == [
        {"name": "a", "resourceClaimName": "new"}, {"name": "b"}, {"name": "c", "resourceClaimName": "gen"}]


def test_needs_admin_access():
    tmpl = {"spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"adminAccess": True}}]}}}}
    assert rc.needs_admin_access(tmpl)
    assert not rc.needs_admin_access({"spec": {"spec": {}}})


@pytest.mark.parametrize(
    ("old", "new", "freed"),
    [
        (claim(allocated=True), claim(), True),
        (claim(allocated=True), None, True),
        (claim(allocated=True), claim(allocated=True), False),
        (claim(), claim(allocated=True), False),
        (None, claim(allocated=True), False),
        (claim(), None, False),
    ],
    ids=["deallocated", "allocated-claim-deleted", "still-allocated", "allocated", "added", "unallocated-deleted"],
)
def test_is_deallocation(old, new, freed):
    assert rc.is_deallocation(old, new) is freed


def test_consumer_refs():
    assert rc.pod_consumer_ref(pod()) == POD_REF
    assert rc.group_consumer_ref({"metadata": {"name": "pg", "uid": "u-pg"}}, PG) == PG_REF
    assert rc.group_consumer_ref({"metadata": {"name": "w", "uid": "u-w"}}, WL) == WL_REF
    assert rc.is_group_consumer(PG_REF, PG) and rc.is_group_consumer(WL_REF, WL)
    assert not rc.is_group_consumer(PG_REF, None)


@pytest.mark.parametrize(
    ("c", "consumer", "instance", "reserved"),
    [
        (claim(reserved=[POD_REF]), POD_REF, None, True),
        (claim(reserved=[{**POD_REF, "uid": "old"}]), POD_REF, None, False),
        (claim(reserved=[PG_REF]), POD_REF, PG, False),
        (claim(reserved=[PG_REF]), PG_REF, PG, True),
        (claim(reserved=[{**PG_REF, "uid": "recreated"}]), PG_REF, PG, True),
        (claim(reserved=[POD_REF]), PG_REF, PG, False),
        (claim(reserved=[PG_REF]), WL_REF, WL, False),
        (claim(), POD_REF, None, False),
    ],
    ids=["pod", "replaced-pod", "group-not-pod", "group", "group-by-name-only", "pod-not-group",
         "podgroup-not-workload", "unreserved"],
)
def test_is_reserved_for(c, consumer, instance, reserved):
    assert rc.is_reserved_for(c, consumer, instance) is reserved


@pytest.mark.parametrize(
    ("c", "p", "allowed"),
    [
        (claim(reserved=[POD_REF]), pod(), True),
        (claim(reserved=[{**POD_REF, "uid": "old"}]), pod(), False),
        (claim(reserved=[{**POD_REF, "apiGroup": "example.com"}]), pod(), False),
        (claim(reserved=[PG_REF]), pod(group="pg"), True),
        (claim(reserved=[PG_REF]), pod(group="other"), False),
        (claim(reserved=[PG_REF]), pod(), False),
        (claim(reserved=[WL_REF]), pod(workload_ref={"name": "w", "podGroup": "g"}), True),
        (claim(reserved=[WL_REF]), pod(group="w"), False),
        (claim(), pod(), False),
    ],
    ids=["own-uid", "replaced-pod", "other-api-group", "own-podgroup", "other-podgroup", "no-group",
         "own-workload", "workload-ref-vs-podgroup", "unreserved"],
)
def test_claim_allows_pod(c, p, allowed):
    assert rc.claim_allows_pod(c, p) is allowed


def _allocation(*devices):
    return {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": d} for d in devices]}}


def _with(c, allocation):
    c["status"]["allocation"] = allocation
    return c


@pytest.mark.parametrize(
    ("c", "allocation", "written"),
    [
        (_with(claim(reserved=[POD_REF]), _allocation("gpu-0")), _allocation("gpu-0"), True),
        (_with(claim(reserved=[POD_REF]), _allocation("gpu-1", "gpu-0")), _allocation("gpu-0", "gpu-1"), True),
        (_with(claim(reserved=[POD_REF]), _allocation("gpu-1")), _allocation("gpu-0"), False),
        (claim(reserved=[POD_REF]), _allocation("gpu-0"), False),
        (_with(claim(reserved=[]), _allocation("gpu-0")), _allocation("gpu-0"), False),
        (_with(claim(reserved=[{**POD_REF, "uid": "old"}]), _allocation("gpu-0")), _allocation("gpu-0"), False),
        (claim(reserved=[PG_REF, POD_REF]), None, True),
        (claim(reserved=[PG_REF]), None, False),
    ],
    ids=["ours", "same-devices-any-order", "other-devices", "reserved-not-allocated", "allocated-not-reserved",
         "replaced-pod", "reservation-only", "reservation-missing"],
)
def test_is_written(c, allocation, written):
    assert rc.is_written(c, allocation, POD_REF) is written
