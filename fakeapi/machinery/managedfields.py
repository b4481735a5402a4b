"""``metadata.managedFields`` of writes: who owns which field, after structured-merge-diff's Compare
and the apiserver's fieldmanager.

Every write compares the old and new object (``compare``): fields another manager owns that were
added or changed change hands to the writer (for Apply, unless forced, they are a conflict first:
see ``apply``); removed fields leave every manager, so managers writing equal values share them.
Updaters own what they changed, accumulated over their writes (``track_update``).

Managers are identified by (manager, operation, subresource) and, for Update, the API version.
Like the apiserver's ``stripMetaManager``, nobody owns ``apiVersion``, ``kind`` or the
server-owned metadata fields (name, namespace, uid, resourceVersion, generation, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.machinery import fieldsv1
from fakeapi.machinery.fieldsv1 import FieldPath, json_text
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.listtypes import MAP, SET, ListTypes
from fakeapi.machinery.listtypes import Path as SchemaPath
from fakeapi.machinery.memo import Memo

APPLY, UPDATE = "Apply", "Update"

_STRIPPED = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",),
    *(("f:metadata", f"f:{name}",) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
        "managedFields", "resourceVersion")),
})
# With the root, which is no field: what ``strip`` takes away (one C-level set difference).
_UNOWNED_PATHS = _STRIPPED | {()}
ABSENT: Any = object()
"""A value missing from one side of a comparison or merge."""
# A tuple, not ``dict | list``: that would build a union object on every test in the walks.
_CONTAINERS = (dict, list)


def track_update(old: dict | None, new: dict, *, manager: str, api_version: str, types: ListTypes, now: str,
                 subresource: str = "") -> dict:
    """Record a create (``old`` None), update or non-apply patch by ``manager`` in ``new``'s managedFields.

    The manager takes the fields it added or changed from everybody else; removed fields leave
    every manager.  ``new`` may carry managedFields of its own (main resource only): they replace
    the stored ones, which is how clients reset them.  A no-op write keeps managedFields as they were.
    """
    provided = managed_fields(new) if not subresource else []
    if provided and old is not None and provided == managed_fields(old):
        # Clients send back the entries they read: the stored ones (equal) have their field
        # sets decoded already and are written back as they were when their manager is unchanged.
        provided = managed_fields(old)
    if old is None and not provided:
        # A create: the creator owns every field, so one walk of the object builds its FieldsV1
        # directly, instead of diffing against an empty object (the create hot path).
        body = _shallow_body(new)
        tree = _created_fields_v1(body, types)
        if tree:
            body["metadata"]["managedFields"] = _created_entries(tree, manager, api_version, subresource, now)
        return body
    # Shallow bodies suffice: nothing below metadata is modified here, and stored objects are
    # never mutated, so the old entries can be shared too.
    new_body = _shallow_body(new)
    old_body = _shallow_body(old) if old is not None else _empty_like(new_body)
    changes = compare(old_body, new_body, types)
    if not changes.any() and not provided:
        kept = list(managed_fields(old)) if old is not None else []
        if kept:
            new_body.setdefault("metadata", {})["managedFields"] = kept
        return new_body
    managers = decode_managers(provided or (managed_fields(old) if old is not None else []))
    if changes.any():
        me = managers.pop(Manager(manager, UPDATE, api_version, subresource, now, set()).identity, None)
        me = me or Manager(manager, UPDATE, api_version, subresource, now, set())
        transfer(managers, me, changes)
        me.fields = strip((me.fields - changes.removed) | changes.added | changes.modified)
        me.time = now
        managers[me.identity] = me
    return with_managed_fields(new_body, managers)


# The managedFields of creates by (manager, version, subresource, time, FieldsV1): objects created
# alike within a second (a template's pods, a client's ConfigMaps) share one list, as the stored
# lists and entries are never edited in place, so each object keeps fewer containers for CPython's
# collector to traverse.  The FieldsV1 is told by its spec subtree's identity (equal specs share
# one, see _CREATED_SPECS; the entries kept here keep it alive, so its id is not reused) and the
# JSON of the rest.
_CREATED_ENTRIES: Memo[tuple[str, str, str, str, int, bytes], list] = Memo(1024)


def _created_entries(tree: dict, manager: str, api_version: str, subresource: str, now: str) -> list:
    rest = dict(tree)
    key = (manager, api_version, subresource, now, id(rest.pop("f:spec", None)), orjson.dumps(rest))
    entries = _CREATED_ENTRIES.get(key)
    if entries is None:
        entries = _CREATED_ENTRIES.keep(key, [Manager(manager, UPDATE, api_version, subresource, now).to_json(tree)])
    return entries


# A fakeapi extension: a request with this header set to "true" reads objects without
# ``metadata.managedFields`` (answers, lists, watch events); what is stored is unchanged.  For
# clients that drop them anyway, as upstream's kube-scheduler and kube-controller-manager informers
# do: fakeapi's own control plane, whose informers then decode half as much JSON per object.
OMIT_MANAGED_FIELDS_HEADER = "Fakeapi-Omit-Managed-Fields"


def without_managed_fields(obj: Any) -> Any:
    """``obj`` without ``metadata.managedFields``: ``obj`` itself when it has none, else a copy of
    its top level and metadata (stored objects are shared and never edited)."""
    meta = obj.get("metadata") if type(obj) is dict else None
    if not meta or "managedFields" not in meta:
        return obj
    meta = dict(meta)
    del meta["managedFields"]
    return {**obj, "metadata": meta}


def stored_managed_fields(obj: dict) -> list | None:
    """``obj``'s managedFields entries, for a write to carry over uncopied: they are never edited
    in place (a write replaces the list), and the stored ones are those this module knows."""
    entries = (obj.get("metadata") or {}).get("managedFields")
    return entries if isinstance(entries, list) else None


@dataclass
class Manager:
    """One managedFields entry being worked on: its identity, time and field set."""

    manager: str
    operation: str
    api_version: str
    subresource: str
    time: str | None
    fields: set[FieldPath] = field(default_factory=set)
    # The stored entry this manager was decoded from and its field set then: an entry that
    # did not change is written back as it was, skipping the re-encoding (the hot path).
    raw: dict | None = None
    source: frozenset[FieldPath] | None = None

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """The entry's key: appliers keep one entry whatever version they apply with
        (upstream's BuildManagerIdentifier)."""
        return self.manager, self.operation, self.subresource, "" if self.operation == APPLY else self.api_version

    def describe(self) -> str:
        """Upstream's ``printManager``: ``"name" with subresource "status" using v1``."""
        text = json_text(self.manager)
        if self.subresource:
            text += f" with subresource {json_text(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def to_json(self, fields_v1: dict | None = None) -> dict:
        """The managedFields entry; ``fields_v1`` when the caller built the FieldsV1 itself."""
        if fields_v1 is None and self.raw is not None and self.fields == self.source:
            if self.time == self.raw.get("time"):
                return self.raw
            return fieldsv1.remember_entry({**self.raw, "time": self.time}, self.source,
                                           fieldsv1.is_canonical(self.raw))
        fields = None
        if fields_v1 is None:
            fields = frozenset(self.fields)
            if self.raw is not None and self.source is not None:
                gained, lost = fields - self.source, self.source - fields
                # Most writes move a few of a manager's fields: then editing the stored FieldsV1
                # costs less than rendering it all (and more when most of it is new).
                if 2 * (len(gained) + len(lost)) <= len(self.source) and fieldsv1.is_canonical(self.raw):
                    fields_v1 = fieldsv1.edit(self.raw["fieldsV1"], gained, lost)
            if fields_v1 is None:
                fields_v1 = fieldsv1.rendered(fields)
        entry = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            entry["time"] = self.time
        entry |= {"fieldsType": "FieldsV1", "fieldsV1": fields_v1}
        if self.subresource:
            entry["subresource"] = self.subresource
        return fieldsv1.remember_entry(entry, fields, True)


@dataclass
class Changes:
    """What a write added, modified and removed, as field sets."""

    added: set[FieldPath] = field(default_factory=set)
    modified: set[FieldPath] = field(default_factory=set)
    removed: set[FieldPath] = field(default_factory=set)

    def any(self) -> bool:
        """Whether the write changed anything."""
        return bool(self.added or self.modified or self.removed)


def transfer(managers: dict[tuple, Manager], me: Manager, changes: Changes) -> None:
    """Take the changed fields from the other managers and drop the removed fields from them;
    managers left without fields go."""
    gone = changes.added | changes.modified | changes.removed
    for identity, other in list(managers.items()):
        if other is not me:
            other.fields -= gone
            if not other.fields:
                del managers[identity]


# --- objects and managedFields entries ------------------------------------------------------------

def managed_fields(obj: dict | None) -> list:
    """``obj``'s managedFields entries; ``[]`` when it has none (or something else there)."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    entries = metadata.get("managedFields") if isinstance(metadata, dict) else None
    return entries if isinstance(entries, list) else []


def private_body(obj: dict) -> dict:
    """A private deep copy of ``obj`` without managedFields (apply prunes the copy in place)."""
    body = deep_copy(obj)
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return body


def _shallow_body(obj: dict) -> dict:
    """``obj`` without managedFields, sharing everything but the top level and metadata."""
    body = dict(obj)
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        body["metadata"] = metadata = dict(metadata)  # copied and edited in C, not key by key
        metadata.pop("managedFields", None)
    return body


_ZERO_STRUCTS = ("metadata", "spec", "status")
# _STRIPPED by level, for the create walk.
_UNOWNED_TOP = frozenset(path[0][2:] for path in _STRIPPED if len(path) == 1) - {"metadata"}
_UNOWNED_META = frozenset(path[1][2:] for path in _STRIPPED if len(path) == 2)


def _empty_like(body: dict) -> dict:
    """The "old object" of a create: the top-level structs exist, as in a zero Go object."""
    return {name: {} for name in _ZERO_STRUCTS if isinstance(body.get(name), dict)}


def decode_managers(entries: list) -> dict[tuple, Manager]:
    """The managers of stored managedFields entries by identity (duplicates merged)."""
    managers: dict[tuple, Manager] = {}
    for raw in entries:
        if not isinstance(raw, dict):
            continue
        fields = fieldsv1.entry_fields(raw)
        entry = Manager(str(raw.get("manager") or ""), str(raw.get("operation") or ""),
                        str(raw.get("apiVersion") or ""), str(raw.get("subresource") or ""),
                        raw.get("time"), set(fields), raw, fields)
        known = managers.get(entry.identity)
        if known is None:
            managers[entry.identity] = entry
        else:
            known.fields |= entry.fields
            known.raw = None
    return managers


def with_managed_fields(body: dict, managers: dict[tuple, Manager]) -> dict:
    """``body`` with the non-empty managers encoded in upstream's order."""
    entries = sorted((m for m in managers.values() if m.fields),
                     key=lambda m: (m.operation, m.time or "", m.manager, m.api_version, m.subresource))
    metadata = body.setdefault("metadata", {})
    if entries:
        metadata["managedFields"] = [m.to_json() for m in entries]
    else:
        metadata.pop("managedFields", None)
    return body


def strip(paths: Iterable[FieldPath]) -> set[FieldPath]:
    """``paths`` without the fields nobody owns (type meta, server-owned metadata)."""
    return set(paths) - _UNOWNED_PATHS


# --- the create walk and the diff -------------------------------------------------------------------

def _created_fields_v1(body: dict, types: ListTypes) -> dict:
    """``fieldsv1.render`` of what a create adds: every node of ``body`` but the top-level structs
    an empty object already has and the fields nobody owns, built in one walk."""
    tree: dict = {}
    for name in sorted(body):
        if name in _UNOWNED_TOP:
            continue
        value = body[name]
        if name == "spec" and isinstance(value, dict):
            body["spec"], inner = _created_spec(value, types)
            if inner:
                tree["f:spec"] = inner
        elif name in _ZERO_STRUCTS and isinstance(value, dict):
            # A zero Go object already has this struct: only its fields are new.
            inner = _created_members(value, types, (name,), {}, _UNOWNED_META if name == "metadata" else ())
            if inner:
                tree["f:" + name] = inner
        else:
            tree["f:" + name] = _created_node(value, types, (name,)) if value and isinstance(value, _CONTAINERS) else {}
    return tree


# A spec and its created FieldsV1 by the kind's list types and the spec's JSON: objects made from
# one template (a Deployment's pods, a claim template's claims) have equal specs, and serializing
# one costs a fraction of walking it.  Stored objects and FieldsV1 trees are never edited in place
# (writes build new objects; an update's FieldsV1 edit copies what it changes), so objects created
# alike share the first one's spec and stored entries share its tree: fewer containers per stored
# object for CPython's collector to traverse.
_CREATED_SPECS: Memo[tuple[int, bytes], tuple[ListTypes, dict, dict]] = Memo(1024)


def _created_spec(spec: dict, types: ListTypes) -> tuple[dict, dict]:
    """The spec to store (an equal one created before, or ``spec``) and its created FieldsV1."""
    try:
        key = (id(types), orjson.dumps(spec))
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: walked, the commit refuses it
        return spec, _created_members(spec, types, ("spec",), {})
    hit = _CREATED_SPECS.get(key)
    if hit is not None and hit[0] is types:
        return hit[2], hit[1]
    tree = fieldsv1.shared(_created_members(spec, types, ("spec",), {}))
    _CREATED_SPECS.keep(key, (types, tree, spec))
    return spec, tree


def _created_members(obj: dict, types: ListTypes, spath: SchemaPath, members: dict, skip: Iterable[str] = ()) -> dict:
    """``members`` with the FieldsV1 node of each field of ``obj`` (but ``skip``) added in sorted order."""
    for name, element in _sorted_elements(obj):
        if name in skip:
            continue
        child = obj[name]
        # Leaves, empty objects and empty lists are ``{}``, answered without a call.
        members[element] = (_created_node(child, types, (*spath, name)) if child and isinstance(child, _CONTAINERS)
                            else {})
    return members


# The fields of an object in sorted order with their path elements, by the object's keys in their
# order: objects of one kind come in few shapes, so most creates sort and prefix no name.
_SORTED: Memo[tuple[str, ...], list[tuple[str, str]]] = Memo(10_000)


def _sorted_elements(obj: dict) -> list[tuple[str, str]]:
    keys = tuple(obj)
    pairs = _SORTED.get(keys)
    if pairs is None:
        pairs = _SORTED.keep(keys, [(name, "f:" + name) for name in sorted(keys)])
    return pairs


def _created_node(value: dict | list, types: ListTypes, spath: SchemaPath) -> dict:
    """The FieldsV1 node of a non-empty object or list: ``"."`` followed by its members in sorted
    order, or ``{}`` for an atomic list."""
    if isinstance(value, dict):
        return _created_members(value, types, spath, {".": {}})
    elements = fieldsv1.item_elements(value, types, spath, (), strict=False)
    if elements is None:
        return {}
    items = (*spath, "*")
    children: dict = {".": {}}
    # Elements are unique, so sorting the pairs compares elements only.
    for element, item in sorted(zip(elements, value, strict=True)):
        children[element] = _created_node(item, types, items) if item and isinstance(item, _CONTAINERS) else {}
    return children


def compare(old: dict, new: dict, types: ListTypes) -> Changes:
    """Which fields a write added, modified and removed (structured-merge-diff's Compare).

    Leaves (scalars, atomic lists) are modified when their value changes; objects, list items and
    lists themselves are only ever added or removed.
    """
    changes = Changes()
    if not _unchanged(old, new):
        _diff(old, new, (), (), types, changes)
    return changes


def _diff(before: Any, after: Any, spath: SchemaPath, fpath: FieldPath, types: ListTypes, changes: Changes) -> None:
    """``compare`` below two values both sides have and that differ (the caller checked, see
    _unchanged); a value only one side has is walked by _subtree_paths.  A function of the module
    rather than a closure in ``compare``: a recursive closure is a reference cycle, garbage for
    the collector after every write."""
    if isinstance(before, dict) and isinstance(after, dict):
        for name, old_value in before.items():
            new_value = after.get(name, ABSENT)
            if new_value is ABSENT:
                _subtree_paths(old_value, types, (*spath, name), (*fpath, "f:" + name), changes.removed)
            elif _unchanged(old_value, new_value):
                continue
            elif isinstance(old_value, _CONTAINERS) or isinstance(new_value, _CONTAINERS):
                _diff(old_value, new_value, (*spath, name), (*fpath, "f:" + name), types, changes)
            elif _leaf_changed(old_value, new_value):  # two scalars (most changes): no call
                changes.modified.add((*fpath, "f:" + name))
        for name, new_value in after.items():
            if name not in before:
                _subtree_paths(new_value, types, (*spath, name), (*fpath, "f:" + name), changes.added)
        return
    if isinstance(before, list) and isinstance(after, list):
        if before == after and types.list_spec(spath).list_type in (MAP, SET):
            return  # the same for keyed lists (atomic ones are leaves: see _leaf_changed)
        keyed = _keyed_items(before, after, types, spath)
        if keyed is not None:
            old_items, new_items = keyed
            items = (*spath, "*")
            for element in {**old_items, **new_items}:
                old_item, new_item = old_items.get(element, ABSENT), new_items.get(element, ABSENT)
                if old_item is ABSENT:
                    _subtree_paths(new_item, types, items, (*fpath, element), changes.added)
                elif new_item is ABSENT:
                    _subtree_paths(old_item, types, items, (*fpath, element), changes.removed)
                elif not _unchanged(old_item, new_item):
                    _diff(old_item, new_item, items, (*fpath, element), types, changes)
            return
    if _shape(before) is not _shape(after):
        _subtree_paths(before, types, spath, fpath, changes.removed)
        _subtree_paths(after, types, spath, fpath, changes.added)
    elif _leaf_changed(before, after):
        changes.modified.add(fpath)


def _shape(value: Any) -> type:
    return dict if isinstance(value, dict) else list if isinstance(value, list) else object


def _subtree_paths(value: Any, types: ListTypes, spath: SchemaPath, fpath: FieldPath, out: set[FieldPath]) -> None:
    """Add ``fpath`` and every field below ``value`` to ``out``: what ``compare`` finds added (or
    removed) where only the new (or old) object has a value."""
    out.add(fpath)
    if isinstance(value, dict):
        for name, child in value.items():
            if child and isinstance(child, _CONTAINERS):
                _subtree_paths(child, types, (*spath, name), (*fpath, "f:" + name), out)
            else:
                out.add((*fpath, "f:" + name))  # a leaf, or an empty object or list: no call
    elif value and isinstance(value, list):
        elements = fieldsv1.item_elements(value, types, spath, (), strict=False)
        if elements is not None:
            items = (*spath, "*")
            for element, item in zip(elements, value, strict=True):
                if item and isinstance(item, _CONTAINERS):
                    _subtree_paths(item, types, items, (*fpath, element), out)
                else:
                    out.add((*fpath, element))


def _unchanged(before: Any, after: Any) -> bool:
    """What ``compare`` would find no change in, told without walking it (most of a write):
    the same object, or equal values of one type (lists excepted: see ``_leaf_changed``).
    C-level equality of objects would conflate 1 and true deep inside, which decoding against
    the schema rules out."""
    return before is after or (type(before) is type(after) is not list and before == after)


def _leaf_changed(before: Any, after: Any) -> bool:
    # Python equality is the fast path; it conflates 1, 1.0 and True, so equal values of
    # different types (or lists that may hide them) are settled by their JSON text.
    if before != after:
        return True
    if type(before) is not type(after) or isinstance(before, list):
        try:  # orjson tells 1, 1.0 and true apart as json.dumps does, many times faster
            return orjson.dumps(before, option=orjson.OPT_SORT_KEYS) != orjson.dumps(after, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits, a lone surrogate
            return json_text(before) != json_text(after)
    return False


def _keyed_items(before: list, after: list, types: ListTypes,
                 spath: SchemaPath) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both sides of a list by path element, or None when the list compares as one leaf."""
    old_elements = fieldsv1.item_elements(before, types, spath, (), strict=False)
    new_elements = fieldsv1.item_elements(after, types, spath, (), strict=False) if old_elements is not None else None
    if new_elements is None:
        return None
    return dict(zip(old_elements, before, strict=True)), dict(zip(new_elements, after, strict=True))
