"""Field paths and their FieldsV1 encoding (``metadata.managedFields[].fieldsV1``).

A field path is a tuple of FieldsV1 path elements: ``f:<name>`` for an object field or map key,
``k:{"name":"c"}`` for an item of a list map (keys from ``ListTypes``), ``v:"x"`` for an item of a
set.  A field set is a Python set of such paths; FieldsV1 is its nested form, where ``{}`` is a
member leaf and ``"."`` marks a member that also has members below it.  ``render`` writes a field
set as the apiserver does (sorted at every level), ``edit`` changes a rendered one in place of
rendering it again, ``decode`` reads one back; the entry memo remembers the decoded field set of
a stored managedFields entry by identity, since stored entries are carried over unchanged from
version to version.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

import orjson

from fakeapi.machinery.listtypes import MAP, SET, ListSpec, ListTypes
from fakeapi.machinery.listtypes import Path as SchemaPath
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.patch import PatchError

FieldPath = tuple[str, ...]


def json_text(value: Any) -> str:
    """``value`` as Go's encoding/json writes it in a path element: compact, keys sorted."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def display_path(path: FieldPath) -> str:
    """A field path as upstream prints it: ``.spec.containers[name="c"].image``."""
    return "".join(_display_element(element) for element in path)


def _display_element(element: str) -> str:
    kind, text = element[:2], element[2:]
    if kind == "f:":
        return "." + text
    if kind == "k:":
        key = json.loads(text)
        return "[" + ",".join(f"{name}={json_text(value)}" for name, value in sorted(key.items())) + "]"
    if kind == "v:":
        return f"[={text}]"
    return f"[{text}]"


# --- path elements of list items --------------------------------------------------------------------

def item_elements(items: list, types: ListTypes, spath: SchemaPath, fpath: FieldPath,
                  *, strict: bool) -> list[str] | None:
    """The path element of each item of a list map or set; None when the list is atomic.

    A list that cannot be keyed (missing keys, duplicates) is an error in an applied configuration
    (``strict``) and is treated as atomic in stored objects.
    """
    spec = types.list_spec(spath)
    if spec.list_type not in (MAP, SET):
        return None
    if spec.list_type == MAP and len(spec.keys) == 1:
        elements = _string_key_elements(items, spec.keys[0])
        if elements is not None:
            return elements
    elements = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        element = key_element(item, spec) if spec.list_type == MAP else _value_element(item)
        problem = None
        if element is None:
            problem = (f"element {position}: associative list with keys has an element that omits key field "
                       f"{json_text(spec.keys[0])} (and doesn't have default value)" if spec.list_type == MAP
                       else f"element {position}: set items must be scalars")
        elif element in seen:
            problem = f"duplicate entries for key {_display_element(element)}"
        if problem is not None:
            if strict:
                raise PatchError(f"{display_path(fpath)}: {problem}", 422)
            return None
        elements.append(element)
        seen.add(element)
    return elements


def _string_key_elements(items: list, key: str) -> list[str] | None:
    """The elements of a list map with one key whose items all have distinct string keys
    (containers, conditions, env, ...), written as ``key_element`` writes them, without a call per
    item; None for any other list (the general path then keys it, or says why it cannot)."""
    prefix = _key_prefix(key)
    elements = []
    try:
        for item in items:
            value = item.get(key) if type(item) is dict else None
            if type(value) is not str:
                return None
            elements.append(prefix + orjson.dumps(value).decode() + "}")
    except orjson.JSONEncodeError:  # a lone surrogate: json.dumps writes it
        return None
    return elements if len(set(elements)) == len(elements) else None


