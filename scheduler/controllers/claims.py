"""Pure ResourceClaim rules shared by the claim controller, the kubelet emulation and the scheduler.

Nothing here does I/O: each function takes plain JSON dicts and returns a value, so every rule
is tested with tables.  The rules follow ``k8s.io/dynamic-resource-allocation/resourceclaim``
and ``pkg/controller/resourceclaim`` upstream.
"""

from __future__ import annotations

from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.models.resource_v1 import DELETE_PROTECTION_FINALIZER, RESERVED_FOR_MAX_SIZE

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# 63 characters minus the 5 random characters and the hyphen the API server appends.
_MAX_GENERATE_NAME_BASE = 57


class ClaimNotCreated(ValueError):
    """A template claim of the pod has no generated ResourceClaim yet."""


def pod_claim_name(pod: dict, pod_claim: dict) -> tuple[str | None, bool]:
    """Name of the ResourceClaim behind ``pod.spec.resourceClaims[]`` entry ``pod_claim``.

    Returns ``(name, must_check_owner)``; ``name`` None means "no claim needed" (the status entry
    exists without a name).  ``must_check_owner`` is True for generated claims, which only
    count when the pod owns them (or its pod group does, for group claims).
    Raises :class:`ClaimNotCreated` when a template claim has no status entry yet.
    """
    if pod_claim.get("resourceClaimName"):
        return pod_claim["resourceClaimName"], False
    if pod_claim.get("resourceClaimTemplateName"):
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            if status.get("name") == pod_claim.get("name"):
                return status.get("resourceClaimName") or None, True
        raise ClaimNotCreated(f'pod "{_pod_ref(pod)}": ResourceClaim not created yet')
    raise ValueError(f'pod "{_pod_ref(pod)}", spec.resourceClaim "{pod_claim.get("name")}": '
                     "unsupported resource claim source")


def _pod_ref(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def generate_name(owner_name: str, claim_entry_name: str) -> str:
    """``<owner>-<entry>-``, both parts truncated in proportion when the result would be too long.

    Truncating only the end (as the API server would) would lose the entry name entirely for
    long owner names; upstream's formula (including the missing trailing hyphen once truncated)
    is kept so names match a real cluster's.
    """
    name = f"{owner_name}-{claim_entry_name}-"
    if len(name) <= _MAX_GENERATE_NAME_BASE:
        return name
    total = len(name)
    return (owner_name[: len(owner_name) * _MAX_GENERATE_NAME_BASE // total] + "-"
            + claim_entry_name[: len(claim_entry_name) * _MAX_GENERATE_NAME_BASE // total])


def controller_owner_ref(owner: dict) -> dict:
    """``ownerReferences[]`` entry making ``owner`` (with kind and apiVersion) the controller."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": meta["name"], "uid": meta["uid"], "controller": True}


def controller_uid(obj: dict) -> str | None:
    """UID of the object's controlling owner, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def controlling_pod(claim: dict) -> tuple[str, str] | None:
    """(name, uid) of the Pod that controls a generated claim, or None."""
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return ref.get("name", ""), ref.get("uid", "")
    return None


def is_owned_by(claim: dict, owner: dict) -> bool:
    return controller_uid(claim) == owner["metadata"]["uid"]


def new_claim_from_template(template: dict, owner: dict, entry_name: str, *, base_name: str | None = None,
                            annotations: dict[str, str] | None = None) -> dict:
    """The ResourceClaim body generated for ``owner``'s claim entry ``entry_name``.

    ``base_name`` replaces the owner's name in ``generateName``; ``annotations`` are added to
    the template's (both serve claims of v1alpha1 pod-group instances).
    """
    template_meta = (template.get("spec") or {}).get("metadata") or {}
    all_annotations = dict(template_meta.get("annotations") or {})
    all_annotations.update(annotations or {})
    all_annotations[POD_CLAIM_NAME_ANNOTATION] = entry_name
    metadata: dict = {
        "generateName": generate_name(base_name or owner["metadata"]["name"], entry_name),
        "namespace": owner["metadata"]["namespace"],
        "ownerReferences": [controller_owner_ref(owner)],
        "annotations": all_annotations,
    }
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
            "spec": deep_copy((template.get("spec") or {}).get("spec") or {})}


def needs_admin_access(template: dict) -> bool:
    requests = (((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []
    return any((r.get("exactly") or {}).get("adminAccess") for r in requests)


def find_generated_claim(claims: list[dict], owner: dict, entry_name: str,
                         annotations: dict[str, str] | None = None) -> dict | None:
    """A claim generated earlier for ``owner``'s entry (an orphan the status lost), if any;
    ``annotations`` must match too when given."""
    wanted = {**(annotations or {}), POD_CLAIM_NAME_ANNOTATION: entry_name}
    for claim in claims:
        have = (claim.get("metadata") or {}).get("annotations") or {}
        if is_owned_by(claim, owner) and all(have.get(k) == v for k, v in wanted.items()):
            return claim
    return None


def is_pod_done(pod: dict) -> bool:
    """No container runs now or ever will: terminal phase, or deleted before being scheduled."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return True
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and not (pod.get("spec") or {}).get("nodeName")


def pod_needs_claims(pod: dict, deleted: bool) -> bool:
    """False once the pod's reservations can be released."""
    return not deleted and not is_pod_done(pod)


def is_allocated(claim: dict) -> bool:
    return bool((claim.get("status") or {}).get("allocation"))


def reserved_for(claim: dict) -> list[dict]:
    return list((claim.get("status") or {}).get("reservedFor") or [])


def can_be_reserved(claim: dict) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def has_delete_protection(claim: dict) -> bool:
    return DELETE_PROTECTION_FINALIZER in ((claim.get("metadata") or {}).get("finalizers") or [])


def with_reservations(claim: dict, valid: list[dict]) -> dict:
    """Copy of ``claim`` reserved only for ``valid``; deallocated when nothing is left and the
    scheduler's finalizer shows the allocation is ours to clear."""
    updated = deep_copy(claim)
    status = updated.setdefault("status", {})
    status["reservedFor"] = valid
    if not valid:
        status.pop("reservedFor")
        if has_delete_protection(claim):
            status.pop("allocation", None)
    return updated


def without_delete_protection(claim: dict) -> dict:
    updated = deep_copy(claim)
    meta = updated["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != DELETE_PROTECTION_FINALIZER]
    return updated


def merged_claim_statuses(current: list[dict], new: dict[str, str]) -> list[dict]:
    """``resourceClaimStatuses`` with ``new`` names set, other entries kept in order."""
    merged = [dict(entry) for entry in current]
    seen = set()
    for entry in merged:
        if entry.get("name") in new:
            entry["resourceClaimName"] = new[entry["name"]]
            seen.add(entry["name"])
    merged.extend({"name": name, "resourceClaimName": claim} for name, claim in new.items() if name not in seen)
    return merged
