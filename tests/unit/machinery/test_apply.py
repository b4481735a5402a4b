"""Server-side apply and managedFields: ownership, pruning, conflicts, FieldsV1 encoding."""

from __future__ import annotations

import copy
import json
import random

import orjson
import pytest

from fakeapi.machinery.apply import (
    _DECODED,
    ApplyConflict,
    _edit_fields_v1,
    _from_fields_v1,
    _key_element,
    _to_fields_v1,
    display_path,
    fields_of,
    server_side_apply,
    track_update,
)
from fakeapi.machinery.listtypes import ListSpec
from fakeapi.machinery.patch import PatchError
from fakeapi.models.listtypes import list_types_for

POD = list_types_for("", "Pod")
CLAIM = list_types_for("resource.k8s.io", "ResourceClaim")


def container(name: str, **fields: object) -> dict:
    return {"name": name, **fields}


def pod(*containers: dict, labels: dict | None = None, **spec: object) -> dict:
    metadata: dict = {"name": "p", "namespace": "default"}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": list(containers), **spec}}


def apply(live: dict | None, config: dict, manager: str = "a", *, force: bool = False, now: str = "T1",
          subresource: str = "", types=POD) -> dict:
    return server_side_apply(live, config, manager=manager, force=force, api_version="v1", types=types, now=now,
                             subresource=subresource)


def update(old: dict | None, new: dict, manager: str = "u", *, now: str = "T1", subresource: str = "") -> dict:
    return track_update(old, new, manager=manager, api_version="v1", types=POD, now=now, subresource=subresource)


def managers(obj: dict) -> list[tuple[str, str, str]]:
    return [(m["manager"], m["operation"], m.get("subresource", ""))
            for m in obj["metadata"].get("managedFields", [])]


def owned(obj: dict, manager: str, operation: str = "Apply") -> dict:
    entries = [m for m in obj["metadata"]["managedFields"]
               if m["manager"] == manager and m["operation"] == operation]
    assert len(entries) == 1, obj["metadata"]["managedFields"]
    return entries[0]["fieldsV1"]


def without_managed_fields(obj: dict) -> dict:
    body = copy.deepcopy(obj)
    body["metadata"].pop("managedFields", None)
    return body


def with_image(obj: dict, name: str, image: str) -> dict:
    changed = copy.deepcopy(obj)
    next(c for c in changed["spec"]["containers"] if c["name"] == name)["image"] = image
    return changed


C_KEY = 'k:{"name":"c"}'

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


