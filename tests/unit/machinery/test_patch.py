"""JSON patch, merge patch and strategic merge patch: upstream semantics and error codes."""

from __future__ import annotations

import copy

import pytest

from fakeapi.machinery.jsonlimits import MAX_DEPTH
from fakeapi.machinery.patch import (
    MAX_JSON_PATCH_OPERATIONS,
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
)
from fakeapi.models.listtypes import list_types_for
from tests.unit.json_trees import containers

POD_TYPES = list_types_for("", "Pod")


def container(name: str, **fields: object) -> dict:
    return {"name": name, **fields}


def json_nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def pod(*containers: dict, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": list(containers), **spec}}


# --- RFC 6902 ---------------------------------------------------------------------------------

JSON_PATCHES = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": "x"}], {"foo": ["bar", "x"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"baz": "qux"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo"}),
    ({"foo": {"bar": "baz"}, "qux": {}}, [{"op": "move", "from": "/foo/bar", "path": "/qux/thud"}],
     {"foo": {}, "qux": {"thud": "baz"}}),
    ({"a": {"b": 1}}, [{"op": "copy", "from": "/a", "path": "/c"}], {"a": {"b": 1}, "c": {"b": 1}}),
    ({"a": "x"}, [{"op": "test", "path": "/a", "value": "x"}, {"op": "add", "path": "/b", "value": 2}],
     {"a": "x", "b": 2}),
    ({"a~b": 1, "c/d": 2}, [{"op": "remove", "path": "/a~0b"}, {"op": "remove", "path": "/c~1d"}], {}),
]


@pytest.mark.parametrize(("obj", "patch", "expected"), JSON_PATCHES,
                         ids=["add", "insert", "append", "remove", "replace", "move", "copy", "test", "escapes"])
def test_json_patch(obj: dict, patch: list, expected: dict) -> None:
    assert apply_json_patch(obj, patch) == expected


JSON_PATCH_ERRORS = [
    ([{"op": "test", "path": "/a", "value": "y"}], 422),
    ([{"op": "remove", "path": "/missing"}], 422),
    ([{"op": "add", "path": "/missing/child", "value": 1}], 422),
    ([{"op": "replace", "path": "", "value": [1]}], 422),
    ([{"op": "frobnicate", "path": "/a"}], 400),
    ([{"op": "add", "path": "a", "value": 1}], 400),
    ([{"op": "add", "path": "/b"}], 400),
    ([{"path": "/a"}], 400),
    (["add"], 400),
    ([7], 400),
    ({"op": "add", "path": "/b", "value": 1}, 400),
]


@pytest.mark.parametrize(("patch", "code"), JSON_PATCH_ERRORS,
                         ids=["test-fails", "remove-missing", "add-missing-parent", "root-not-object",
                              "unknown-op", "bad-pointer", "missing-value", "missing-op", "strings",
                              "not-an-op", "not-a-list"])
def test_json_patch_errors(patch: object, code: int) -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({"a": "x"}, patch)
    assert err.value.code == code


def _deeper(levels: int) -> list[dict]:
    """Operations that each nest the document one level deeper under /spec."""
    return [{"op": "add", "path": "/spec", "value": {}}] + [
        {"op": "add", "path": "/spec" + "/a" * i, "value": {}} for i in range(1, levels)]


BOUNDS = [
    # (id, object, patch, code or None when it applies, message start)
    ("operations-at-the-limit", {"a": "x"}, [{"op": "test", "path": "/a", "value": "x"}] * MAX_JSON_PATCH_OPERATIONS,
     None, ""),
    ("too-many-operations", {"a": "x"}, [{"op": "test", "path": "/a", "value": "x"}] * (MAX_JSON_PATCH_OPERATIONS + 1),
     413, "The allowed maximum operations in a JSON patch is 10000, got 10001"),
    ("copies-within-budget", {"a": "x" * 1000}, [{"op": "copy", "from": "/a", "path": f"/c{i}"} for i in range(100)],
     None, ""),
    ("doubling-copies", {"a": {"b": "x" * 1000}},
     [{"op": "copy", "from": "/a", "path": "/a/c"}, *({"op": "copy", "from": "/a", "path": f"/a/c{i}"}
                                                       for i in range(20))],
     422, "Unable to complete the copy, the accumulated size increase of copy is"),
    ("as-deep-as-allowed", {}, _deeper(MAX_DEPTH - 1), None, ""),
    ("one-level-too-deep", {}, _deeper(MAX_DEPTH), 422, "the patched object would nest more than 100 levels deep"),
    ("a-deep-value", {}, [{"op": "add", "path": "/a", "value": json_nested(MAX_DEPTH)}], 422,
     "the patched object would nest more than 100 levels deep"),
    ("copying-deeper", {"a": json_nested(60)}, [{"op": "copy", "from": "/a", "path": "/a" + "/0" * 59 + "/x"}], 422,
     "the patched object would nest more than 100 levels deep"),
]


