"""Server-side apply and ``metadata.managedFields``, after structured-merge-diff and the fieldmanager.

A field path is a tuple of FieldsV1 path elements: ``f:<name>`` for an object field or map key,
``k:{"name":"c"}`` for an item of a list map (keys from ``ListTypes``), ``v:"x"`` for an item of a
set.  A field set is a Python set of such paths; ``managedFields[].fieldsV1`` is its nested form,
where ``{}`` is a member leaf and ``"."`` marks a member that also has members below it.

Ownership follows ``sigs.k8s.io/structured-merge-diff/v4/merge/update.go``:

- An applier owns exactly the fields of its last applied configuration (``fields_of``: leaves,
  list items, empty objects; never the object fields that merely hold other fields).
- Apply merges the configuration into the live object (``rhs`` wins; list maps merge by key, sets
  union, atomic lists are replaced), then prunes the fields the applier owned before but no longer
  applies, unless another manager owns them.
- Every write compares the old and new object: fields another manager owns that were added or
  changed are a conflict for Apply (unless forced: the applier takes them) and simply change hands
  for Update; removed fields leave every manager.  So managers applying equal values share them.
- Updaters own what they changed, accumulated over their writes (``track_update``).

Managers are identified by (manager, operation, subresource) and, for Update, the API version.
Like the apiserver's ``stripMetaManager``, nobody owns ``apiVersion``, ``kind`` or the
server-owned metadata fields (name, namespace, uid, resourceVersion, generation, ...).  An object
without managedFields gets them attributed to a ``before-first-apply`` updater before its first
apply, as upstream's ``skipNonAppliedManager`` does.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.listtypes import MAP, SET, ListSpec, ListTypes
from fakeapi.machinery.listtypes import Path as SchemaPath
from fakeapi.machinery.patch import PatchError

FieldPath = tuple[str, ...]

APPLY, UPDATE = "Apply", "Update"
BEFORE_FIRST_APPLY = "before-first-apply"

_STRIPPED = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",),
    *(("f:metadata", f"f:{name}",) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
        "managedFields", "resourceVersion")),
})
_ABSENT: Any = object()


class ApplyConflict(Exception):
    """An apply would change fields other managers own.

    ``conflicts`` lists (manager, field path) pairs, e.g. ``('kubectl', '.spec.replicas')``;
    ``causes`` are the matching ``metav1.StatusCause`` dicts (reason ``FieldManagerConflict``)
    for the 409 answer; ``str(e)`` is upstream's message.
    """

    def __init__(self, conflicts: list[tuple[_Manager, FieldPath]]) -> None:
        self._pairs = conflicts
        self.paths = [path for _, path in conflicts]
        self.conflicts = [(manager.manager, display_path(path)) for manager, path in conflicts]
        self.causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {manager.describe()}",
                        "field": display_path(path)} for manager, path in conflicts]
        super().__init__(_conflict_message(conflicts))

    def without(self, allowed: set[FieldPath]) -> ApplyConflict | None:
        """The conflicts on fields outside ``allowed``, or None when there are none."""
        remaining = [(manager, path) for manager, path in self._pairs if path not in allowed]
        return ApplyConflict(remaining) if remaining else None


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Only this field manager inherits what client-side apply set (upstream's lastAppliedManager).
LAST_APPLIED_MANAGER = "kubectl"


def last_applied_fields(live: dict, types: ListTypes) -> set[FieldPath]:
    """The fields ``live``'s client-side-apply annotation set that still hold the applied values.

    The apiserver's lastAppliedManager lets ``kubectl apply --server-side`` take these over
    without conflicts, so moving from ``kubectl apply`` to server-side apply brings none; a field
    someone changed since (or that the annotation names but the object lacks) is not among them.
    """
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    try:
        last_applied = json.loads(annotations[LAST_APPLIED])
    except (KeyError, ValueError, TypeError):
        return set()
    if not isinstance(last_applied, dict) or last_applied.get("apiVersion") != live.get("apiVersion"):
        return set()
    try:
        applied = _body(last_applied)
        differs = _compare(applied, _body(live), types)
        owned = _strip(_owned(applied, types, strict=False))
    except PatchError:
        return set()
    return owned - differs.modified - differs.added - differs.removed


def fields_of(obj: dict, types: ListTypes) -> dict:
    """The FieldsV1 set of the fields ``obj`` sets (what its applier would own)."""
    return _to_fields_v1(_strip(_owned(_body(obj), types, strict=False)))


def server_side_apply(live: dict | None, applied: dict, *, manager: str, force: bool, api_version: str,
                      types: ListTypes, now: str, subresource: str = "") -> dict:
    """Apply the configuration ``applied`` for ``manager`` onto ``live`` (None: create from it).

    Returns the new object with ``metadata.managedFields`` updated.  Raises ``ApplyConflict`` when
    another manager owns a field the apply changes and ``force`` is false, ``PatchError`` for a
    configuration that cannot be applied (400) or whose lists cannot be keyed (422).  Fields the
    endpoint resets (``status`` on the main resource, the rest on ``/status``) must be removed from
    ``applied`` by the caller.  ``null`` values in ``applied`` count as unset.
    """
    if not isinstance(applied, dict):
        raise PatchError("apply patch must be a JSON object")
    if _managed_fields(applied):
        raise PatchError("metadata.managedFields must be nil")
    config = _without_nulls(_body(applied))
    config_fields = _owned(config, types, strict=True)
    if live is not None and not _managed_fields(live):
        live = track_update(None, live, manager=BEFORE_FIRST_APPLY, api_version=api_version,
                            types=types, now=now)
    managers = _decode(_managed_fields(live)) if live is not None else {}
    live_body = _body(live) if live is not None else {}

    me = _Manager(manager, APPLY, api_version, subresource, now, _strip(config_fields))
    previous = managers.pop(me.identity, None)
    managers[me.identity] = me
    merged = _merge(live_body, config, types, ())
    if previous is not None:
        # Named parents count as owned so that an object field goes only when nobody owns any of it.
        owned = _with_named_parents(config_fields.union({("f:metadata",)}, *(m.fields for m in managers.values())))
        _prune(merged, _to_fields_v1(_with_named_parents(previous.fields) - owned), types, ())
    changes = _compare(live_body, merged, types)
    _transfer(managers, me, changes, force=force)
    if previous is not None and not changes.any():
        me.time = previous.time
    return _with_managed_fields(merged, managers)


def track_update(old: dict | None, new: dict, *, manager: str, api_version: str, types: ListTypes, now: str,
                 subresource: str = "") -> dict:
    """Record a create (``old`` None), update or non-apply patch by ``manager`` in ``new``'s managedFields.

    The manager takes the fields it added or changed from everybody else; removed fields leave
    every manager.  ``new`` may carry managedFields of its own (main resource only): they replace
    the stored ones, which is how clients reset them.  A no-op write keeps managedFields as they were.
    """
    provided = _managed_fields(new) if not subresource else []
    if provided and old is not None and provided == _managed_fields(old):
        # Clients send back the entries they read: the stored ones (equal) have their field
        # sets decoded already and are written back as they were when their manager is unchanged.
        provided = _managed_fields(old)
    if old is None and not provided:
        # A create: the creator owns every field, so one walk of the object builds its FieldsV1
        # directly, instead of diffing against an empty object (the create hot path).
        body = _shallow_body(new)
        tree = _created_fields_v1(body, types)
        if tree:
            me = _Manager(manager, UPDATE, api_version, subresource, now)
            body["metadata"]["managedFields"] = [me.to_json(tree)]
        return body
    # Shallow bodies suffice: nothing below metadata is modified here, and stored objects are
    # never mutated, so the old entries can be shared too.
    new_body = _shallow_body(new)
    old_body = _shallow_body(old) if old is not None else _empty_like(new_body)
    changes = _compare(old_body, new_body, types)
    if not changes.any() and not provided:
        kept = list(_managed_fields(old)) if old is not None else []
        if kept:
            new_body.setdefault("metadata", {})["managedFields"] = kept
        return new_body
    managers = _decode(provided or (_managed_fields(old) if old is not None else []))
    if changes.any():
        me = managers.pop(_Manager(manager, UPDATE, api_version, subresource, now, set()).identity, None)
        me = me or _Manager(manager, UPDATE, api_version, subresource, now, set())
        _transfer(managers, me, changes, force=True)
        me.fields = _strip((me.fields - changes.removed) | changes.added | changes.modified)
        me.time = now
        managers[me.identity] = me
    return _with_managed_fields(new_body, managers)


def stored_managed_fields(obj: dict) -> list | None:
    """``obj``'s managedFields entries, for a write to carry over uncopied: they are never edited
    in place (a write replaces the list), and the stored ones are those this module knows."""
    entries = (obj.get("metadata") or {}).get("managedFields")
    return entries if isinstance(entries, list) else None


def display_path(path: FieldPath) -> str:
    """A field path as upstream prints it: ``.spec.containers[name="c"].image``."""
    return "".join(_display_element(element) for element in path)


def _display_element(element: str) -> str:
    kind, text = element[:2], element[2:]
    if kind == "f:":
        return "." + text
    if kind == "k:":
        key = json.loads(text)
        return "[" + ",".join(f"{name}={_json(value)}" for name, value in sorted(key.items())) + "]"
    if kind == "v:":
        return f"[={text}]"
    return f"[{text}]"


@dataclass
class _Manager:
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
        # Appliers keep one entry whatever version they apply with (BuildManagerIdentifier).
        return self.manager, self.operation, self.subresource, "" if self.operation == APPLY else self.api_version

    def describe(self) -> str:
        """Upstream's ``printManager``: ``"name" with subresource "status" using v1``."""
        text = _json(self.manager)
        if self.subresource:
            text += f" with subresource {_json(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def to_json(self, fields_v1: dict | None = None) -> dict:
        """The managedFields entry; ``fields_v1`` when the caller built the FieldsV1 itself."""
        if fields_v1 is None and self.raw is not None and self.fields == self.source:
            if self.time == self.raw.get("time"):
                return self.raw
            return _remember({**self.raw, "time": self.time}, self.source, _is_canonical(self.raw))
        fields = None
        if fields_v1 is None:
            fields = frozenset(self.fields)
            if self.raw is not None and self.source is not None:
                gained, lost = fields - self.source, self.source - fields
                # Most writes move a few of a manager's fields: then editing the stored FieldsV1
                # costs less than rendering it all (and more when most of it is new).
                if 2 * (len(gained) + len(lost)) <= len(self.source) and _is_canonical(self.raw):
                    fields_v1 = _edit_fields_v1(self.raw["fieldsV1"], gained, lost)
            if fields_v1 is None:
                fields_v1 = _to_fields_v1(fields)
        entry = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            entry["time"] = self.time
        entry |= {"fieldsType": "FieldsV1", "fieldsV1": fields_v1}
        if self.subresource:
            entry["subresource"] = self.subresource
        return _remember(entry, fields, True)


