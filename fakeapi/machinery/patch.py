"""The three PATCH document types of the API server, as pure functions on JSON values.

- ``application/json-patch+json``: RFC 6902 operations, applied by the ``jsonpatch`` library.
- ``application/merge-patch+json``: RFC 7386, ``null`` deletes a key, lists are replaced.
- ``application/strategic-merge-patch+json``: ``k8s.io/apimachinery/pkg/util/strategicpatch``.
  Lists whose field carries ``patchMergeKey`` are merged item by item on that key, lists of
  scalars with ``patchStrategy=merge`` are unioned, every other list is replaced.  Directives:
  ``$patch: replace|delete`` on maps and list items, ``$retainKeys``, ``$setElementOrder/<list>``
  and ``$deleteFromPrimitiveList/<list>``.  The order of merged lists follows upstream's
  ``normalizeElementOrder``: patch items keep their patch order, server-only items keep their
  relative live order, and a patch item new to the list goes before server-only items.

Every function deep-copies its input and returns a new document.  Errors carry the HTTP code the
API server answers with: 400 for a malformed patch, 422 when a well-formed patch does not apply
(failed ``test`` op, missing path, lists of lists).
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer
import orjson

from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.jsonlimits import MAX_DEPTH, nesting_depth
from fakeapi.machinery.listtypes import ListTypes, Path

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVES = "$deleteFromPrimitiveList/"
_ABSENT: Any = object()
# The apiserver's maxJSONPatchOperations, and the JSONPatchMaxCopyBytes it gives evanphx/json-patch.
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_COPY_BYTES = 3 * 1024 * 1024


class PatchError(ValueError):
    """A patch the API server refuses; the message is shown to the user."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


def apply_json_patch(obj: dict, patch: Any) -> dict:
    """Apply an RFC 6902 operation list, within upstream's bounds: at most 10,000 operations
    (413), copies adding at most 3 MiB in all (422, evanphx/json-patch's accumulated copy limit the
    apiserver sets), and a result no deeper than ``MAX_DEPTH`` (or the object's own depth, if a
    stored object already nests deeper): small patches cannot grow an object without end."""
    if not isinstance(patch, list):
        raise PatchError("json patch must be a list of operations")
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
                         f"got {len(patch)}", 413)
    try:
        jsonpatch.JsonPatch(patch)  # every operation well-formed before any applies
    except (jsonpatch.InvalidJsonPatch, jsonpointer.JsonPointerException, TypeError) as err:
        raise PatchError(str(err)) from err
    doc: Any = deep_copy(obj)
    bounds = _Growth(nesting_depth(doc, 10 * MAX_DEPTH))
    for op in patch:
        bounds.admit(doc, op)
        try:
            doc = jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
        except jsonpatch.JsonPatchTestFailed as err:
            # The wording of evanphx/json-patch, which the apiserver uses.
            raise PatchError(f"testing value {op.get('path', '')} failed: test failed", 422) from err
        except jsonpatch.InvalidJsonPatch as err:
            raise PatchError(str(err)) from err
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
            raise PatchError(str(err), 422) from err
    if not isinstance(doc, dict):
        raise PatchError("the patched document is not a JSON object", 422)
    return doc


class _Growth:
    """What a JSON patch has added so far: an upper bound of the document's depth (a value at a
    path of n tokens nests n + its own depth) and the bytes copies added."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.limit = max(depth, MAX_DEPTH)
        self.copied = 0

    def admit(self, doc: Any, op: dict[str, Any]) -> None:
        """Account for ``op`` before it applies; 422 if it would pass a bound."""
        kind, to = op.get("op"), _tokens(op.get("path"))
        if kind in ("add", "replace"):
            self.depth = max(self.depth, to + nesting_depth(op.get("value"), self.limit))
        elif kind in ("copy", "move"):
            self.depth = max(self.depth, to + self.depth - _tokens(op.get("from")))
        if self.depth > self.limit:
            raise PatchError(f"the patched object would nest more than {self.limit} levels deep", 422)
        source = op.get("from")
        if kind == "copy" and isinstance(source, str):
            try:
                value = jsonpointer.resolve_pointer(doc, source)
            except jsonpointer.JsonPointerException:
                return  # applying the copy reports the missing path
            self.copied += len(orjson.dumps(value))
            if self.copied > MAX_COPY_BYTES:
                raise PatchError(f"Unable to complete the copy, the accumulated size increase of copy is "
                                 f"{self.copied}, exceeding the limit {MAX_COPY_BYTES}", 422)


def _tokens(pointer: Any) -> int:
    return pointer.count("/") if isinstance(pointer, str) else 0


def apply_merge_patch(obj: dict, patch: Any, *, share: bool = False) -> dict:
    """Apply an RFC 7386 merge patch; the result is a private copy.

    With ``share`` only the objects on the patch's paths are new: every branch the patch leaves
    alone is ``obj``'s, every value it sets is ``patch``'s.  For a caller that copies the result
    before editing any of it (a status write keeps the patched status and copies it); neither
    argument is ever edited.
    """
    if not isinstance(patch, dict):
        raise PatchError("merge patch must be a JSON object")
    merged = _merge_patch(obj, patch)
    return merged if share else deep_copy(merged)


def _merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def apply_strategic_merge_patch(obj: dict, patch: Any, schema: ListTypes) -> dict:
    """Apply a strategic merge patch; ``schema`` names the merge keys of the kind's lists."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _StrategicMerge(schema).map(deep_copy(obj), deep_copy(patch), ())


