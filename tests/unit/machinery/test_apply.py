"""Server-side apply: ownership, pruning, conflicts, what an applier owns."""

from __future__ import annotations

import copy

import pytest

from fakeapi.machinery.apply import ApplyConflict, fields_of, server_side_apply
from fakeapi.machinery.patch import PatchError
from tests.unit.machinery.ssa_builders import (
    C_KEY,
    CLAIM,
    POD,
    apply,
    container,
    managers,
    owned,
    pod,
    update,
    with_image,
    without_managed_fields,
)

# --- fields_of ----------------------------------------------------------------------------------

FIELDS = [
    ("labels-are-leaves", {"metadata": {"name": "p", "uid": "u", "labels": {"app": "x"}}},
     POD, {"f:metadata": {"f:labels": {"f:app": {}}}}),
    ("list-map-items-own-themselves", pod(container("c", image="i")), POD,
     {"f:spec": {"f:containers": {C_KEY: {".": {}, "f:image": {}, "f:name": {}}}}}),
    ("defaulted-key", pod(container("c", ports=[{"containerPort": 80}])), POD,
     {"f:spec": {"f:containers": {C_KEY: {".": {}, "f:name": {}, "f:ports": {
         'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}}}}),
    ("sets-and-atomic-lists", {"metadata": {"finalizers": ["f1"]}, "spec": {"tolerations": [{"key": "k"}]}}, POD,
     {"f:metadata": {"f:finalizers": {'v:"f1"': {}}}, "f:spec": {"f:tolerations": {}}}),
    ("empty-objects-and-lists", {"spec": {"securityContext": {}, "volumes": [], "tolerations": []}}, POD,
     {"f:spec": {"f:securityContext": {}, "f:tolerations": {}}}),
    ("multi-key-sorted", {"status": {"devices": [{"driver": "d", "pool": "p", "device": "g0"}]}}, CLAIM,
     {"f:status": {"f:devices": {'k:{"device":"g0","driver":"d","pool":"p"}': {
         ".": {}, "f:device": {}, "f:driver": {}, "f:pool": {}}}}}),
    ("server-fields-never-owned",
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n", "uid": "u",
                                                      "resourceVersion": "1", "generation": 1,
                                                      "creationTimestamp": "T", "managedFields": [{}]}},
     POD, {}),
]


@pytest.mark.parametrize(("obj", "types", "expected"), [case[1:] for case in FIELDS], ids=[c[0] for c in FIELDS])
def test_fields_of(obj: dict, types, expected: dict) -> None:
    fields = fields_of(obj, types)
    assert {name: value for name, value in fields.items() if name not in ("f:apiVersion", "f:kind")} == expected


# --- apply --------------------------------------------------------------------------------------

def test_apply_creates_the_object_with_an_apply_entry() -> None:
    config = pod(container("c", image="i"), labels={"app": "x"})
    created = apply(None, config, "kubectl", now="2026-01-01T00:00:00Z")
    assert without_managed_fields(created) == config
    assert created["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
                     "f:spec": {"f:containers": {C_KEY: {".": {}, "f:image": {}, "f:name": {}}}}},
    }]


def test_reapply_removes_dropped_fields_but_keeps_others() -> None:
    live = apply(None, pod(container("c", image="i", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                           container("d", image="j"), labels={"app": "x", "tier": "t"}))
    live = update(live, {**live, "metadata": {**live["metadata"], "annotations": {"note": "n"}}})
    unowned = copy.deepcopy(live)
    unowned["spec"]["dnsPolicy"] = "ClusterFirst"  # a defaulted field nobody owns
    reapplied = apply(unowned, pod(container("c", image="i", env=[{"name": "A", "value": "1"}]),
                                   labels={"app": "x"}), now="T2")
    assert reapplied["metadata"]["labels"] == {"app": "x"}
    assert reapplied["metadata"]["annotations"] == {"note": "n"}
    assert reapplied["spec"]["containers"] == [container("c", image="i", env=[{"name": "A", "value": "1"}])]
    assert reapplied["spec"]["dnsPolicy"] == "ClusterFirst"


def test_dropped_object_field_goes_only_when_nobody_owns_any_of_it() -> None:
    live = apply(None, pod(container("c", image="i"), labels={"app": "x"}))
    live = apply(live, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"team": "t"}}}, "b")
    reapplied = apply(live, pod(container("c", image="i")))
    assert reapplied["metadata"]["labels"] == {"team": "t"}
    dropped = apply(reapplied, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "b")
    assert "labels" not in dropped["metadata"]


def test_conflict_with_another_applier() -> None:
    live = apply(None, pod(container("c", image="i")), "a")
    with pytest.raises(ApplyConflict) as err:
        apply(live, pod(container("c", image="other")), "b")
    assert err.value.conflicts == [("a", '.spec.containers[name="c"].image')]
    assert str(err.value) == 'Apply failed with 1 conflict: conflict with "a": .spec.containers[name="c"].image'
    assert err.value.causes == [{"reason": "FieldManagerConflict", "message": 'conflict with "a"',
                                 "field": '.spec.containers[name="c"].image'}]