@dataclass
class _Changes:
    added: set[FieldPath] = field(default_factory=set)
    modified: set[FieldPath] = field(default_factory=set)
    removed: set[FieldPath] = field(default_factory=set)

    def any(self) -> bool:
        return bool(self.added or self.modified or self.removed)


def _transfer(managers: dict[tuple, _Manager], me: _Manager, changes: _Changes, *, force: bool) -> None:
    """Take changed fields from the other managers (conflicts unless forced); drop removed fields."""
    changed = changes.added | changes.modified
    if not force:
        conflicts = sorted(((other, path) for other in managers.values() if other is not me
                            for path in other.fields & changed), key=lambda c: (c[0].describe(), c[1]))
        if conflicts:
            raise ApplyConflict(conflicts)
    for identity, other in list(managers.items()):
        if other is not me:
            other.fields -= changed | changes.removed
            if not other.fields:
                del managers[identity]


def _conflict_message(conflicts: list[tuple[_Manager, FieldPath]]) -> str:
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {manager.describe()}: {display_path(path)}"
    by_manager: dict[str, list[str]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager.describe(), []).append(display_path(path))
    lines = []
    for described in sorted(by_manager):
        lines.append(f"conflicts with {described}:")
        lines.extend(f"- {path}" for path in by_manager[described])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# --- objects and managedFields entries ------------------------------------------------------------

