"""Validation shared by every kind: ObjectMeta, list helpers and immutability.

Mirrors ``ValidateObjectMeta``/``ValidateObjectMetaUpdate`` and the ``validateSet``/``validateSlice``
helpers of upstream's resource validation: a list over its limit yields one TooMany error and
nothing else (DoS protection), duplicates are reported at the item's index.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

import orjson

from fakeapi.errors import FieldError, duplicate, forbidden, invalid, required, too_many
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.quantity import QuantityError, parse_quantity
from fakeapi.validation import names

IMMUTABLE = "field is immutable"
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
ItemCheck = Callable[[Any, str], list[FieldError]]


def validate_list(items: list[Any] | None, path: str, max_items: int, check: ItemCheck | None = None,
                  key: Callable[[Any], Hashable] | None = None) -> list[FieldError]:
    """Size limit (short-circuits), per-item checks, then duplicates by ``key``."""
    items = items or []
    if max_items >= 0 and len(items) > max_items:
        return [too_many(path, len(items), max_items)]
    errs: list[FieldError] = []
    if check is not None:
        for i, item in enumerate(items):
            errs += check(item, f"{path}[{i}]")
    if key is not None:
        seen: set[Hashable] = set()
        for i, item in enumerate(items):
            k = key(item)
            if k in seen:
                errs.append(duplicate(f"{path}[{i}]", k))
            seen.add(k)
    return errs


def remember_valid(check: Callable[[Any], list[FieldError]], limit: int = 1024) -> Callable[[Any], list[FieldError]]:
    """``check``, a pure function of one JSON value, skipped for values it found valid before.

    Values are known by their JSON, which tells ``1``, ``1.0`` and ``true`` apart: objects made
    from one template (a Deployment's pods, a claim template's claims) come with equal specs, and
    serializing one costs a tenth of checking it.  Up to ``limit`` values are kept."""
    valid: Memo[bytes, bool] = Memo(limit)

    def checked(value: Any) -> list[FieldError]:
        try:
            key = orjson.dumps(value)
        except orjson.JSONEncodeError:  # not JSON (an integer beyond 64 bits): the commit refuses it
            return check(value)
        if key in valid:
            return []
        errs = check(value)
        if not errs:
            valid.keep(key, True)
        return errs
    return checked


def immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    """``ValidateImmutableField``: Invalid with the new value when it changed."""
    return [] if new == old else [invalid(path, new, IMMUTABLE)]


def validate_immutable_data(new: dict[str, Any], old: dict[str, Any], keys: tuple[str, ...]) -> list[FieldError]:
    """A ConfigMap or Secret marked ``immutable`` keeps its data and stays immutable."""
    if not old.get("immutable"):
        return []
    errs = [forbidden(key, IMMUTABLE_WHEN_SET) for key in keys if new.get(key) != old.get(key)]
    if not new.get("immutable"):
        errs.append(forbidden("immutable", IMMUTABLE_WHEN_SET))
    return errs


def validate_labels(labels: dict[str, str] | None, path: str) -> list[FieldError]:
    """Label keys are qualified names, values label values."""
    errs: list[FieldError] = []
    for k, v in (labels or {}).items():
        errs += names.check(path, k, names.qualified_name)
        errs += names.check(path, v, names.label_value)
    return errs


def validate_annotations(annotations: dict[str, str] | None, path: str) -> list[FieldError]:
    """Annotation keys are qualified names (lowercased); the total size is at most 256 KiB."""
    errs: list[FieldError] = []
    total = 0
    for k, v in (annotations or {}).items():
        errs += names.check(path, k.lower(), names.qualified_name)
        total += len(k) + len(v)
    if total > 256 * 1024:
        errs.append(FieldError("FieldValueTooLong", path, "may not be more than 262144 bytes"))
    return errs


def validate_object_meta(meta: dict[str, Any] | None, path: str, *, namespaced: bool,
                         name_check: names.Checker, old: dict[str, Any] | None = None) -> list[FieldError]:
    """Generic ObjectMeta rules: name/generateName format, namespace scope, labels, finalizers, owners.

    On an update, ``old`` is the stored object's metadata: labels, annotations, finalizers and
    owner references equal to its own passed these checks when it was stored (each section's
    rules look at that section alone), so only the sections the write changed are walked."""
    meta = meta or {}
    old = old or {}
    errs: list[FieldError] = []
    name, generate = meta.get("name"), meta.get("generateName")
    if generate:
        # generateName may end with anything a name may contain after trimming the dash.
        errs += [invalid(f"{path}.generateName", generate, m)
                 for m in name_check(generate.rstrip("-") or "a")]
    if not name:
        if not generate:
            errs.append(required(f"{path}.name", "name or generateName is required"))
    elif messages := names.problems(name, name_check):
        errs += [invalid(f"{path}.name", name, m) for m in messages]
    ns = meta.get("namespace")
    if namespaced:
        if not ns:
            errs.append(required(f"{path}.namespace"))
        elif messages := names.problems(ns, names.dns1123_label):
            errs += [invalid(f"{path}.namespace", ns, m) for m in messages]
    elif ns:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    if (meta.get("generation") or 0) < 0:
        errs.append(invalid(f"{path}.generation", meta["generation"], "must be greater than or equal to 0"))
    # Most objects lack most of these: no path is formatted for what is absent.
    if (labels := meta.get("labels")) and labels != old.get("labels"):
        errs += validate_labels(labels, f"{path}.labels")
    if (annotations := meta.get("annotations")) and annotations != old.get("annotations"):
        errs += validate_annotations(annotations, f"{path}.annotations")
    if (finalizers := meta.get("finalizers")) and finalizers != old.get("finalizers"):
        errs += validate_list(finalizers, f"{path}.finalizers", -1,
                              lambda f, p: names.check(p, f, names.qualified_name), key=lambda f: f)
    if not (owners := meta.get("ownerReferences")) or owners == old.get("ownerReferences"):
        return errs
    errs += validate_list(owners, f"{path}.ownerReferences", -1, _owner_reference)
    controllers = [o for o in owners if o.get("controller")]
    if len(controllers) > 1:
        refs = " and ".join(f"{o.get('kind')}/{o.get('name')}" for o in controllers)
        errs.append(invalid(f"{path}.ownerReferences", meta["ownerReferences"],
                            "Only one reference can have Controller set to true. "
                            f'Found "true" in references for {refs}'))
    return errs


def _owner_reference(ref: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("apiVersion", "kind", "name", "uid"):
        if not ref.get(key):
            errs.append(invalid(f"{path}.{key}", ref.get(key, ""), f"{key} must not be empty"))
    return errs


def validate_object_meta_update(new: dict[str, Any] | None, old: dict[str, Any] | None,
                                path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: name, namespace, uid and creationTimestamp never change, and
    no finalizer may be added once the object is being deleted."""
    new, old = new or {}, old or {}
    errs: list[FieldError] = []
    if old.get("deletionTimestamp"):
        known = set(old.get("finalizers") or [])
        added = [f for f in new.get("finalizers") or [] if f not in known]
        if added:
            listed = ", ".join(f'"{f}"' for f in added)
            errs.append(forbidden(f"{path}.finalizers", "no new finalizers can be added if the object is being "
                                                        f"deleted, found new finalizers []string{{{listed}}}"))
    for key in ("name", "namespace", "uid", "creationTimestamp"):
        if key in old and new.get(key) != old.get(key):
            errs += immutable(new.get(key), old.get(key), f"{path}.{key}")
    return errs


def get(obj: dict[str, Any] | None, *keys: str) -> Any:
    """Nested lookup that tolerates missing levels: ``get(obj, "spec", "devices")``."""
    cur: Any = obj
    for key in keys:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def newest(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of several objects claiming one role (the default IngressClass or StorageClass), the one
    upstream's admission picks: the newest, then the first by name among those created in the same
    second."""
    # RFC 3339 UTC timestamps sort as text; a stable sort keeps name order within a second.
    ordered = sorted(objects, key=lambda obj: (obj.get("metadata") or {}).get("name") or "")
    ordered.sort(key=lambda obj: (obj.get("metadata") or {}).get("creationTimestamp") or "", reverse=True)
    return ordered[0] if ordered else None


def field_bytes(value: Any) -> bytes:
    """A ``[]byte`` field's bytes (decoding checked its base64 already; anything else reads as none)."""
    if not isinstance(value, str):
        return b""
    try:
        return b64decode(value)
    except (binascii.Error, ValueError):
        return b""


def quantity_value(value: Any) -> Fraction | None:
    """A decoded quantity's value (decoding refused every unreadable one), None if unreadable."""
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError):
        return None