class _StrategicMerge:
    """One patch application; mutates its (private, deep-copied) arguments."""

    def __init__(self, types: ListTypes) -> None:
        self.types = types

    def map(self, original: dict, patch: dict, path: Path) -> dict:
        if _DIRECTIVE in patch:
            directive = patch.pop(_DIRECTIVE)
            if directive == "replace":
                return self.map({}, patch, path)
            if directive == "delete":
                return {}
            raise PatchError(f"unknown patch type: {directive} in map: {patch}")
        _retain_keys(original, patch)
        self._set_element_orders(original, patch, path)
        for key, value in patch.items():
            if key.startswith(_DELETE_PRIMITIVES):
                _delete_from_primitive_list(original, key, value)
            elif value is None:
                original.pop(key, None)
            elif isinstance(value, dict) and value.get(_DIRECTIVE) == "delete" and key not in original:
                continue
            else:
                original[key] = self.value(original.get(key, _ABSENT), value, (*path, key))
        return original

    def value(self, current: Any, value: Any, path: Path) -> Any:
        """Merge ``value`` into ``current`` (``_ABSENT`` or another type: into an empty one)."""
        if isinstance(value, dict):
            return self.map(current if isinstance(current, dict) else {}, value, path)
        if isinstance(value, list):
            return self.list(current if isinstance(current, list) else [], value, path)
        return value

    def list(self, original: list, patch: list, path: Path) -> list:
        merge_key = self.types.merge_key(path)
        if merge_key is None and not self.types.merges_primitives(path):
            return [self.value(_ABSENT, item, (*path, "*")) for item in patch]
        if not original and not patch:
            return original
        if _element_kind(original + patch) is dict:
            if merge_key is None:
                raise PatchError(f"cannot merge lists without merge key for {'.'.join(path)}")
            original, patch = self._special_elements(original, patch, merge_key, path)
            merged = self._merge_by_key(original, patch, merge_key, path)
        else:
            merge_key = None  # scalars are their own key
            merged = _dedupe(original + patch)
        patch_items, server_only = _partition(merged, patch, merge_key)
        return _normalize_order(patch_items, server_only, patch, original, merge_key)

    def _special_elements(self, original: list, patch: list, key: str, path: Path) -> tuple[list, list]:
        """Apply ``$patch`` list items: ``delete`` drops matching live items, ``replace`` the rest."""
        plain, replace = [], False
        for item in patch:
            directive = item.get(_DIRECTIVE, _ABSENT)
            if directive is _ABSENT:
                plain.append(item)
            elif directive == "delete":
                value = _merge_key_value(item, key)
                original = [o for o in original if not _same(o.get(key, _ABSENT), value)]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise PatchError("merging lists cannot yet be specified in the patch")
            else:
                raise PatchError(f"unknown patch type: {directive} in map: {item}")
        if replace:
            return [self.map({}, item, (*path, "*")) for item in plain], []
        return original, plain

    def _merge_by_key(self, original: list, patch: list, key: str, path: Path) -> list:
        merged = list(original)  # `original` stays the live order for _normalize_order
        for item in patch:
            value = _merge_key_value(item, key)
            index = next((i for i, o in enumerate(merged) if _same(o.get(key, _ABSENT), value)), None)
            if index is None:
                merged.append(self.map({}, item, (*path, "*")))
            else:
                merged[index] = self.map(merged[index], item, (*path, "*"))
        return merged

    def _set_element_orders(self, original: dict, patch: dict, path: Path) -> None:
        """Merge each list named by a ``$setElementOrder/<list>`` and order it as the directive says."""
        for directive in [key for key in patch if key.startswith(_SET_ORDER)]:
            order = patch.pop(directive)
            name = directive[len(_SET_ORDER):]
            if not name or not isinstance(order, list):
                raise PatchError("invalid patch format of setElementOrder list")
            live, patched = original.get(name, _ABSENT), patch.pop(name, _ABSENT)
            if live is _ABSENT and patched is _ABSENT:
                continue
            for value in (live, patched):
                if value is not _ABSENT and not isinstance(value, list):
                    raise PatchError(f"expected a list for {name}, but received {type(value).__name__}")
            merge_key = self.types.merge_key((*path, name))
            _validate_order(patched if patched is not _ABSENT else [], order, merge_key)
            if patched is _ABSENT:
                merged = live
            else:
                merged = self.list(live if live is not _ABSENT else [], patched, (*path, name))
            patch_items, server_only = _partition(merged, order, merge_key)
            original[name] = _normalize_order(patch_items, server_only, order,
                                              live if live is not _ABSENT else [], merge_key)