def key_element(item: Any, spec: ListSpec) -> str | None:
    """The ``k:`` element of a list-map item, or None when it cannot be keyed."""
    if len(spec.keys) == 1 and isinstance(item, dict):
        # One key with a string value (containers, conditions, env, ...): the common case, written
        # as the general path below would, without building the key object.
        value = item.get(spec.keys[0])
        if type(value) is str:
            try:
                return _key_prefix(spec.keys[0]) + orjson.dumps(value).decode() + "}"
            except orjson.JSONEncodeError:
                pass
    if not isinstance(item, dict) or not any(name in item for name in spec.keys):
        return None
    defaults = dict(spec.key_defaults) if spec.key_defaults else {}
    key = {name: item.get(name, defaults.get(name)) for name in spec.keys}
    key = {name: value for name, value in key.items() if value is not None}
    if any(isinstance(value, dict | list) for value in key.values()):
        return None
    if all(type(value) in (str, int) for value in key.values()):
        # orjson writes strings and integers as json.dumps(ensure_ascii=False) does, ~10x faster
        # (it refuses lone surrogates, which json.dumps writes).
        try:
            return "k:" + orjson.dumps(key, option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONEncodeError:
            pass
    return "k:" + json_text(key)


@functools.cache
def _key_prefix(name: str) -> str:
    return "k:{" + orjson.dumps(name).decode() + ":"


def _value_element(item: Any) -> str | None:
    if type(item) in (str, int):
        # Finalizers and the like: orjson writes these as json_text does, ~10x faster.
        try:
            return "v:" + orjson.dumps(item).decode()
        except orjson.JSONEncodeError:  # a lone surrogate, an integer beyond 64 bits
            pass
    return None if isinstance(item, dict | list) else "v:" + json_text(item)


# --- rendering, editing, decoding ---------------------------------------------------------------------

def render(paths: Iterable[FieldPath]) -> dict:
    """The FieldsV1 of a field set: members sorted at every level, ``"."`` first where a member
    has members below it, ``{}`` for a member without."""
    root: dict = {}
    # In sorted order a path comes after its prefixes and siblings come sorted, so every node is
    # built in its final key order.
    for path in sorted(paths):
        node = root
        for element in path[:-1]:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            elif not child:
                child["."] = {}  # a member leaf gets its first member
            node = child
        node[path[-1]] = {}
    return root


# Renderings by field set: the managers of objects alike own equal sets (the kubelet's first
# status write of every pod), and a set's hash costs a few percent of rendering it.
_RENDERED: Memo[frozenset[FieldPath], dict] = Memo(1024)


def rendered(fields: frozenset[FieldPath]) -> dict:
    """``render(fields)``, shared with every entry of an equal field set (FieldsV1 trees are never
    edited in place: ``edit`` copies what it changes)."""
    tree = _RENDERED.get(fields)
    if tree is None:
        tree = _RENDERED.keep(fields, render(fields))
    return tree


def edit(tree: dict, added: Iterable[FieldPath], removed: Iterable[FieldPath]) -> dict:
    """``render`` of the set ``tree`` (as it renders it) encodes, plus ``added`` (not in it) and
    minus ``removed`` (in it); ``tree`` is not modified, unchanged branches are shared."""
    return _edit_members(tree, _by_first(added), _by_first(removed))


def _by_first(paths: Iterable[FieldPath]) -> dict[str, list[FieldPath]]:
    groups: dict[str, list[FieldPath]] = {}
    for path in paths:
        groups.setdefault(path[0], []).append(path[1:])
    return groups


def _edit_members(members: dict, added: dict[str, list[FieldPath]], removed: dict[str, list[FieldPath]]) -> dict:
    """Edit a node's members (the node without its ``"."``) by the paths below each element."""
    edited = dict(members)
    inserted = False
    for element in {**added, **removed}:
        node = members.get(element)
        # ``{}`` is a member leaf, ``"."`` a member with members below it.
        member = node is not None and (not node or "." in node)
        below_added = [rest for rest in added.get(element, ()) if rest]
        below_removed = [rest for rest in removed.get(element, ()) if rest]
        if len(below_added) < len(added.get(element, ())):
            member = True
        if len(below_removed) < len(removed.get(element, ())):
            member = False
        children = {name: child for name, child in node.items() if name != "."} if node else {}
        if below_added or below_removed:
            children = _edit_members(children, _by_first(below_added), _by_first(below_removed))
        if not member and not children:
            edited.pop(element, None)
            continue
        inserted = inserted or node is None
        edited[element] = {".": {}, **children} if member and children else children
    return dict(sorted(edited.items())) if inserted else edited


def decode(tree: Any) -> set[FieldPath]:
    """The field set a FieldsV1 encodes (whatever its key order; anything but objects ignored)."""
    paths: set[FieldPath] = set()
    if isinstance(tree, dict):
        for element, member in tree.items():
            known = _SHARED.get(id(member))
            if known is not None and known[0] is member:
                paths |= _shared_paths(element, member, known[1])
            else:
                _decode_into({element: member}, (), paths)
    return paths


# Members many entries share (``shared``), with the paths each decodes to under a top-level
# element: an object's first update decodes its creator's entry, whose shared part (a spec made
# from a template) is then decoded once for all objects.  Kept by identity, the member pinned.
_SHARED: Memo[int, tuple[dict, dict[str, frozenset[FieldPath]]]] = Memo(1024)


def shared(member: dict) -> dict:
    """Mark ``member``, a top-level FieldsV1 member that entries share (never edited in place),
    so that ``decode`` remembers its paths; returns it."""
    _SHARED.keep(id(member), (member, {}))
    return member


def _shared_paths(element: str, member: dict, by_element: dict[str, frozenset[FieldPath]]) -> frozenset[FieldPath]:
    paths = by_element.get(element)
    if paths is None:
        found: set[FieldPath] = set()
        _decode_into({element: member}, (), found)
        paths = by_element[element] = frozenset(found)
    return paths


def _decode_into(node: dict, prefix: FieldPath, paths: set[FieldPath]) -> None:
    # Recursion is as deep as the tree, which request bodies bound (100 levels).
    for element, child in node.items():
        if element != "." and isinstance(child, dict):
            path = (*prefix, element)
            if not child:
                paths.add(path)
                continue
            if "." in child:
                paths.add(path)
            _decode_into(child, path, paths)


def is_member(node: dict) -> bool:
    """Whether a FieldsV1 node is itself a member of the set (a leaf, or marked with ``"."``)."""
    return not node or "." in node


# --- stored entries ---------------------------------------------------------------------------------

# What is known of stored managedFields entries, by identity of the entry dict: the decoded
# field set (None: not decoded yet) and whether its FieldsV1 is as ``render`` renders it (None:
# not checked yet).  Stored objects are never mutated and unchanged entries are carried over from
# version to version, and the entries the server writes are entered as they are made, so most
# writes find every manager here.  The entry itself is kept to pin its id.
_DECODED: Memo[int, tuple[dict, frozenset[FieldPath] | None, bool | None]] = Memo(50_000)


def remember_entry(raw: dict, fields: frozenset[FieldPath] | None, canonical: bool | None) -> dict:
    """Enter what is known of the managedFields entry ``raw`` in the memo; returns ``raw``."""
    _DECODED.keep(id(raw), (raw, fields, canonical))
    return raw


def _known(raw: dict) -> tuple[frozenset[FieldPath], bool | None]:
    hit = _DECODED.get(id(raw))
    if hit is not None and hit[0] is raw:
        if hit[1] is not None:
            return hit[1], hit[2]
        canonical = hit[2]
    else:
        canonical = None
    fields = frozenset(decode(raw.get("fieldsV1")))
    remember_entry(raw, fields, canonical)
    return fields, canonical


def entry_fields(raw: dict) -> frozenset[FieldPath]:
    """The field set of the managedFields entry ``raw``, decoded once per entry."""
    return _known(raw)[0]


def is_canonical(raw: dict) -> bool:
    """Whether ``raw``'s FieldsV1 is what ``render`` makes of its field set, key order included
    (a client may have written it otherwise), so that it can be edited in place of rendering the
    new set: entries made here are, others are checked once."""
    fields, canonical = _known(raw)
    if canonical is None:
        canonical = orjson.dumps(raw.get("fieldsV1")) == orjson.dumps(render(fields))
        remember_entry(raw, fields, canonical)
    return canonical