def test_conflict_with_an_updater_names_its_version() -> None:
    live = apply(None, pod(container("c", image="i"), labels={"app": "x"}), "kubectl")
    live = update(live, with_image(live, "c", "j"), "kubectl-client-side-apply")
    with pytest.raises(ApplyConflict) as err:
        apply(live, pod(container("c", image="i"), labels={"app": "x"}), "kubectl")
    assert str(err.value) == ('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: '
                              '.spec.containers[name="c"].image')


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = apply(None, pod(container("c", image="i"), labels={"app": "x"}), "a")
    live = apply(live, pod(container("d", image="j")), "b")
    with pytest.raises(ApplyConflict) as err:
        apply(live, pod(container("c", image="i2"), container("d", image="j2"), labels={"app": "y"}), "z")
    assert str(err.value) == (
        'Apply failed with 3 conflicts: conflicts with "a":\n'
        '- .metadata.labels.app\n- .spec.containers[name="c"].image\n'
        'conflicts with "b":\n- .spec.containers[name="d"].image')


def test_force_takes_ownership() -> None:
    live = apply(None, pod(container("c", image="i", command=["sh"])), "a")
    forced = apply(live, pod(container("c", image="other")), "b", force=True)
    assert forced["spec"]["containers"] == [container("c", image="other", command=["sh"])]
    assert owned(forced, "a") == {"f:spec": {"f:containers": {C_KEY: {".": {}, "f:command": {}, "f:name": {}}}}}
    assert owned(forced, "b") == {"f:spec": {"f:containers": {C_KEY: {".": {}, "f:image": {}, "f:name": {}}}}}


def test_list_maps_merge_by_key_in_applied_order() -> None:
    live = apply(None, pod(container("a"), container("b"), container("c")), "x")
    merged = apply(live, pod(container("d", image="i"), container("b", image="j")), "y")
    assert merged["spec"]["containers"] == [container("a"), container("d", image="i"),
                                            container("b", image="j"), container("c")]


def test_shared_items_follow_the_applied_order() -> None:
    live = apply(None, pod(container("a"), container("b"), container("c")), "x")
    merged = apply(live, pod(container("c"), container("a")), "y")
    assert [c["name"] for c in merged["spec"]["containers"]] == ["b", "c", "a"]


def test_sets_union_and_each_applier_removes_only_its_own() -> None:
    live = apply(None, {"metadata": {"name": "p", "finalizers": ["x/a"]}}, "a")
    live = apply(live, {"metadata": {"name": "p", "finalizers": ["x/b"]}}, "b")
    assert live["metadata"]["finalizers"] == ["x/a", "x/b"]
    dropped = apply(live, {"metadata": {"name": "p"}}, "a")
    assert dropped["metadata"]["finalizers"] == ["x/b"]


def test_equal_values_are_shared() -> None:
    live = apply(None, pod(container("c", image="i")), "a")
    shared = apply(live, pod(container("c", image="i")), "b")
    assert owned(shared, "a") == owned(shared, "b")
    released = apply(shared, pod(), "a")
    assert released["spec"]["containers"] == [container("c", image="i")]


def test_noop_apply_keeps_the_object_and_its_time() -> None:
    live = apply(None, pod(container("c", image="i")), now="T1")
    again = apply(live, pod(container("c", image="i")), now="T2")
    assert again == live


def test_appliers_keep_one_entry_across_versions() -> None:
    live = apply(None, pod(container("c", image="i")))
    again = server_side_apply(live, pod(container("c", image="j")), manager="a", force=False, api_version="v2",
                              types=POD, now="T2")
    assert [(m["manager"], m["apiVersion"]) for m in again["metadata"]["managedFields"]] == [("a", "v2")]


def test_null_values_in_the_configuration_are_unset() -> None:
    created = apply(None, pod(container("c", image="i", command=None)))
    assert created["spec"]["containers"] == [container("c", image="i")]


def test_status_subresource_has_its_own_entry() -> None:
    live = apply(None, pod(container("c", image="i")), "kubectl")
    status = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    live = apply(live, status, "kubelet", subresource="status")
    assert managers(live) == [("kubectl", "Apply", ""), ("kubelet", "Apply", "status")]
    status["status"]["conditions"][0]["status"] = "False"
    with pytest.raises(ApplyConflict) as err:
        apply(live, status, "other", subresource="status")
    assert err.value.causes[0]["message"] == 'conflict with "kubelet" with subresource "status"'


def test_first_apply_to_an_object_without_managed_fields() -> None:
    live = pod(container("c", image="i"))
    with pytest.raises(ApplyConflict) as err:
        apply(live, pod(container("c", image="j")), "kubectl")
    assert err.value.conflicts == [("before-first-apply", '.spec.containers[name="c"].image')]
    applied = apply(live, pod(container("c", image="i")), "kubectl")
    assert managers(applied) == [("kubectl", "Apply", ""), ("before-first-apply", "Update", "")]


BAD_CONFIGS = [
    ("missing-key", pod({"image": "i"}), 422, ".spec.containers: element 0: associative list with keys"),
    ("duplicate-key", pod(container("c"), container("c")), 422,
     '.spec.containers: duplicate entries for key [name="c"]'),
    ("set-of-objects", {"metadata": {"name": "p", "finalizers": [{"a": 1}]}}, 422, "set items must be scalars"),
    ("managed-fields", {"metadata": {"name": "p", "managedFields": [{"manager": "x"}]}}, 400,
     "metadata.managedFields must be nil"),
    ("not-an-object", ["x"], 400, "apply patch must be a JSON object"),
]


@pytest.mark.parametrize(("config", "code", "message"), [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_unappliable_configurations(config: object, code: int, message: str) -> None:
    with pytest.raises(PatchError) as err:
        apply(None, config)
    assert err.value.code == code
    assert message in str(err.value)


def test_apply_never_mutates_its_inputs() -> None:
    live = apply(None, pod(container("c", image="i"), labels={"app": "x"}), "a")
    config = pod(container("d"))
    before = copy.deepcopy((live, config))
    apply(live, config, "a")
    assert (live, config) == before
