"""Server-managed object metadata, the same for every kind: identity, namespace binding, uids,
timestamps, generateName, generation, the fields an update carries over, and the status split.

Validation of what clients set lives in :mod:`fakeapi.validation` (ValidateObjectMeta); this
module only prepares what the server owns.
"""

from __future__ import annotations

import os
import random
from typing import Any

from fakeapi.errors import BadRequest
from fakeapi.machinery import managedfields
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.registry.resource import ResourceType

# The apiserver's generateName alphabet: no vowels (no accidental words) and no look-alikes.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_SUFFIX = 5
MAX_GENERATED_PREFIX = 63 - GENERATE_NAME_SUFFIX
GENERATE_NAME_ATTEMPTS = 8  # one try plus upstream's seven retries

_rng = random.Random()
if hasattr(os, "register_at_fork"):  # (POSIX) a forked child draws other names and uids than its parent
    os.register_at_fork(after_in_child=_rng.seed)
# The version nibble (4) and the variant bits (10) of a random UUID, as uuid.UUID(version=4) sets them.
_UUID_V4_MASK = 0xF000 << 64 | 0xC000 << 48
_UUID_V4_BITS = 0x4000 << 64 | 0x8000 << 48

# Metadata the server owns; clients can't set them on create.
SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
               "deletionGracePeriodSeconds", "generation", "selfLink")
# What an update keeps from the stored object whatever the client sends.
CARRIED_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")


def new_uid() -> str:
    """A random (version 4) UUID, as ``str(uuid.uuid4())`` writes it without building the object.

    From this module's generator rather than the system's entropy: a uid must be unique, not
    unpredictable (122 random bits), and this costs half as much on every create."""
    h = (_rng.getrandbits(128) & ~_UUID_V4_MASK | _UUID_V4_BITS).to_bytes(16, "big").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def generate_name(prefix: str) -> str:
    """``prefix`` cut to 58 characters plus 5 random characters, as upstream's SimpleNameGenerator."""
    suffix = "".join(_rng.choice(NAME_ALPHABET) for _ in range(GENERATE_NAME_SUFFIX))
    return prefix[:MAX_GENERATED_PREFIX] + suffix


def display_name(obj: dict[str, Any]) -> str:
    """The name an error message uses: the name, else the generateName prefix."""
    meta = obj.get("metadata") or {}
    return meta.get("name") or meta.get("generateName", "")


def set_identity(rt: ResourceType, obj: dict[str, Any]) -> None:
    """apiVersion and kind of the served version, first, as every real server prints them."""
    keys = iter(obj)
    if (next(keys, None) == "apiVersion" and next(keys, None) == "kind" and obj["apiVersion"] == rt.api_version
            and obj["kind"] == rt.kind):
        return  # as clients send them, and as every update built from a stored object has them
    rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    obj.clear()
    obj.update({"apiVersion": rt.api_version, "kind": rt.kind, **rest})


# Upstream's EnsureObjectNamespaceMatchesRequestNamespace, for every create, update and patch.
NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"


def bind_namespace(rt: ResourceType, meta: dict[str, Any], namespace: str) -> None:
    """The URL's namespace for namespaced kinds (a different one in the body is a 400), none otherwise."""
    if not rt.namespaced:
        meta.pop("namespace", None)
        return
    body_ns = meta.get("namespace")
    if body_ns and body_ns != namespace:
        raise BadRequest(NAMESPACE_MISMATCH)
    meta["namespace"] = namespace


def carry_over(rt: ResourceType, new_meta: dict[str, Any], old_meta: dict[str, Any]) -> None:
    """An update keeps the stored name, namespace, uid, timestamps and resourceVersion."""
    new_meta["name"] = old_meta["name"]
    if rt.namespaced:
        new_meta["namespace"] = old_meta["namespace"]
    for key in CARRIED_META:
        if key in old_meta:
            new_meta[key] = old_meta[key]
        else:
            new_meta.pop(key, None)
    new_meta["resourceVersion"] = old_meta["resourceVersion"]


def content_without_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def spec_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Generation bumps when anything but metadata and status changes (spec, data, ...)."""
    return content_without_meta(new) != content_without_meta(old)


def keep_status(new: dict[str, Any], old: dict[str, Any]) -> None:
    """A write of the main resource leaves status as stored."""
    if "status" in old:
        # A copy of the top level: defaulting may fill in a field (a pod's qosClass) a status
        # write had removed, which must not edit the stored object.
        new["status"] = dict(old["status"]) if isinstance(old["status"], dict) else old["status"]
    else:
        new.pop("status", None)


def copy_sharing_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``obj`` that shares its managedFields list instead of copying it: the
    entries are never edited in place (a write replaces the list), and managedfields knows the stored
    ones by identity, so the next write decodes nothing."""
    managed = managedfields.stored_managed_fields(obj)
    if managed is None:
        return deep_copy(obj)
    # A placeholder keeps the key where it was.
    meta = {k: None if k == "managedFields" else v for k, v in obj["metadata"].items()}
    out = deep_copy({**obj, "metadata": meta})
    out["metadata"]["managedFields"] = managed
    return out


def status_only(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """A status write changes status only (``ResetObjectMetaForStatus`` keeps old metadata).

    Status is a copy the write may edit, metadata a copy of ``old``'s top level (the write sets
    resourceVersion, generation and managedFields there); the rest, and the values within
    metadata (labels, annotations, owner references, finalizers), are ``old``'s own, shared:
    nothing below them is edited on a status write (a strategy drops disabled fields in spec or
    status only), and no write edits a stored object.
    """
    out = {k: v for k, v in old.items() if k != "status"}
    out["metadata"] = dict(old["metadata"])
    if "status" in new:
        out["status"] = deep_copy(new["status"])
    return out


def scoped(new: dict[str, Any], old: dict[str, Any], scope: tuple[str, ...]) -> dict[str, Any]:
    """``old`` with only the field at ``scope`` taken from ``new`` (a subresource that changes one
    field, as ``pods/ephemeralcontainers`` changes ``spec.ephemeralContainers``)."""
    out = copy_sharing_managed_fields(old)  # metadata included: a subresource write changes none of it
    source: Any = new
    for key in scope[:-1]:
        source = source.get(key) if isinstance(source, dict) else None
    target = out
    for key in scope[:-1]:
        target = target.setdefault(key, {})
    if isinstance(source, dict) and scope[-1] in source:
        target[scope[-1]] = deep_copy(source[scope[-1]])
    else:
        target.pop(scope[-1], None)
    return out
