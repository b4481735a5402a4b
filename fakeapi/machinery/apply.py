"""Server-side apply, after structured-merge-diff's ``merge/update.go`` and the fieldmanager.

- An applier owns exactly the fields of its last applied configuration (``fields_of``: leaves,
  list items, empty objects; never the object fields that merely hold other fields).
- Apply merges the configuration into the live object (``rhs`` wins; list maps merge by key, sets
  union, atomic lists are replaced), then prunes the fields the applier owned before but no longer
  applies, unless another manager owns them.
- Fields another manager owns that the apply adds or changes are a conflict unless forced (then
  the applier takes them), as ``managedfields`` compares and hands fields over for every write.

An object without managedFields gets them attributed to a ``before-first-apply`` updater before
its first apply, as upstream's ``skipNonAppliedManager`` does.  Field paths and their FieldsV1
encoding are ``fieldsv1``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fakeapi.machinery import fieldsv1
from fakeapi.machinery.fieldsv1 import FieldPath, display_path
from fakeapi.machinery.listtypes import ListTypes
from fakeapi.machinery.listtypes import Path as SchemaPath
from fakeapi.machinery.managedfields import (
    ABSENT,
    APPLY,
    Changes,
    Manager,
    compare,
    decode_managers,
    managed_fields,
    private_body,
    strip,
    track_update,
    transfer,
    with_managed_fields,
)
from fakeapi.machinery.patch import PatchError

BEFORE_FIRST_APPLY = "before-first-apply"


class ApplyConflict(Exception):
    """An apply would change fields other managers own.

    ``conflicts`` lists (manager, field path) pairs, e.g. ``('kubectl', '.spec.replicas')``;
    ``causes`` are the matching ``metav1.StatusCause`` dicts (reason ``FieldManagerConflict``)
    for the 409 answer; ``str(e)`` is upstream's message.
    """

    def __init__(self, conflicts: list[tuple[Manager, FieldPath]]) -> None:
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
        applied = private_body(last_applied)
        differs = compare(applied, private_body(live), types)
        owned = strip(_owned(applied, types, strict=False))
    except PatchError:
        return set()
    return owned - differs.modified - differs.added - differs.removed


def fields_of(obj: dict, types: ListTypes) -> dict:
    """The FieldsV1 set of the fields ``obj`` sets (what its applier would own)."""
    return fieldsv1.render(strip(_owned(private_body(obj), types, strict=False)))


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
    if managed_fields(applied):
        raise PatchError("metadata.managedFields must be nil")
    config = _without_nulls(private_body(applied))
    config_fields = _owned(config, types, strict=True)
    if live is not None and not managed_fields(live):
        live = track_update(None, live, manager=BEFORE_FIRST_APPLY, api_version=api_version,
                            types=types, now=now)
    managers = decode_managers(managed_fields(live)) if live is not None else {}
    live_body = private_body(live) if live is not None else {}

    me = Manager(manager, APPLY, api_version, subresource, now, strip(config_fields))
    previous = managers.pop(me.identity, None)
    managers[me.identity] = me
    merged = _merge(live_body, config, types, ())
    if previous is not None:
        # Named parents count as owned so that an object field goes only when nobody owns any of it.
        owned = _with_named_parents(config_fields.union({("f:metadata",)}, *(m.fields for m in managers.values())))
        _prune(merged, fieldsv1.render(_with_named_parents(previous.fields) - owned), types, ())
    changes = compare(live_body, merged, types)
    if not force:
        _raise_conflicts(managers, me, changes)
    transfer(managers, me, changes)
    if previous is not None and not changes.any():
        me.time = previous.time
    return with_managed_fields(merged, managers)


def _raise_conflicts(managers: dict[tuple, Manager], me: Manager, changes: Changes) -> None:
    """Raise ``ApplyConflict`` when the apply adds or changes fields other managers own."""
    changed = changes.added | changes.modified
    conflicts = sorted(((other, path) for other in managers.values() if other is not me
                        for path in other.fields & changed), key=lambda c: (c[0].describe(), c[1]))
    if conflicts:
        raise ApplyConflict(conflicts)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {name: _without_nulls(item) for name, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _with_named_parents(paths: set[FieldPath]) -> set[FieldPath]:
    """``paths`` plus every prefix ending in a field (upstream's EnsureNamedFieldsAreMembers)."""
    return paths | {path[:end] for path in paths for end in range(1, len(path)) if path[end - 1][:2] == "f:"}


def _owned(obj: dict, types: ListTypes, *, strict: bool) -> set[FieldPath]:
    """structured-merge-diff's ToFieldSet: the leaves, list items and empty objects of ``obj``."""
    paths: set[FieldPath] = set()
    _owned_object(obj, (), (), types, strict, paths)
    return paths


# The walk of _owned as functions of the module: closures calling each other are a reference cycle.
def _owned_object(node: dict, spath: SchemaPath, fpath: FieldPath, types: ListTypes, strict: bool,
                  paths: set[FieldPath]) -> None:
    for name, value in node.items():
        _owned_value((*spath, name), (*fpath, f"f:{name}"), value, types, strict, paths)


def _owned_value(spath: SchemaPath, fpath: FieldPath, value: Any, types: ListTypes, strict: bool,
                 paths: set[FieldPath]) -> None:
    if isinstance(value, dict) and value:
        _owned_object(value, spath, fpath, types, strict, paths)
        return
    elements = (fieldsv1.item_elements(value, types, spath, fpath, strict=strict) if isinstance(value, list)
                else None)
    if elements is None:
        paths.add(fpath)
        return
    for element, item in zip(elements, value, strict=True):
        paths.add((*fpath, element))
        if isinstance(item, dict):
            _owned_object(item, (*spath, "*"), (*fpath, element), types, strict, paths)



def _conflict_message(conflicts: list[tuple[Manager, FieldPath]]) -> str:
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



# --- merging and pruning --------------------------------------------------------------------------

def _merge(live: Any, config: Any, types: ListTypes, spath: SchemaPath) -> Any:
    """Merge an (already validated) applied configuration into the live value; config wins."""
    if isinstance(live, dict) and isinstance(config, dict):
        merged = dict(live)
        for name, value in config.items():
            merged[name] = _merge(live[name], value, types, (*spath, name)) if name in live else value
        return merged
    if isinstance(live, list) and isinstance(config, list):
        config_elements = fieldsv1.item_elements(config, types, spath, (), strict=False)
        live_elements = fieldsv1.item_elements(live, types, spath, (), strict=False)
        if config_elements is not None and live_elements is not None:
            return _merge_items(live_elements, live, config_elements, config,
                                lambda old, new: new if old is ABSENT else _merge(old, new, types, (*spath, "*")))
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
        merged.append(merge(left_items.get(element, ABSENT), right_items[element]))
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
            if fieldsv1.is_member(child):
                del value[name]
            else:
                _prune(value[name], child, types, (*spath, name))
    elif isinstance(value, list):
        elements = fieldsv1.item_elements(value, types, spath, (), strict=False)
        if elements is None:
            return
        kept = []
        for element, item in zip(elements, value, strict=True):
            child = tree.get(element)
            if child is not None and fieldsv1.is_member(child):
                continue
            if child is not None:
                _prune(item, child, types, (*spath, "*"))
            kept.append(item)
        value[:] = kept
