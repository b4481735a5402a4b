"""Pure ResourceClaim rules shared by the claim controller, the kubelet emulation and the scheduler.

Nothing here does I/O: each function takes plain JSON dicts and returns a value, so every rule
is tested with tables.  The rules follow ``k8s.io/dynamic-resource-allocation/resourceclaim``
and ``pkg/controller/resourceclaim`` upstream:

- which claim a pod's ``spec.resourceClaims[]`` entry names (by name, or generated from a
  template and recorded in ``status.resourceClaimStatuses``);
- the body, name and owner of a generated claim, and finding one generated earlier;
- reservations: who ``status.reservedFor`` names (a pod, or a pod group for KEP-5729 group
  claims), whether a pod may use the claim, and the claim after releasing consumers.
"""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.rules.keys import key_for, object_key
from fakeapi.scheduler.rules.podgroups import SCHEDULING_GROUP, PodGroupInstance, pod_group_instance

from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.resourcelimits import RESERVED_FOR_MAX_SIZE

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
        raise ClaimNotCreated(f'pod "{object_key(pod)}": ResourceClaim not created yet')
    raise ValueError(f'pod "{object_key(pod)}", spec.resourceClaim "{pod_claim.get("name")}": '
                     "unsupported resource claim source")


def pod_claim_keys(pod: dict[str, Any]) -> list[str]:
    """``namespace/name`` keys of the claims the pod uses, as far as they are known yet.

    Entries that need no claim, template claims not generated yet and unsupported sources are
    left out: callers index pods by these keys, and such entries name nothing to look up.
    """
    namespace = (pod.get("metadata") or {}).get("namespace")
    keys = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, _ = pod_claim_name(pod, pod_claim)
        except ValueError:   # ClaimNotCreated included
            continue
        if name:
            keys.append(key_for(namespace, name))
    return keys


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
    """Whether ``owner`` (by UID) is the claim's controller."""
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
    """Whether a template's claim asks for admin access to devices (gated by DRAAdminAccess)."""
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


def is_allocated(claim: dict) -> bool:
    """Whether ``status.allocation`` is set."""
    return bool((claim.get("status") or {}).get("allocation"))


def is_deallocation(old: dict | None, new: dict | None) -> bool:
    """Whether a claim change (``new`` None: deletion) frees devices: allocated before, not now."""
    return old is not None and is_allocated(old) and not (new is not None and is_allocated(new))


def reserved_for(claim: dict) -> list[dict]:
    """A copy of ``status.reservedFor`` (empty when unset)."""
    return list((claim.get("status") or {}).get("reservedFor") or [])


def can_be_reserved(claim: dict) -> bool:
    """Whether one more consumer fits into ``reservedFor`` (the API caps its size)."""
    # No copy: the scheduler asks this for every node it filters.
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE


def pod_consumer_ref(pod: dict) -> dict:
    """The ``reservedFor`` entry that reserves a claim for ``pod`` itself."""
    meta = pod["metadata"]
    return {"resource": "pods", "name": meta["name"], "uid": meta["uid"]}


def group_consumer_ref(group_obj: dict, instance: PodGroupInstance) -> dict:
    """The ``reservedFor`` entry that reserves a claim for the whole group."""
    meta = group_obj.get("metadata") or {}
    return {"apiGroup": SCHEDULING_GROUP, "resource": instance.consumer_resource,
            "name": meta.get("name", instance.object_name), "uid": meta.get("uid", "")}


def _device_results(allocation: dict | None) -> list[tuple[str, str, str, str]]:
    results = ((allocation or {}).get("devices") or {}).get("results") or ()
    return sorted((r.get("request", ""), r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                  for r in results)


def is_written(claim: dict, allocation: dict | None, consumer: dict) -> bool:
    """Whether ``claim`` shows the scheduler's write: reserved for ``consumer`` (by UID) and, if
    ``allocation`` is given, allocated exactly its devices.  After a write whose answer was lost,
    this tells a committed write from one that never happened (or lost to someone else's)."""
    if not any(ref.get("uid") == consumer.get("uid") for ref in reserved_for(claim)):
        return False
    return allocation is None or (
        is_allocated(claim) and _device_results(claim["status"]["allocation"]) == _device_results(allocation))


def is_pod_consumer(ref: dict, pod_uid: str | None) -> bool:
    """Whether a ``reservedFor`` entry reserves the claim for the pod with ``pod_uid``."""
    return not ref.get("apiGroup") and ref.get("resource") == "pods" and ref.get("uid") == pod_uid


def is_group_consumer(ref: dict, instance: PodGroupInstance | None) -> bool:
    """Whether a ``reservedFor`` entry reserves the claim for ``instance`` (name-only match).

    Upstream's kubelet and scheduler compare only the name: the group's protection finalizer
    guarantees a same-named group is the same object while a reservation exists.
    """
    if instance is None:
        return False
    return (ref.get("apiGroup") == SCHEDULING_GROUP
            and ref.get("resource") == instance.consumer_resource
            and ref.get("name") == instance.object_name)


def is_reserved_for(claim: dict, consumer: dict, instance: PodGroupInstance | None) -> bool:
    """Whether ``claim`` is already reserved for ``consumer``, a pod's or ``instance``'s ref."""
    if consumer.get("resource") == "pods":
        return any(is_pod_consumer(ref, consumer.get("uid")) for ref in reserved_for(claim))
    return any(is_group_consumer(ref, instance) for ref in reserved_for(claim))


def is_reserved_for_group_of(claim: dict, pod: dict) -> bool:
    """Whether ``claim`` is reserved for the pod's group (a KEP-5729 group claim)."""
    instance = pod_group_instance(pod)
    return any(is_group_consumer(ref, instance) for ref in reserved_for(claim))


def claim_allows_pod(claim: dict, pod: dict) -> bool:
    """Kubelet/scheduler "allowed pod" check: reserved for the pod itself or for its group."""
    uid = (pod.get("metadata") or {}).get("uid")
    return any(is_pod_consumer(ref, uid) for ref in reserved_for(claim)) or is_reserved_for_group_of(claim, pod)


def has_delete_protection(claim: dict) -> bool:
    """Whether the scheduler's finalizer marks the allocation as the scheduler's to clear."""
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
    """Copy of ``claim`` without the scheduler's finalizer (other finalizers kept)."""
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
