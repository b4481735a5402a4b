"""From a PATCH body to the object to write: JSON, merge and strategic merge patches, and
server-side apply (with the client-side → server-side apply takeover).

Pure over dicts: the write pipeline (:mod:`.writes`) decodes, checks preconditions and commits.
Patch engine errors become upstream's answers here: a patch that applies but fails (a json-patch
``test``) is 422 with the patcher's message, a malformed patch document 400.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import BadRequest, Conflict, Invalid, RequestEntityTooLarge, StatusError, status_details
from fakeapi.machinery import apply as ssa
from fakeapi.machinery import managedfields
from fakeapi.machinery.listtypes import ListTypes
from fakeapi.machinery.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
)
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.registry.resource import ResourceType

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply-cbor",
}
# The patch media types served (CBOR apply bodies are refused), in upstream's order.
PATCH_MEDIA = [media for media, kind in PATCH_TYPES.items() if kind != "apply-cbor"]


def _patch_error(exc: PatchError) -> StatusError:
    return {413: RequestEntityTooLarge, 422: Invalid}.get(exc.code, BadRequest)(str(exc))


def patched(old: dict[str, Any], patch_type: str, patch: Any, types: ListTypes, *,
            share: bool = False) -> dict[str, Any]:
    """``old`` with a json, merge or strategic merge patch applied, a private copy.  With
    ``share`` a merge patch's result shares what the patch leaves alone with ``old`` (and its
    values with ``patch``) below the top level and ``metadata``: for a caller that copies the
    rest before editing it."""
    managed = managedfields.stored_managed_fields(old)
    if managed is not None and patch_type in ("merge", "strategic") and _keeps_managed_fields(patch):
        # The entries are carried over uncopied (nothing edits them in place): the patch engines
        # copy the rest, and the field manager finds the stored entries it knows.
        old = {**old, "metadata": {k: v for k, v in old["metadata"].items() if k != "managedFields"}}
    else:
        managed = None
    try:
        if patch_type == "json":
            out = apply_json_patch(old, patch)
        elif patch_type == "merge":
            out = apply_merge_patch(old, patch, share=share)
        elif patch_type == "strategic":
            out = apply_strategic_merge_patch(old, patch, types)
        else:
            raise BadRequest(f"unsupported patch type {patch_type}")
    except PatchError as exc:
        raise _patch_error(exc) from exc
    if not isinstance(out, dict):
        raise BadRequest("the patch must produce an object")
    if share and isinstance(out.get("metadata"), dict):
        out["metadata"] = dict(out["metadata"])  # the write pipeline edits metadata in place
    if managed is not None and isinstance(out.get("metadata"), dict):
        out["metadata"]["managedFields"] = managed
    return out


def _keeps_managed_fields(patch: Any) -> bool:
    """Whether a merge or strategic merge patch leaves ``metadata.managedFields`` as it is: no
    directive above or beside it, no key naming it, metadata left or patched as an object."""
    if not isinstance(patch, dict) or any(key.startswith("$") for key in patch):
        return False
    metadata = patch.get("metadata", {})
    return isinstance(metadata, dict) and not any(key.startswith("$") or "managedFields" in key for key in metadata)


def applied_fields(rt: ResourceType, config: dict[str, Any], subresource: str) -> dict[str, Any]:
    """The part of an apply configuration the endpoint applies (and its manager owns): status
    on ``/status``, a scoped subresource's field on it (``approval``: ``status.conditions``),
    everything but status on the main resource."""
    sub = rt.subresource(subresource) if subresource and subresource != "status" else None
    scope = ("status",) if subresource == "status" else sub.scope if sub is not None else ()
    if scope:
        out = {k: v for k, v in config.items() if k in ("apiVersion", "kind")}
        out["metadata"] = {k: v for k, v in (config.get("metadata") or {}).items()
                           if k in ("name", "namespace", "resourceVersion", "uid")}
        source: Any = config
        target = out
        for key in scope[:-1]:
            source = source.get(key) if isinstance(source, dict) else None
            target = target.setdefault(key, {})
        if isinstance(source, dict) and scope[-1] in source:
            target[scope[-1]] = source[scope[-1]]
        return out
    if rt.has_status:
        config.pop("status", None)
    return config


def server_side_apply(rt: ResourceType, name: str, live: dict[str, Any] | None, applied: dict[str, Any], *,
                      manager: str, force: bool, subresource: str, types: ListTypes) -> dict[str, Any]:
    """Merge ``applied`` into ``live`` (None: nothing stored yet) as ``manager``; 409 on conflicts.

    For manager ``kubectl`` a conflict on fields that client-side apply last set is no conflict:
    the apiserver lets ``kubectl apply --server-side`` take over from ``kubectl apply`` (any other
    manager gets its 409, and kubectl only the conflicts the annotation does not cover).
    """
    def apply(force: bool) -> dict[str, Any]:
        return ssa.server_side_apply(live, applied, manager=manager, force=force, api_version=rt.api_version,
                                     types=types, now=now_rfc3339(), subresource=subresource)

    try:
        try:
            return apply(force)
        except ssa.ApplyConflict as exc:
            if live is None or manager != ssa.LAST_APPLIED_MANAGER:
                raise
            remaining = exc.without(ssa.last_applied_fields(live, types))
            if remaining is not None:
                raise remaining from None
            return apply(True)
    except PatchError as exc:  # an applied configuration whose lists cannot be keyed, ...
        raise _patch_error(exc) from exc
    except ssa.ApplyConflict as exc:
        raise Conflict(str(exc), details={**status_details(rt.plural, rt.group, name),
                                          "causes": exc.causes}) from exc