def _retain_keys(original: dict, patch: dict) -> None:
    """``$retainKeys``: drop live keys not listed; every key the patch sets must be listed."""
    if _RETAIN_KEYS not in patch:
        return
    keep = patch.pop(_RETAIN_KEYS)
    if not isinstance(keep, list):
        raise PatchError("invalid patch format of retainKeys")
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_PRIMITIVES, _SET_ORDER)):
            continue
        if key not in keep:
            raise PatchError("invalid patch format of retainKeys")
    for key in [key for key in original if key not in keep]:
        del original[key]


def _delete_from_primitive_list(original: dict, directive: str, values: Any) -> None:
    name = directive[len(_DELETE_PRIMITIVES):]
    if not name or not isinstance(values, list):
        raise PatchError("invalid patch format of primitive list")
    live = original.get(name)
    if isinstance(live, list):
        original[name] = [item for item in live if not any(_same(item, value) for value in values)]


def _element_kind(items: list) -> type:
    """``dict`` for a list of objects, ``object`` for scalars; mixed lists and nesting fail."""
    kinds = {dict if isinstance(item, dict) else list if isinstance(item, list) else object
             for item in items}
    if list in kinds:
        raise PatchError("lists of lists are not supported", 422)
    if len(kinds) > 1:
        raise PatchError(f"list element types are not identical: {items}")
    return kinds.pop()


def _merge_key_value(item: dict, key: str) -> Any:
    if key not in item:
        raise PatchError(f"map: {item} does not contain declared merge key: {key}")
    return item[key]


def _same(a: Any, b: Any) -> bool:
    """JSON equality that, like Go, tells ``true`` from ``1``."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _dedupe(items: list) -> list:
    unique: list = []
    for item in items:
        if not any(_same(item, seen) for seen in unique):
            unique.append(item)
    return unique


def _index(items: list, item: Any, merge_key: str | None) -> int:
    """Position of ``item`` in ``items`` (by merge key for objects), -1 when absent."""
    for position, candidate in enumerate(items):
        if merge_key is None:
            if _same(candidate, item):
                return position
        elif isinstance(candidate, dict) and _same(candidate.get(merge_key, _ABSENT),
                                                   _merge_key_value(item, merge_key)):
            return position
    return -1


def _partition(merged: list, by: list, merge_key: str | None) -> tuple[list, list]:
    """Split into items present in ``by`` and the rest (server-only items)."""
    present: list = []
    rest: list = []
    for item in merged:
        (present if _index(by, item, merge_key) >= 0 else rest).append(item)
    return present, rest


def _normalize_order(patch_items: list, server_only: list, patch_order: list, server_order: list,
                     merge_key: str | None) -> list:
    """Sort each part by its own order, then interleave them by live position."""
    patch_items = sorted(patch_items, key=lambda item: _index(patch_order, item, merge_key))
    server_only = sorted(server_only, key=lambda item: _index(server_order, item, merge_key))
    merged: list = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if j >= len(patch_items):
            merged.append(server_only[i])
            i += 1
            continue
        if i < len(server_only):
            left = _index(server_order, server_only[i], merge_key)
            right = _index(server_order, patch_items[j], merge_key)
            if 0 <= left < right:
                merged.append(server_only[i])
                i += 1
                continue
        merged.append(patch_items[j])
        j += 1
    return merged


def _validate_order(patch_list: list, order: list, merge_key: str | None) -> None:
    """Every patch item must appear in ``$setElementOrder``, in the same relative order."""
    items = [item for item in patch_list if not (isinstance(item, dict) and _DIRECTIVE in item)]
    position = 0
    for wanted in order:
        if position < len(items) and _index([wanted], items[position], merge_key) == 0:
            position += 1
    if position < len(items):
        raise PatchError(f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n")