@pytest.mark.parametrize(("obj", "patch", "code", "message"), [c[1:] for c in BOUNDS], ids=[c[0] for c in BOUNDS])
def test_json_patch_bounds(obj: dict, patch: list, code: int | None, message: str) -> None:
    if code is None:
        apply_json_patch(obj, patch)
        return
    with pytest.raises(PatchError) as err:
        apply_json_patch(obj, patch)
    assert err.value.code == code and str(err.value).startswith(message)


# --- RFC 7386 (appendix A) --------------------------------------------------------------------

MERGE_PATCHES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("obj", "patch", "expected"), MERGE_PATCHES,
                         ids=[f"rfc7386-{i}" for i in range(len(MERGE_PATCHES))])
def test_merge_patch(obj: dict, patch: dict, expected: dict) -> None:
    assert apply_merge_patch(obj, patch) == expected


@pytest.mark.parametrize("patch", [["a"], "a", None], ids=["list", "string", "null"])
def test_merge_patch_must_be_an_object(patch: object) -> None:
    with pytest.raises(PatchError) as err:
        apply_merge_patch({}, patch)
    assert err.value.code == 400


# --- strategic merge patch --------------------------------------------------------------------

C_A, C_B = container("a", image="x"), container("b", image="y")

SMP_CASES = [
    ("merge-item-by-key", pod(C_A, C_B), {"spec": {"containers": [{"name": "b", "image": "z"}]}},
     pod(C_A, container("b", image="z"))),
    ("new-item-goes-first", pod(C_A, C_B), {"spec": {"containers": [{"name": "c"}]}},
     pod(container("c"), C_A, C_B)),
    ("patch-order-then-live", pod(C_A, C_B), {"spec": {"containers": [{"name": "c"}, {"name": "a", "image": "x2"}]}},
     pod(container("c"), container("a", image="x2"), C_B)),
    ("nested-list-merges-by-key",
     pod(container("a", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])),
     {"spec": {"containers": [{"name": "a", "env": [{"name": "B", "value": "3"}]}]}},
     pod(container("a", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]))),
    ("null-deletes-field-in-item", pod(container("a", image="x", command=["sh"])),
     {"spec": {"containers": [{"name": "a", "command": None}]}}, pod(C_A)),
    ("null-deletes-map-key", {"metadata": {"labels": {"a": "1", "b": "2"}}},
     {"metadata": {"labels": {"a": None, "c": "3"}}}, {"metadata": {"labels": {"b": "2", "c": "3"}}}),
    ("unlisted-list-is-replaced", pod(C_A, tolerations=[{"key": "k1"}, {"key": "k2"}]),
     {"spec": {"tolerations": [{"key": "k3", "effect": None}]}}, pod(C_A, tolerations=[{"key": "k3"}])),
    ("primitive-merge-unions", {"metadata": {"finalizers": ["a", "b"]}},
     {"metadata": {"finalizers": ["b", "c", "b"]}}, {"metadata": {"finalizers": ["a", "b", "c"]}}),
    ("delete-from-primitive-list", {"metadata": {"finalizers": ["a", "b", "c"]}},
     {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}, {"metadata": {"finalizers": ["a", "c"]}}),
    ("delete-from-missing-list", {"metadata": {}},
     {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}, {"metadata": {}}),
    ("patch-delete-item", pod(C_A, C_B), {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, pod(C_B)),
    ("patch-replace-list", pod(C_A, C_B), {"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}},
     pod(container("c"))),
    ("patch-replace-map", {"spec": {"a": 1, "b": {"c": 2}}}, {"spec": {"b": {"$patch": "replace", "d": 3}}},
     {"spec": {"a": 1, "b": {"d": 3}}}),
    ("patch-delete-map", {"spec": {"a": 1, "b": {"c": 2}}}, {"spec": {"b": {"$patch": "delete"}}},
     {"spec": {"a": 1, "b": {}}}),
    ("patch-delete-absent-map", {"spec": {"a": 1}}, {"spec": {"b": {"$patch": "delete"}}}, {"spec": {"a": 1}}),
    ("retain-keys", pod(volumes=[{"name": "v", "emptyDir": {}}]),
     {"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}},
     pod(volumes=[{"name": "v", "hostPath": {"path": "/x"}}])),
    ("set-element-order", pod(C_A, C_B),
     {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
               "containers": [{"name": "a", "image": "x2"}]}},
     pod(C_B, container("a", image="x2"))),
    # A server-only item keeps its live place relative to the ordered ones (upstream mergeSortedSlice).
    ("set-element-order-server-only", pod(C_A, C_B, container("c")),
     {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}]}},
     pod(C_B, container("c"), C_A)),
    ("set-element-order-primitives", {"metadata": {"finalizers": ["a", "b", "c"]}},
     {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}, {"metadata": {"finalizers": ["c", "a", "b"]}}),
    ("new-field-is-cleaned", {"spec": {}}, {"spec": {"affinity": {"x": None, "y": {"$patch": "replace", "z": 1}}}},
     {"spec": {"affinity": {"y": {"z": 1}}}}),
    ("type-change-replaces", {"spec": {"a": "scalar"}}, {"spec": {"a": {"b": 1}}}, {"spec": {"a": {"b": 1}}}),
    ("conditions-by-type", {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                                       {"type": "PodScheduled", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]}}),
    ("smp-key-differs-from-ssa-type", {"status": {"hostIPs": [{"ip": "1.1.1.1"}]}},
     {"status": {"hostIPs": [{"ip": "2.2.2.2"}]}}, {"status": {"hostIPs": [{"ip": "2.2.2.2"}, {"ip": "1.1.1.1"}]}}),
    ("root-replace", {"a": 1}, {"$patch": "replace", "b": 2}, {"b": 2}),
]