@pytest.mark.parametrize(("path", "text"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:containers", C_KEY, "f:image"), '.spec.containers[name="c"].image'),
    (("f:spec", "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'), '.spec.ports[containerPort=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]'),
], ids=["field", "list-map", "multi-key", "set"])
def test_display_path(path: tuple, text: str) -> None:
    assert display_path(path) == text


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


# --- updates ------------------------------------------------------------------------------------

def test_create_owns_every_field_it_set() -> None:
    created = update(None, pod(container("c", image="i"), labels={"app": "x"}), "kubectl-create")
    assert owned(created, "kubectl-create", "Update") == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {"f:containers": {".": {}, C_KEY: {".": {}, "f:image": {}, "f:name": {}}}},
    }


CREATES = [
    ("plain-pod", pod(container("c", image="i"), labels={"app": "x"})),
    ("unicode-and-escaped-keys", pod(container("é✓"), container('q"\\\t'), container("\u2028𝄞"))),
    ("defaulted-and-explicit-port-keys",
     pod(container("c", ports=[{"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}]))),
    ("sets-empties-and-atomic-lists",
     {"metadata": {"finalizers": ["b", "a"], "annotations": {}},
      "spec": {"securityContext": {}, "volumes": [], "tolerations": [{"key": "k"}], "containers": []}}),
    ("unkeyable-list-is-atomic", pod({"image": "no-name"}, {"image": "no-name-either"})),
    ("nested-list-maps", pod(container("b", env=[{"name": "Z", "value": "1"}, {"name": "A"}]), container("a"))),
    ("status-and-other-top-level", {"metadata": {"name": "p"}, "status": {"phase": "Pending"}, "data": {"k": "v"}}),
    ("server-fields-and-type-meta",
     {"apiVersion": "v1", "kind": "Pod", "metadata": {
         "name": "p", "namespace": "n", "uid": "u", "resourceVersion": "1", "generation": 1, "selfLink": "s",
         "creationTimestamp": "T", "labels": {"a": "b"}, "generateName": "p-"}, "spec": "not-a-struct"}),
    ("only-server-fields", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"}}),
]


@pytest.mark.parametrize("obj", [case[1] for case in CREATES], ids=[case[0] for case in CREATES])
def test_create_fast_path_matches_the_diff_against_an_empty_object(obj: dict) -> None:
    # A create builds its FieldsV1 in one walk; it must equal, byte for byte on the wire (key
    # order included), what diffing the object against an empty one of its shape gives.
    empty = {name: {} for name in ("metadata", "spec", "status") if isinstance(obj.get(name), dict)}
    created = update(None, obj)["metadata"].get("managedFields")
    diffed = update(empty, obj)["metadata"].get("managedFields")
    assert orjson.dumps(created) == orjson.dumps(diffed)


def test_update_takes_changed_fields_from_others() -> None:
    live = apply(None, pod(container("c", image="i"), labels={"app": "x"}), "kubectl")
    changed = update(live, with_image(live, "c", "j"), "editor", now="T2")
    assert owned(changed, "editor", "Update") == {"f:spec": {"f:containers": {C_KEY: {"f:image": {}}}}}
    assert owned(changed, "kubectl") == {"f:metadata": {"f:labels": {"f:app": {}}},
                                         "f:spec": {"f:containers": {C_KEY: {".": {}, "f:name": {}}}}}
    assert managers(changed) == [("kubectl", "Apply", ""), ("editor", "Update", "")]
    assert changed["metadata"]["managedFields"][1]["time"] == "T2"


def test_updates_accumulate_and_removals_leave_every_manager() -> None:
    live = update(None, pod(container("c", image="i"), labels={"app": "x"}), "creator")
    live = update(live, {**live, "metadata": {**live["metadata"], "labels": {"app": "x", "b": "y"}}}, "labeller")
    live = update(live, {**live, "metadata": {**live["metadata"], "labels": {"b": "z"}}}, "labeller")
    assert owned(live, "labeller", "Update") == {"f:metadata": {"f:labels": {"f:b": {}}}}
    assert owned(live, "creator", "Update") == {
        "f:metadata": {"f:labels": {}},
        "f:spec": {"f:containers": {".": {}, C_KEY: {".": {}, "f:image": {}, "f:name": {}}}},
    }


def test_noop_update_leaves_managed_fields_unchanged() -> None:
    live = update(None, pod(container("c", image="i")), "creator", now="T1")
    same = copy.deepcopy(live)
    same["metadata"]["resourceVersion"] = "42"
    del same["metadata"]["managedFields"]
    assert update(live, same, "other", now="T9")["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_clients_may_reset_managed_fields() -> None:
    live = update(None, pod(container("c", image="i")), "creator")
    reset = with_image(live, "c", "j")
    reset["metadata"]["managedFields"] = [{}]
    assert managers(update(live, reset, "editor")) == [("editor", "Update", "")]


def test_status_updates_are_recorded_per_subresource() -> None:
    live = update(None, pod(container("c", image="i")), "creator")
    new = copy.deepcopy(live)
    new["status"] = {"phase": "Running"}
    new["metadata"]["managedFields"] = [{}]  # ignored for subresources
    written = update(live, new, "kubelet", subresource="status")
    assert managers(written) == [("creator", "Update", ""), ("kubelet", "Update", "status")]
    assert owned(written, "kubelet", "Update") == {"f:status": {".": {}, "f:phase": {}}}


# --- FieldsV1 edited in place of rendered -----------------------------------------------------------

A, B, C = "f:a", "f:b", "f:c"
EDITS = [
    # (id, field set before, added, removed)
    ("leaf-beside-a-leaf", {(A, B)}, {(A, C)}, set()),
    ("sibling-sorted-before", {(B,)}, {(A,)}, set()),
    ("sibling-sorted-between", {(A,), (C,)}, {(B,)}, set()),
    ("last-leaf-drops-its-parent", {(A, B), (C,)}, set(), {(A, B)}),
    ("last-leaf-leaves-a-member-leaf", {(A,), (A, B)}, set(), {(A, B)}),
    ("member-leaf-gets-members", {(A,)}, {(A, B, C)}, set()),
    ("member-stops-being-one", {(A,), (A, B)}, set(), {(A,)}),
    ("parent-becomes-a-member", {(A, B)}, {(A,)}, set()),
    ("everything-removed", {(A,), (A, B), (C,)}, set(), {(A,), (A, B), (C,)}),
    ("list-map-items", {("f:spec", "f:containers", 'k:{"name":"b"}', "f:image")},
     {("f:spec", "f:containers", 'k:{"name":"a"}'), ("f:spec", "f:containers", 'k:{"name":"a"}', "f:name")},
     {("f:spec", "f:containers", 'k:{"name":"b"}', "f:image")}),
    ("added-and-removed-under-one-parent", {(A, B), (A, C, B)}, {(A, C, A), (A,)}, {(A, B)}),
]


@pytest.mark.parametrize(("before", "added", "removed"), [case[1:] for case in EDITS], ids=[c[0] for c in EDITS])
def test_edited_fields_v1_is_the_rendering_of_the_new_set(before: set, added: set, removed: set) -> None:
    tree = _to_fields_v1(before)
    kept = orjson.dumps(tree)
    edited = _edit_fields_v1(tree, added, removed)
    # Byte for byte, key order included; the stored tree is shared, never modified.
    assert orjson.dumps(edited) == orjson.dumps(_to_fields_v1((before | added) - removed))
    assert orjson.dumps(tree) == kept


def test_random_edits_match_the_rendering() -> None:
    rng = random.Random(13)
    universe = [tuple(rng.choice((A, B, C, 'k:{"name":"x"}', 'v:"y"')) for _ in range(rng.randint(1, 4)))
                for _ in range(60)]
    fields: set = set()
    tree = _to_fields_v1(fields)
    for _ in range(300):
        added = set(rng.sample(universe, rng.randint(0, 4))) - fields
        removed = set(rng.sample(sorted(fields), min(len(fields), rng.randint(0, 3))))
        tree = _edit_fields_v1(tree, added, removed)
        fields = (fields | added) - removed
        assert orjson.dumps(tree) == orjson.dumps(_to_fields_v1(fields))


def _workload_step(live: dict, step: int) -> tuple[dict, str, str]:
    """One write of a pod's life as the DRA workload makes them: (new object, manager, subresource)."""
    new = copy.deepcopy(live)
    if step % 3 == 0:
        new["status"] = {**new.get("status", {}), "phase": f"P{step}",
                         "conditions": [{"type": f"T{n}", "status": "True"} for n in range(step % 4)]}
        return new, f"kubelet{step % 2}", "status"
    if step % 3 == 1:
        new["metadata"].setdefault("labels", {})[f"l{step % 5}"] = str(step)
        if step % 4 == 1:
            new["metadata"]["labels"].pop("l0", None)
        return new, "labeller", ""
    next(c for c in new["spec"]["containers"] if c["name"] == "c")["image"] = f"i{step}"
    return new, "editor", ""


def test_updates_on_stored_entries_match_a_cold_start() -> None:
    # Each write edits the entries the previous one stored (their field sets remembered by
    # identity); the same writes on private copies, the memo forgotten before each, must give
    # the same managedFields, rendered as from scratch.
    warm = cold = update(None, pod(container("c", image="i"), labels={"a": "b"}), "creator")
    for step in range(24):
        new, manager, subresource = _workload_step(warm, step)
        warm = update(warm, new, manager, now=f"T{step}", subresource=subresource)
        _DECODED.clear()
        cold = update(copy.deepcopy(cold), copy.deepcopy(new), manager, now=f"T{step}", subresource=subresource)
        assert orjson.dumps(warm) == orjson.dumps(cold), step
        for entry in warm["metadata"]["managedFields"]:
            assert orjson.dumps(entry["fieldsV1"]) == orjson.dumps(_to_fields_v1(_from_fields_v1(entry["fieldsV1"])))


def test_entries_a_client_wrote_out_of_order_are_rendered_again() -> None:
    written = copy.deepcopy(update(None, pod(container("c", image="i"), labels={"a": "b"}), "creator"))
    entry = written["metadata"]["managedFields"][0]
    entry["fieldsV1"] = dict(reversed(entry["fieldsV1"].items()))  # f:spec before f:metadata
    stored = update(None, written, "creator")  # created with the client's managedFields, as written
    assert list(stored["metadata"]["managedFields"][0]["fieldsV1"]) == ["f:spec", "f:metadata"]
    changed = update(stored, with_image(stored, "c", "j") | {"metadata": {**stored["metadata"], "labels": {}}},
                     "creator")
    fields_v1 = changed["metadata"]["managedFields"][0]["fieldsV1"]
    assert list(fields_v1) == ["f:metadata", "f:spec"]
    assert orjson.dumps(fields_v1) == orjson.dumps(_to_fields_v1(_from_fields_v1(fields_v1)))


KEYS = [
    ("string", ("name",), {"name": "c", "image": "i"}),
    ("non-ascii", ("name",), {"name": "çé✓"}),
    ("escapes", ("name",), {"name": 'a"b\\c\n'}),
    ("lone-surrogate", ("name",), {"name": "\udc80"}),
    ("integer", ("containerPort",), {"containerPort": 80}),
    ("two-keys", ("containerPort", "protocol"), {"protocol": "TCP", "containerPort": 80}),
]


@pytest.mark.parametrize(("keys", "item"), [case[1:] for case in KEYS], ids=[c[0] for c in KEYS])
def test_list_map_keys_are_written_as_json_dumps_writes_them(keys: tuple, item: dict) -> None:
    expected = "k:" + json.dumps({k: item[k] for k in keys}, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    assert _key_element(item, ListSpec(list_type="map", keys=keys)) == expected


def in_render_order(fields_v1: dict) -> bool:
    names = list(fields_v1)
    members = names[1:] if names[:1] == ["."] else names
    return "." not in members and members == sorted(members) and all(map(in_render_order, fields_v1.values()))


def test_rendered_field_sets_decode_to_themselves_in_render_order() -> None:
    rng = random.Random(37)
    elements = (A, B, C, "f:.dotted", 'k:{"name":"x"}', 'k:{"name":"é"}', 'v:"y"', "v:1")
    for _ in range(200):
        fields = {tuple(rng.choice(elements) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(0, 25))}
        rendered = _to_fields_v1(fields)
        assert _from_fields_v1(rendered) == fields
        assert in_render_order(rendered)
        # "." marks exactly the members that have members below them.
        assert all("." not in node or (node["."] == {} and len(node) > 1) for node in _nodes(rendered))


def _nodes(tree: dict) -> list[dict]:
    return [tree, *(node for child in tree.values() for node in _nodes(child))]