def _managed_fields(obj: dict | None) -> list:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    entries = metadata.get("managedFields") if isinstance(metadata, dict) else None
    return entries if isinstance(entries, list) else []


def _body(obj: dict) -> dict:
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
        body["metadata"] = {k: v for k, v in metadata.items() if k != "managedFields"}
    return body


_ZERO_STRUCTS = ("metadata", "spec", "status")
# _STRIPPED by level, for the create walk.
_UNOWNED_TOP = frozenset(path[0][2:] for path in _STRIPPED if len(path) == 1) - {"metadata"}
_UNOWNED_META = frozenset(path[1][2:] for path in _STRIPPED if len(path) == 2)


def _empty_like(body: dict) -> dict:
    """The "old object" of a create: the top-level structs exist, as in a zero Go object."""
    return {name: {} for name in _ZERO_STRUCTS if isinstance(body.get(name), dict)}


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {name: _without_nulls(item) for name, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


# What is known of stored managedFields entries, by identity of the entry dict: the decoded
# field set (None: not decoded yet) and whether its FieldsV1 is as ``_to_fields_v1`` renders it
# (None: not checked yet).  Stored objects are never mutated and unchanged entries are carried
# over from version to version, and the entries written here are entered as they are made, so
# most writes find every manager here.  The entry itself is kept to pin its id.
_DECODED: dict[int, tuple[dict, frozenset[FieldPath] | None, bool | None]] = {}
_DECODED_LIMIT = 50_000


def _remember(raw: dict, fields: frozenset[FieldPath] | None, canonical: bool | None) -> dict:
    if len(_DECODED) >= _DECODED_LIMIT:
        _DECODED.clear()
    _DECODED[id(raw)] = (raw, fields, canonical)
    return raw


def _known(raw: dict) -> tuple[frozenset[FieldPath], bool | None]:
    hit = _DECODED.get(id(raw))
    if hit is not None and hit[0] is raw:
        if hit[1] is not None:
            return hit[1], hit[2]
        canonical = hit[2]
    else:
        canonical = None
    fields = frozenset(_from_fields_v1(raw.get("fieldsV1")))
    _remember(raw, fields, canonical)
    return fields, canonical


def _decoded_fields(raw: dict) -> frozenset[FieldPath]:
    return _known(raw)[0]


def _is_canonical(raw: dict) -> bool:
    """Whether ``raw``'s FieldsV1 is what ``_to_fields_v1`` makes of its field set, key order
    included (a client may have written it otherwise), so that it can be edited in place of
    rendering the new set: entries made here are, others are checked once."""
    fields, canonical = _known(raw)
    if canonical is None:
        canonical = orjson.dumps(raw.get("fieldsV1")) == orjson.dumps(_to_fields_v1(fields))
        _remember(raw, fields, canonical)
    return canonical


def _decode(entries: list) -> dict[tuple, _Manager]:
    managers: dict[tuple, _Manager] = {}
    for raw in entries:
        if not isinstance(raw, dict):
            continue
        fields = _decoded_fields(raw)
        entry = _Manager(str(raw.get("manager") or ""), str(raw.get("operation") or ""),
                         str(raw.get("apiVersion") or ""), str(raw.get("subresource") or ""),
                         raw.get("time"), set(fields), raw, fields)
        known = managers.get(entry.identity)
        if known is None:
            managers[entry.identity] = entry
        else:
            known.fields |= entry.fields
            known.raw = None
    return managers


def _with_managed_fields(body: dict, managers: dict[tuple, _Manager]) -> dict:
    """``body`` with the non-empty managers encoded in upstream's order."""
    entries = sorted((m for m in managers.values() if m.fields),
                     key=lambda m: (m.operation, m.time or "", m.manager, m.api_version, m.subresource))
    metadata = body.setdefault("metadata", {})
    if entries:
        metadata["managedFields"] = [m.to_json() for m in entries]
    else:
        metadata.pop("managedFields", None)
    return body


# --- field sets -----------------------------------------------------------------------------------

def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _strip(paths: Iterable[FieldPath]) -> set[FieldPath]:
    return {path for path in paths if path and path not in _STRIPPED}


def _with_named_parents(paths: set[FieldPath]) -> set[FieldPath]:
    """``paths`` plus every prefix ending in a field (upstream's EnsureNamedFieldsAreMembers)."""
    return paths | {path[:end] for path in paths for end in range(1, len(path)) if path[end - 1][:2] == "f:"}


def _to_fields_v1(paths: Iterable[FieldPath]) -> dict:
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


def _edit_fields_v1(tree: dict, added: Iterable[FieldPath], removed: Iterable[FieldPath]) -> dict:
    """``_to_fields_v1`` of the set ``tree`` (as it renders it) encodes, plus ``added`` (not in
    it) and minus ``removed`` (in it); ``tree`` is not modified, unchanged branches are shared."""
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


def _from_fields_v1(tree: Any) -> set[FieldPath]:
    """The field set a FieldsV1 encodes (whatever its key order; anything but objects ignored)."""
    paths: set[FieldPath] = set()
    pending: list[tuple[FieldPath, Any]] = [((), tree)]
    while pending:
        prefix, node = pending.pop()
        if not isinstance(node, dict):
            continue
        for element, child in node.items():
            if element == "." or not isinstance(child, dict):
                continue
            path = (*prefix, element)
            if not child:
                paths.add(path)
                continue
            if "." in child:
                paths.add(path)
            pending.append((path, child))
    return paths


def _is_member(node: dict) -> bool:
    return not node or "." in node


def _elements(items: list, types: ListTypes, spath: SchemaPath, fpath: FieldPath,
              *, strict: bool) -> list[str] | None:
    """The path element of each item of a list map or set; None when the list is atomic.

    A list that cannot be keyed (missing keys, duplicates) is an error in an applied configuration
    (``strict``) and is treated as atomic in stored objects.
    """
    spec = types.list_spec(spath)
    if spec.list_type not in (MAP, SET):
        return None
    elements: list[str] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        element = _key_element(item, spec) if spec.list_type == MAP else _value_element(item)
        problem = None
        if element is None:
            problem = (f"element {position}: associative list with keys has an element that omits key field "
                       f"{_json(spec.keys[0])} (and doesn't have default value)" if spec.list_type == MAP
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


def _key_element(item: Any, spec: ListSpec) -> str | None:
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
    return "k:" + _json(key)


@functools.cache
def _key_prefix(name: str) -> str:
    return "k:{" + orjson.dumps(name).decode() + ":"


def _value_element(item: Any) -> str | None:
    return None if isinstance(item, dict | list) else "v:" + _json(item)


def _owned(obj: dict, types: ListTypes, *, strict: bool) -> set[FieldPath]:
    """structured-merge-diff's ToFieldSet: the leaves, list items and empty objects of ``obj``."""
    paths: set[FieldPath] = set()

    def visit_object(node: dict, spath: SchemaPath, fpath: FieldPath) -> None:
        for name, value in node.items():
            visit((*spath, name), (*fpath, f"f:{name}"), value)

    def visit(spath: SchemaPath, fpath: FieldPath, value: Any) -> None:
        if isinstance(value, dict) and value:
            visit_object(value, spath, fpath)
            return
        elements = _elements(value, types, spath, fpath, strict=strict) if isinstance(value, list) else None
        if elements is None:
            paths.add(fpath)
            return
        for element, item in zip(elements, value, strict=True):
            paths.add((*fpath, element))
            if isinstance(item, dict):
                visit_object(item, (*spath, "*"), (*fpath, element))

    visit_object(obj, (), ())
    return paths


def _created_fields_v1(body: dict, types: ListTypes) -> dict:
    """``_to_fields_v1`` of what a create adds: every node of ``body`` but the top-level structs
    an empty object already has and the fields nobody owns, built in one walk."""
    def node(value: Any, spath: SchemaPath) -> dict:
        # Leaves, empty objects and atomic lists are ``{}``; anything with members is ``"."``
        # followed by its members in sorted order.  Leaves are answered without a call.
        if isinstance(value, dict):
            if not value:
                return {}
            children: dict = {".": {}}
            for name in sorted(value):
                child = value[name]
                children["f:" + name] = node(child, (*spath, name)) if child and isinstance(child, dict | list) else {}
            return children
        elements = _elements(value, types, spath, (), strict=False) if isinstance(value, list) else None
        if not elements:
            return {}
        items = (*spath, "*")
        children = {".": {}}
        for element, item in sorted(zip(elements, value, strict=True), key=lambda pair: pair[0]):
            children[element] = node(item, items) if item and isinstance(item, dict | list) else {}
        return children

    tree: dict = {}
    for name in sorted(body):
        if name in _UNOWNED_TOP:
            continue
        value = body[name]
        if name not in _ZERO_STRUCTS or not isinstance(value, dict):
            tree["f:" + name] = node(value, (name,))
            continue
        # A zero Go object already has this struct: only its fields are new.
        unowned = _UNOWNED_META if name == "metadata" else ()
        inner = {"f:" + child: node(value[child], (name, child)) for child in sorted(value) if child not in unowned}
        if inner:
            tree["f:" + name] = inner
    return tree


def _compare(old: dict, new: dict, types: ListTypes) -> _Changes:
    """Which fields a write added, modified and removed (structured-merge-diff's Compare).

    Leaves (scalars, atomic lists) are modified when their value changes; objects, list items and
    lists themselves are only ever added or removed.
    """
    changes = _Changes()

    def shape(value: Any) -> type:
        return dict if isinstance(value, dict) else list if isinstance(value, list) else object

    def node_added_or_removed(before: Any, after: Any, fpath: FieldPath) -> None:
        if fpath and before is _ABSENT:
            changes.added.add(fpath)
        elif fpath and after is _ABSENT:
            changes.removed.add(fpath)

    def diff(before: Any, after: Any, spath: SchemaPath, fpath: FieldPath) -> None:
        if isinstance(before, dict) and before == after:
            # Most of an object is untouched by a write; C-level equality skips it.  It would
            # conflate 1 and true deep inside, which decoding against the schema rules out.
            return
        if isinstance(before, list) and before == after and types.list_spec(spath).list_type in (MAP, SET):
            return  # the same for keyed lists (atomic ones are leaves: see _leaf_changed)
        if before is not _ABSENT and after is not _ABSENT and shape(before) is not shape(after):
            diff(before, _ABSENT, spath, fpath)
            diff(_ABSENT, after, spath, fpath)
            return
        kind = shape(after if after is not _ABSENT else before)
        if kind is dict:
            old_map = before if before is not _ABSENT else {}
            new_map = after if after is not _ABSENT else {}
            for name in {**old_map, **new_map}:
                old_value, new_value = old_map.get(name, _ABSENT), new_map.get(name, _ABSENT)
                if not _unchanged(old_value, new_value):
                    diff(old_value, new_value, (*spath, name), (*fpath, f"f:{name}"))
            node_added_or_removed(before, after, fpath)
            return
        keyed = _keyed_items(before, after, types, spath) if kind is list else None
        if keyed is not None:
            old_items, new_items = keyed
            for element in {**old_items, **new_items}:
                old_item, new_item = old_items.get(element, _ABSENT), new_items.get(element, _ABSENT)
                if not _unchanged(old_item, new_item):
                    diff(old_item, new_item, (*spath, "*"), (*fpath, element))
            node_added_or_removed(before, after, fpath)
        elif before is _ABSENT or after is _ABSENT:
            node_added_or_removed(before, after, fpath)
        elif _leaf_changed(before, after):
            changes.modified.add(fpath)

    diff(old, new, (), ())
    return changes


def _unchanged(before: Any, after: Any) -> bool:
    """What ``_compare`` would find no change in, told without walking it (most of a write):
    the same object, or equal values of one type (lists excepted: see ``_leaf_changed``)."""
    return before is after or (type(before) is type(after) is not list and before == after)


def _leaf_changed(before: Any, after: Any) -> bool:
    # Python equality is the fast path; it conflates 1, 1.0 and True, so equal values of
    # different types (or lists that may hide them) are settled by their JSON text.
    if before != after:
        return True
    if type(before) is not type(after) or isinstance(before, list):
        return _json(before) != _json(after)
    return False


def _keyed_items(before: Any, after: Any, types: ListTypes,
                 spath: SchemaPath) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both sides of a list by path element, or None when the list compares as one leaf."""
    sides = []
    for side in (before, after):
        if side is _ABSENT:
            sides.append({})
            continue
        elements = _elements(side, types, spath, (), strict=False)
        if elements is None:
            return None
        sides.append(dict(zip(elements, side, strict=True)))
    return sides[0], sides[1]


# --- merging and pruning --------------------------------------------------------------------------

def _merge(live: Any, config: Any, types: ListTypes, spath: SchemaPath) -> Any:
    """Merge an (already validated) applied configuration into the live value; config wins."""
    if isinstance(live, dict) and isinstance(config, dict):
        merged = dict(live)
        for name, value in config.items():
            merged[name] = _merge(live[name], value, types, (*spath, name)) if name in live else value
        return merged
    if isinstance(live, list) and isinstance(config, list):
        config_elements = _elements(config, types, spath, (), strict=False)
        live_elements = _elements(live, types, spath, (), strict=False)
        if config_elements is not None and live_elements is not None:
            return _merge_items(live_elements, live, config_elements, config,
                                lambda old, new: new if old is _ABSENT else _merge(old, new, types, (*spath, "*")))
    return config


def _merge_items(left_elements: list[str], left: list, right_elements: list[str], right: list,
                 merge: Callable[[Any, Any], Any]) -> list:
    """Merge keyed lists as structured-merge-diff orders them.

    Live-only items keep their place; shared and applied items follow the applied order, each
    applied item going where it sits relative to the shared ones.
    """
    left_items = dict(zip(left_elements, left, strict=True))
    right_items = dict(zip(right_elements, right, strict=True))
    shared = iter([element for element in right_elements if element in left_items])
    next_shared = next(shared, None)
    merged, done = [], set()
    li = ri = 0
    while li < len(left_elements) or ri < len(right_elements):
        if li < len(left_elements) and ri < len(right_elements):
            element = left_elements[li]
            if element == right_elements[ri]:
                merged.append(merge(left_items[element], right_items[element]))
                done.add(element)
                li, ri, next_shared = li + 1, ri + 1, next(shared, None)
                continue
            if element in right_items and next_shared is not None and next_shared != element:
                li += 1  # a shared item taken later, in applied order
                continue
        if li < len(left_elements):
            element = left_elements[li]
            if element not in right_items:
                merged.append(left_items[element])
                li += 1
                continue
            if element in done:
                li += 1
                continue
        element = right_elements[ri]
        merged.append(merge(left_items.get(element, _ABSENT), right_items[element]))
        done.add(element)
        ri += 1
        if element == next_shared:
            next_shared = next(shared, None)
    return merged


def _prune(value: Any, tree: dict, types: ListTypes, spath: SchemaPath) -> None:
    """Remove, in place, the members of the FieldsV1 ``tree`` (with everything below them)."""
    if isinstance(value, dict):
        for name in list(value):
            child = tree.get(f"f:{name}")
            if child is None:
                continue
            if _is_member(child):
                del value[name]
            else:
                _prune(value[name], child, types, (*spath, name))
    elif isinstance(value, list):
        elements = _elements(value, types, spath, (), strict=False)
        if elements is None:
            return
        kept = []
        for element, item in zip(elements, value, strict=True):
            child = tree.get(element)
            if child is not None and _is_member(child):
                continue
            if child is not None:
                _prune(item, child, types, (*spath, "*"))
            kept.append(item)
        value[:] = kept
