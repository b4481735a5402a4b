"""Field paths and FieldsV1: rendering, editing in place of rendering, decoding, list keys."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from fakeapi.machinery import fieldsv1
from fakeapi.machinery.fieldsv1 import display_path
from fakeapi.machinery.listtypes import ListSpec, ListTypes

C_KEY = 'k:{"name":"c"}'

@pytest.mark.parametrize(("path", "text"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:containers", C_KEY, "f:image"), '.spec.containers[name="c"].image'),
    (("f:spec", "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'), '.spec.ports[containerPort=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]'),
], ids=["field", "list-map", "multi-key", "set"])
def test_display_path(path: tuple, text: str) -> None:
    assert display_path(path) == text


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
    tree = fieldsv1.render(before)
    kept = orjson.dumps(tree)
    edited = fieldsv1.edit(tree, added, removed)
    # Byte for byte, key order included; the stored tree is shared, never modified.
    assert orjson.dumps(edited) == orjson.dumps(fieldsv1.render((before | added) - removed))
    assert orjson.dumps(tree) == kept


def test_random_edits_match_the_rendering() -> None:
    rng = random.Random(13)
    universe = [tuple(rng.choice((A, B, C, 'k:{"name":"x"}', 'v:"y"')) for _ in range(rng.randint(1, 4)))
                for _ in range(60)]
    fields: set = set()
    tree = fieldsv1.render(fields)
    for _ in range(300):
        added = set(rng.sample(universe, rng.randint(0, 4))) - fields
        removed = set(rng.sample(sorted(fields), min(len(fields), rng.randint(0, 3))))
        tree = fieldsv1.edit(tree, added, removed)
        fields = (fields | added) - removed
        assert orjson.dumps(tree) == orjson.dumps(fieldsv1.render(fields))


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
    assert fieldsv1.key_element(item, ListSpec(list_type="map", keys=keys)) == expected


def in_render_order(fields_v1: dict) -> bool:
    names = list(fields_v1)
    members = names[1:] if names[:1] == ["."] else names
    return "." not in members and members == sorted(members) and all(map(in_render_order, fields_v1.values()))


def test_rendered_field_sets_decode_to_themselves_in_render_order() -> None:
    rng = random.Random(37)
    elements = (A, B, C, "f:.dotted", 'k:{"name":"x"}', 'k:{"name":"é"}', 'v:"y"', "v:1")
    for _ in range(200):
        fields = {tuple(rng.choice(elements) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(0, 25))}
        rendered = fieldsv1.render(fields)
        assert fieldsv1.decode(rendered) == fields
        assert in_render_order(rendered)
        # "." marks exactly the members that have members below them.
        assert all("." not in node or (node["."] == {} and len(node) > 1) for node in _nodes(rendered))


def test_shared_members_decode_as_their_copies_under_any_element() -> None:
    rng = random.Random(41)
    elements = (A, B, C, 'k:{"name":"x"}', 'v:"y"')
    for _ in range(100):
        member = fieldsv1.render({tuple(rng.choice(elements) for _ in range(rng.randint(1, 4))) for _ in range(9)})
        fieldsv1.shared(member)
        for tree in ({"f:spec": member, "f:metadata": {"f:labels": {}}}, {"f:status": member}, {".": {}, A: member}):
            copied = orjson.loads(orjson.dumps(tree))
            assert fieldsv1.decode(tree) == fieldsv1.decode(copied)  # first decode of the member here
            assert fieldsv1.decode(tree) == fieldsv1.decode(copied)  # then from what it remembered


def _nodes(tree: dict) -> list[dict]:
    return [tree, *(node for child in tree.values() for node in _nodes(child))]


ITEMS = [
    # (id, keys, items): item_elements must be the items' key_element, or None (atomic) where
    # one cannot be keyed or two share a key, whichever path writes them.
    ("strings", ("name",), [{"name": "b"}, {"name": "a", "image": "i"}]),
    ("escapes-and-unicode", ("name",), [{"name": 'q"\\'}, {"name": "é✓\u2028"}]),
    ("lone-surrogate", ("name",), [{"name": "\udc80"}, {"name": "a"}]),
    ("integer-key", ("containerPort",), [{"containerPort": 80}, {"containerPort": 81}]),
    ("string-and-integer-keys", ("name",), [{"name": "a"}, {"name": 1}]),
    ("two-keys", ("containerPort", "protocol"), [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]),
    ("duplicate", ("name",), [{"name": "a"}, {"name": "a"}]),
    ("missing-key", ("name",), [{"name": "a"}, {"image": "i"}]),
    ("not-an-object", ("name",), [{"name": "a"}, "a"]),
    ("empty", ("name",), []),
]


SET_ITEMS = [
    ("strings", ["b", "a/x", "é✓", 'q"\\\n', "\u2028𝄞"]),
    ("lone-surrogate", ["\udc80"]),
    ("integers", [1, -2, 2**63, 2**70]),
    ("other-scalars", [True, None, 1.5, 1e16]),
]


@pytest.mark.parametrize("items", [case[1] for case in SET_ITEMS], ids=[c[0] for c in SET_ITEMS])
def test_set_elements_are_written_as_json_dumps_writes_them(items: list) -> None:
    types = ListTypes({("l",): ListSpec(list_type="set")})
    expected = ["v:" + json.dumps(item, separators=(",", ":"), ensure_ascii=False) for item in items]
    assert fieldsv1.item_elements(items, types, ("l",), (), strict=False) == expected


@pytest.mark.parametrize(("keys", "items"), [case[1:] for case in ITEMS], ids=[c[0] for c in ITEMS])
def test_list_map_elements_are_the_item_keys(keys: tuple, items: list) -> None:
    spec = ListSpec(list_type="map", keys=keys)
    types = ListTypes({("l",): spec})
    each = [fieldsv1.key_element(item, spec) for item in items]
    expected = None if None in each or len(set(each)) < len(each) else each
    assert fieldsv1.item_elements(items, types, ("l",), (), strict=False) == expected