@pytest.mark.parametrize(("obj", "patch", "expected"), [case[1:] for case in SMP_CASES],
                         ids=[case[0] for case in SMP_CASES])
def test_strategic_merge_patch(obj: dict, patch: dict, expected: dict) -> None:
    assert apply_strategic_merge_patch(obj, patch, POD_TYPES) == expected


def test_strategic_merge_patch_follows_each_kinds_table() -> None:
    claim = {"status": {"reservedFor": [{"resource": "pods", "name": "p1", "uid": "1"}],
                        "devices": [{"driver": "d", "pool": "p", "device": "g0"}]}}
    patch = {"status": {"reservedFor": [{"resource": "pods", "name": "p2", "uid": "2"}],
                        "devices": [{"driver": "d", "pool": "p", "device": "g1"}]}}
    patched = apply_strategic_merge_patch(claim, patch, list_types_for("resource.k8s.io", "ResourceClaim"))
    assert [r["uid"] for r in patched["status"]["reservedFor"]] == ["2", "1"]
    assert patched["status"]["devices"] == patch["status"]["devices"]  # an SSA map, replaced by SMP


SMP_ERRORS = [
    ({"spec": {"containers": [{"image": "x"}]}}, 400, "does not contain declared merge key: name"),
    ({"spec": {"$patch": "frobnicate"}}, 400, "unknown patch type: frobnicate"),
    ({"spec": {"containers": [{"$patch": "merge"}]}}, 400, "merging lists cannot yet be specified"),
    ({"spec": {"containers": [{"name": "a", "$patch": "nope"}]}}, 400, "unknown patch type: nope"),
    ({"spec": {"$retainKeys": ["a"], "b": 1}}, 400, "invalid patch format of retainKeys"),
    ({"spec": {"$retainKeys": "a"}}, 400, "invalid patch format of retainKeys"),
    ({"spec": {"$setElementOrder/containers": {"name": "a"}}}, 400, "invalid patch format of setElementOrder list"),
    ({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
               "containers": [{"name": "a"}, {"name": "b"}]}}, 400, "doesn't match $setElementOrder list"),
    ({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}, 400, "invalid patch format of primitive list"),
    ({"metadata": {"finalizers": [["a"]]}}, 422, "lists of lists are not supported"),
    ({"metadata": {"finalizers": [{"a": 1}]}}, 400, "list element types are not identical"),
    ({"metadata": {"ownerReferences": ["x"]}}, 400, "list element types are not identical"),
]


