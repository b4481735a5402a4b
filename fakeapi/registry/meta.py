"""Generic ObjectMeta handling shared by every kind: names, uids, timestamps, generations."""

from __future__ import annotations

import random
import uuid
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, required

# The apiserver's generateName alphabet: no vowels (no accidental words) and no look-alikes.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_SUFFIX = 5
MAX_GENERATED_PREFIX = 63 - GENERATE_NAME_SUFFIX
GENERATE_NAME_ATTEMPTS = 8  # one try plus upstream's seven retries

_rng = random.Random()

# Metadata the server owns; clients can't set them on create.
SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
               "deletionGracePeriodSeconds", "generation", "selfLink")


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    """``prefix`` cut to 58 characters plus 5 random characters, as upstream's SimpleNameGenerator."""
    suffix = "".join(_rng.choice(NAME_ALPHABET) for _ in range(GENERATE_NAME_SUFFIX))
    return prefix[:MAX_GENERATED_PREFIX] + suffix


def content_without_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def spec_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Generation bumps when anything but metadata and status changes (spec, data, ...)."""
    return content_without_meta(new) != content_without_meta(old)


def meta_equal_for_noop(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """True if ``new`` would change nothing observable (managedFields and RV aside)."""
    def strip(o: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (o.get("metadata") or {}).items()
                if k not in ("managedFields", "resourceVersion")}
        return {**o, "metadata": meta}
    return strip(new) == strip(old)


def validate_finalizer_changes(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """No new finalizers may be added once an object is being deleted."""
    if not (old.get("metadata") or {}).get("deletionTimestamp"):
        return []
    old_f = set((old.get("metadata") or {}).get("finalizers") or [])
    added = [f for f in (new.get("metadata") or {}).get("finalizers") or [] if f not in old_f]
    if not added:
        return []
    listed = ", ".join(f'"{f}"' for f in added)
    return [forbidden("metadata.finalizers",
                      f"no new finalizers can be added if the object is being deleted, "
                      f"found new finalizers []string{{{listed}}}")]


def validate_basic_meta(obj: dict[str, Any]) -> list[FieldError]:
    """Structural metadata checks every kind shares (the kinds validate name formats)."""
    meta = obj.get("metadata")
    errors: list[FieldError] = []
    if not isinstance(meta, dict):
        return [required("metadata")]
    if not meta.get("name") and not meta.get("generateName"):
        errors.append(required("metadata.name", "name or generateName is required"))
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is not None and (not isinstance(value, dict)
                                  or not all(isinstance(v, str) for v in value.values())):
            errors.append(invalid(f"metadata.{field}", value, "must be a map of string to string"))
    finalizers = meta.get("finalizers")
    if finalizers is not None and (not isinstance(finalizers, list)
                                   or not all(isinstance(f, str) for f in finalizers)):
        errors.append(invalid("metadata.finalizers", finalizers, "must be a list of strings"))
    return errors
