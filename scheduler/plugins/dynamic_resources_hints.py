"""DynamicResources' queueing hints (``EventsToRegister``): whether a cluster event may help a
pod the plugin rejected or holds at PreEnqueue, so only such events move it back to the queue."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.framework.interface import QueueingHint
from fakeapi.scheduler.rules.claims import is_deallocation, pod_claim_keys
from fakeapi.scheduler.rules.keys import object_key
from fakeapi.scheduler.rules.podgroups import group_resource_claims, is_group_object, pod_group_instance


def has_claims_hint(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    """A new or changed slice, class or taint rule may help any pod with claims."""
    return QueueingHint.QUEUE if (pod.get("spec") or {}).get("resourceClaims") else QueueingHint.SKIP


def group_hint(pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None) -> QueueingHint:
    """The pod's own group appeared or changed its claims; other status writes do not matter."""
    instance = pod_group_instance(pod)
    if instance is None or new is None or not (pod.get("spec") or {}).get("resourceClaims"):
        return QueueingHint.SKIP
    if not is_group_object(new, instance):
        return QueueingHint.SKIP

    def claims(obj: dict[str, Any] | None) -> Any:
        if obj is None:
            return None
        return group_resource_claims(obj, instance), (obj.get("status") or {}).get("resourceClaimStatuses")
    return QueueingHint.QUEUE if claims(old) != claims(new) else QueueingHint.SKIP


def claim_hint(pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None) -> QueueingHint:
    """The pod's own claim changed, or another claim was deallocated (devices freed)."""
    claim = new or old
    if claim is None or not (pod.get("spec") or {}).get("resourceClaims"):
        return QueueingHint.SKIP
    if object_key(claim) in pod_claim_keys(pod):
        return QueueingHint.QUEUE
    # Someone else's claim: only a deallocation frees devices this pod might use.
    if is_deallocation(old, new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def node_hint(pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None) -> QueueingHint:
    """A new node, or a node whose labels changed (allocated claims' node selectors)."""
    if not (pod.get("spec") or {}).get("resourceClaims"):
        return QueueingHint.SKIP
    if old is None or new is None or old["metadata"].get("labels") != new["metadata"].get("labels"):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def pod_hint(pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None) -> QueueingHint:
    """The pod's claim statuses changed (the ResourceClaim controller named a generated claim)."""
    def statuses(p: dict[str, Any] | None) -> Any:
        return ((p or {}).get("status") or {}).get("resourceClaimStatuses")
    return QueueingHint.QUEUE if statuses(old) != statuses(new) else QueueingHint.SKIP