@pytest.mark.parametrize(("patch", "code", "message"), SMP_ERRORS,
                         ids=["missing-merge-key", "bad-map-directive", "list-merge-directive", "bad-list-directive",
                              "retain-keys-mismatch", "retain-keys-not-list", "order-not-list", "order-mismatch",
                              "delete-list-not-list", "list-of-lists", "mixed-primitives", "mixed-objects"])
def test_strategic_merge_patch_errors(patch: dict, code: int, message: str) -> None:
    obj = pod(C_A, C_B, volumes=[]) | {"metadata": {"name": "p", "finalizers": ["a"],
                                                    "ownerReferences": [{"uid": "1"}]}}
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch(obj, patch, POD_TYPES)
    assert err.value.code == code
    assert message in str(err.value)


@pytest.mark.parametrize("patch", [[], "x"], ids=["list", "string"])
def test_strategic_merge_patch_must_be_an_object(patch: object) -> None:
    with pytest.raises(PatchError) as err:
        apply_strategic_merge_patch({}, patch, POD_TYPES)
    assert err.value.code == 400


@pytest.mark.parametrize(("apply", "patch"), [
    (apply_json_patch, [{"op": "replace", "path": "/spec/containers/0/image", "value": "z"}]),
    (apply_merge_patch, {"spec": {"containers": [{"name": "a"}]}, "metadata": {"name": None}}),
    (lambda obj, patch: apply_merge_patch(obj, patch, share=True),
     {"spec": {"containers": [{"name": "a"}]}, "metadata": {"name": None, "labels": {"x": "y"}}}),
    (lambda obj, patch: apply_strategic_merge_patch(obj, patch, POD_TYPES),
     {"spec": {"containers": [{"name": "a", "image": "z"}, {"name": "b", "$patch": "delete"}]},
      "metadata": {"$deleteFromPrimitiveList/finalizers": ["f"]}}),
], ids=["json", "merge", "merge-shared", "strategic"])
def test_patches_never_mutate_their_inputs(apply, patch) -> None:
    obj = pod(C_A, C_B) | {"metadata": {"name": "p", "finalizers": ["f"]}}
    before_obj, before_patch = copy.deepcopy(obj), copy.deepcopy(patch)
    patched = apply(obj, patch)
    assert (obj, patch) == (before_obj, before_patch)
    assert patched != obj


@pytest.mark.parametrize("share", [False, True], ids=["private", "shared"])
def test_merge_patch_shares_only_what_it_is_asked_to(share: bool) -> None:
    obj = {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Pending", "conditions": [{"type": "Ready"}]}}
    patch = {"status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]}}
    out = apply_merge_patch(obj, patch, share=share)
    assert out == {**obj, "status": {"phase": "Running", "conditions": [{"type": "Ready"}],
                                     "podIPs": [{"ip": "10.0.0.1"}]}}
    # The objects on the patched path are always new, so a caller may edit them.
    assert out is not obj and out["status"] is not obj["status"]
    inputs = {id(c) for c in containers(obj) + containers(patch)}
    shared = [c for c in containers(out) if id(c) in inputs]
    if share:
        assert out["spec"] is obj["spec"] and out["status"]["conditions"] is obj["status"]["conditions"]
        assert out["status"]["podIPs"] is patch["status"]["podIPs"]
    else:
        assert shared == []
