"""managedFields of creates, updates and patches: who owns what, and entries carried over."""

from __future__ import annotations

import copy
import json
import random

import orjson
import pytest

from fakeapi.machinery import fieldsv1, managedfields
from fakeapi.machinery.fieldsv1 import _DECODED
from tests.unit.machinery.ssa_builders import (
    C_KEY,
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
    assert _created(obj) == _diffed(obj)


def _created(obj: dict) -> bytes:
    return orjson.dumps(update(None, obj)["metadata"].get("managedFields"))


def _diffed(obj: dict) -> bytes:
    empty = {name: {} for name in ("metadata", "spec", "status") if isinstance(obj.get(name), dict)}
    return orjson.dumps(update(empty, obj)["metadata"].get("managedFields"))


def _reordered(value: object, rng: random.Random) -> object:
    """``value`` with the keys of every object in a random order."""
    if isinstance(value, dict):
        names = list(value)
        rng.shuffle(names)
        return {name: _reordered(value[name], rng) for name in names}
    return [_reordered(item, rng) for item in value] if isinstance(value, list) else value


def test_random_creates_match_the_diff_against_an_empty_object() -> None:
    # Objects of one shape come again and again (the walk remembers each key order's sorted
    # elements), in other key orders, with other keys: every create renders as the diff does.
    rng = random.Random(5)
    for _ in range(300):
        obj = _random_pod(rng)
        if rng.random() < 0.5:
            obj["spec"]["containers"].append({"name": rng.choice("ab"), "ports": [{"containerPort": 80}]})
        obj = _reordered(obj, rng)
        assert _created(obj) == _diffed(obj)


def test_creates_of_equal_specs_share_a_tree_that_updates_leave_alone() -> None:
    # Equal specs (pods of one template) get one created FieldsV1 subtree; an update that takes
    # a field from one pod's creator edits a copy, so the other pod's entry stays as it was.
    first = update(None, pod(container("c", image="i", ports=[{"containerPort": 80}])), "creator")
    second = update(None, pod(container("c", image="i", ports=[{"containerPort": 80}])), "creator")
    shared = owned(first, "creator", "Update")["f:spec"]
    assert owned(second, "creator", "Update")["f:spec"] is shared
    before = orjson.dumps(second["metadata"]["managedFields"])
    changed = update(first, with_image(first, "c", "j"), "editor", now="T2")
    assert "f:image" not in owned(changed, "creator", "Update")["f:spec"]["f:containers"][C_KEY]
    assert orjson.dumps(second["metadata"]["managedFields"]) == before
    assert orjson.dumps(shared) == orjson.dumps(owned(_created_once(second), "creator", "Update")["f:spec"])
    # Equal in Python but not in JSON (80 and 80.0 key the port differently): not the same tree.
    float_port = pod(container("c", image="i", ports=[{"containerPort": 80.0}]))
    assert owned(update(None, float_port, "creator"), "creator", "Update")["f:spec"] is not shared
    assert _created(float_port) == _diffed(float_port)


def test_creates_alike_within_a_second_share_entries_and_spec_that_updates_leave_alone() -> None:
    # Objects created alike (one manager, second and field set; equal specs) share one
    # managedFields list and one spec; an update taking a field from one creator, or changing
    # one's spec, builds new objects, so the other stays as it was, byte for byte.
    first = update(None, pod(container("c", image="i"), labels={"app": "x"}), "creator")
    second = update(None, pod(container("c", image="i"), labels={"app": "x"}), "creator")
    assert second["metadata"]["managedFields"] is first["metadata"]["managedFields"]
    assert second["spec"] is first["spec"]
    before = orjson.dumps(second)
    changed = update(first, with_image(first, "c", "j"), "editor", now="T2")
    assert "f:image" not in owned(changed, "creator", "Update")["f:spec"]["f:containers"][C_KEY]
    assert orjson.dumps(second) == before
    # Another second, another manager, other fields: entries of their own, each as the diff has it.
    alike = pod(container("c", image="i"), labels={"app": "x"})
    for other in (update(None, alike, "creator", now="T2"), update(None, alike, "another"),
                  update(None, pod(container("c", image="i"), labels={"app": "x", "tier": "t"}), "creator")):
        assert other["metadata"]["managedFields"] is not first["metadata"]["managedFields"]
        assert other["spec"] is first["spec"]
        assert orjson.dumps(other["metadata"]["managedFields"]) == orjson.dumps(
            update({"metadata": {}, "spec": {}}, without_managed_fields(other), _manager(other),
                   now=other["metadata"]["managedFields"][0]["time"])["metadata"]["managedFields"])


def _manager(obj: dict) -> str:
    return obj["metadata"]["managedFields"][0]["manager"]


def test_equal_field_sets_share_a_rendering_that_updates_leave_alone() -> None:
    # Two pods' first status writes by one manager own equal field sets: one rendering, shared;
    # a later write taking a field from one of them edits a copy.
    def status_write(name: str) -> dict:
        created = update(None, pod(container("c", image="i")) | {"metadata": {"name": name}}, "creator")
        return update(created, {**created, "status": {"phase": "Running", "podIP": "10.0.0.1"}}, "kubelet",
                      subresource="status")
    first, second = status_write("a"), status_write("b")
    shared = owned(first, "kubelet", "Update")
    assert owned(second, "kubelet", "Update") is shared
    before = orjson.dumps(second["metadata"]["managedFields"])
    changed = update(first, {**first, "status": {"phase": "Succeeded", "podIP": "10.0.0.1"}}, "other",
                     subresource="status")
    assert owned(changed, "kubelet", "Update") == {"f:status": {".": {}, "f:podIP": {}}}
    assert orjson.dumps(second["metadata"]["managedFields"]) == before
    assert shared == {"f:status": {".": {}, "f:phase": {}, "f:podIP": {}}}


def _created_once(obj: dict) -> dict:
    """``obj`` created again with the spec memo empty (the walk's own result)."""
    managedfields._CREATED_SPECS.clear()
    return update(None, without_managed_fields(obj), "creator")


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
            assert orjson.dumps(entry["fieldsV1"]) == orjson.dumps(fieldsv1.render(fieldsv1.decode(entry["fieldsV1"])))


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
    assert orjson.dumps(fields_v1) == orjson.dumps(fieldsv1.render(fieldsv1.decode(fields_v1)))


# --- the old/new compare ------------------------------------------------------------------------

def _conditions(*pairs: tuple[str, str]) -> dict:
    return {"status": {"conditions": [{"type": kind, "status": status} for kind, status in pairs]}}


S, CONDS = "f:status", "f:conditions"
COMPARES = [
    # (id, old, new, added, modified, removed)
    ("scalar-modified", {"spec": {"a": 1}}, {"spec": {"a": 2}}, set(), {("f:spec", "f:a")}, set()),
    # Equal objects are skipped whole (1 == True hides inside them: decoding rules that out); in an
    # object that changed, equal values of other types are modified leaves.
    ("equal-values-of-other-types", {"spec": {"a": 1, "b": 1}}, {"spec": {"a": True, "b": 2}},
     set(), {("f:spec", "f:a"), ("f:spec", "f:b")}, set()),
    ("atomic-list-hiding-a-bool", {"spec": {"args": [1], "b": 1}}, {"spec": {"args": [True], "b": 2}},
     set(), {("f:spec", "f:args"), ("f:spec", "f:b")}, set()),
    ("atomic-list-of-objects-in-another-key-order", {"spec": {"tolerations": [{"key": "k", "operator": "Exists"}],
                                                              "b": 1}},
     {"spec": {"tolerations": [{"operator": "Exists", "key": "k"}], "b": 2}}, set(), {("f:spec", "f:b")}, set()),
    ("atomic-lists-of-big-integers-and-lone-surrogates", {"spec": {"args": [2**70, "\udc80"], "b": 1}},
     {"spec": {"args": [2**70, "\udc80"], "b": 2}}, set(), {("f:spec", "f:b")}, set()),
    ("atomic-list-big-integer-becomes-a-float", {"spec": {"args": [2**70], "b": 1}},
     {"spec": {"args": [float(2**70)], "b": 2}}, set(), {("f:spec", "f:args"), ("f:spec", "f:b")}, set()),
    ("subtree-added", {"metadata": {}}, {"metadata": {}, **_conditions(("Ready", "True"))},
     {(S,), (S, CONDS), (S, CONDS, 'k:{"type":"Ready"}'), (S, CONDS, 'k:{"type":"Ready"}', "f:type"),
      (S, CONDS, 'k:{"type":"Ready"}', "f:status")}, set(), set()),
    ("list-map-item-changed-and-added", _conditions(("Ready", "False")),
     _conditions(("Ready", "True"), ("Initialized", "True")),
     {(S, CONDS, 'k:{"type":"Initialized"}'), (S, CONDS, 'k:{"type":"Initialized"}', "f:type"),
      (S, CONDS, 'k:{"type":"Initialized"}', "f:status")},
     {(S, CONDS, 'k:{"type":"Ready"}', "f:status")}, set()),
    ("list-map-item-removed", _conditions(("Ready", "True"), ("Initialized", "True")), _conditions(("Ready", "True")),
     set(), set(), {(S, CONDS, 'k:{"type":"Initialized"}'), (S, CONDS, 'k:{"type":"Initialized"}', "f:type"),
                    (S, CONDS, 'k:{"type":"Initialized"}', "f:status")}),
    ("list-map-reordered", _conditions(("A", "True"), ("B", "True")), _conditions(("B", "True"), ("A", "True")),
     set(), set(), set()),
    ("set-item-added-and-removed", {"metadata": {"finalizers": ["a", "b"]}}, {"metadata": {"finalizers": ["b", "c"]}},
     {("f:metadata", "f:finalizers", 'v:"c"')}, set(), {("f:metadata", "f:finalizers", 'v:"a"')}),
    ("list-map-becomes-unkeyable", _conditions(("A", "True")), _conditions(("A", "True"), ("A", "False")),
     set(), {(S, CONDS)}, set()),
    ("object-becomes-scalar", {"spec": {"a": {"b": 1}}}, {"spec": {"a": "x"}},
     {("f:spec", "f:a")}, set(), {("f:spec", "f:a"), ("f:spec", "f:a", "f:b")}),
    ("empty-object-and-list-added", {"spec": {}}, {"spec": {"securityContext": {}, "volumes": []}},
     {("f:spec", "f:securityContext"), ("f:spec", "f:volumes")}, set(), set()),
]


@pytest.mark.parametrize(("old", "new", "added", "modified", "removed"), [c[1:] for c in COMPARES],
                         ids=[c[0] for c in COMPARES])
def test_compare(old: dict, new: dict, added: set, modified: set, removed: set) -> None:
    changes = managedfields.compare(old, new, POD)
    assert (changes.added, changes.modified, changes.removed) == (added, modified, removed)


def _paths(value: object, spath: tuple = (), fpath: tuple = ()) -> dict[tuple, object]:
    """Every field below ``value`` with its value, the reference for random compares (its lists
    are always keyable)."""
    out: dict[tuple, object] = {}
    if isinstance(value, dict):
        for name, child in value.items():
            out[(*fpath, f"f:{name}")] = child
            out |= _paths(child, (*spath, name), (*fpath, f"f:{name}"))
    elif isinstance(value, list):
        spec = POD.list_spec(spath)
        for item in value:
            element = (fieldsv1.key_element(item, spec) if spec.list_type == "map"
                       else f"v:{json.dumps(item)}" if spec.list_type == "set" else None)
            if element is not None:
                out[(*fpath, element)] = item
                out |= _paths(item, (*spath, "*"), (*fpath, element))
    return out


def _random_pod(rng: random.Random) -> dict:
    names = rng.sample("abcde", rng.randint(0, 4))
    containers = [container(n, image=rng.choice("xy"), **({"env": [{"name": e, "value": rng.choice("12")}
                                                                   for e in rng.sample("PQR", rng.randint(0, 2))]}
                                                          if rng.random() < 0.5 else {}))
                  for n in names]
    obj = pod(*containers, labels={k: rng.choice("uv") for k in rng.sample("lmn", rng.randint(0, 3))})
    obj["metadata"]["finalizers"] = rng.sample(["f/1", "f/2", "f/3"], rng.randint(0, 3))
    if rng.random() < 0.7:
        kinds = rng.sample("TUV", rng.randint(0, 3))
        obj["status"] = _conditions(*((kind, rng.choice(("True", "False"))) for kind in kinds))["status"]
        if rng.random() < 0.5:
            obj["status"]["phase"] = rng.choice(("Pending", "Running"))
    return obj


def test_random_compares_match_the_field_sets() -> None:
    # What a write added and removed is the difference of the two objects' field sets; what it
    # modified, the leaves both have with different values.
    rng = random.Random(11)
    for _ in range(400):
        old, new = _random_pod(rng), _random_pod(rng)
        before, after = _paths(old), _paths(new)
        changes = managedfields.compare(old, new, POD)
        assert changes.added == after.keys() - before.keys()
        assert changes.removed == before.keys() - after.keys()
        assert changes.modified == {path for path in before.keys() & after.keys()
                                    if not isinstance(after[path], dict | list) and before[path] != after[path]}
