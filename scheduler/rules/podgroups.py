"""Which pod-group instance a pod belongs to, and which of its claims are group claims.

Two API shapes name a pod's group, and both resolve to one :class:`PodGroupInstance`:

- 1.36+/1.37 (``scheduling.k8s.io/v1beta1``): ``pod.spec.schedulingGroup.podGroupName`` names a
  standalone ``PodGroup`` object in the pod's namespace; the PodGroup carries
  ``spec.resourceClaims[]`` and is the consumer in ``claim.status.reservedFor``
  (``{apiGroup: scheduling.k8s.io, resource: podgroups, name, uid}``).
- 1.35 / KEP-5729 draft (``scheduling.k8s.io/v1alpha1``): ``pod.spec.workloadRef{name, podGroup,
  podGroupReplicaKey}`` names an inline ``Workload.spec.podGroups[]`` entry; each replica key is a
  separate instance. There is no PodGroup object, so the Workload owns generated claims and is
  the consumer (``resource: workloads``). Claims generated from templates are per instance, so
  a reservation by the Workload is only shared by replicas when they share a claim by name.

KEP-5729 matching rule (api-notes §3.1): a pod claim is a *group claim* iff the group has a
``resourceClaims`` entry with the same ``name`` and the same ``resourceClaimName`` and
``resourceClaimTemplateName`` (unset equals unset). Anything else is an ordinary per-pod claim.

The draft's group-level constraint (a fakeapi extension, v1alpha1 only): an entry that names a
template *and* carries ``constraints`` is not shared.  Every member claim generated from that
template is an ordinary per-pod claim, and the scheduler keeps all devices allocated to those
claims across one instance on one value of each ``matchAttribute``
(:class:`GroupDeviceConstraint`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.rules.keys import key_for

SCHEDULING_GROUP = "scheduling.k8s.io"
PODGROUPS_RESOURCE = "podgroups"
WORKLOADS_RESOURCE = "workloads"


@dataclass(frozen=True, order=True)
class PodGroupInstance:
    """One gang: a PodGroup (v1beta1) or a (workload, podGroup, replicaKey) triple (v1alpha1)."""

    namespace: str
    pod_group: str
    # Set only for the v1alpha1 ``workloadRef`` shape.
    workload: str = ""
    replica_key: str = ""

    @property
    def is_workload_shape(self) -> bool:
        return bool(self.workload)

    @property
    def object_name(self) -> str:
        """Name of the API object holding the group: the PodGroup or the Workload."""
        return self.workload or self.pod_group

    @property
    def consumer_resource(self) -> str:
        """``reservedFor[].resource`` used when a claim is reserved for this group."""
        return WORKLOADS_RESOURCE if self.workload else PODGROUPS_RESOURCE

    @property
    def key(self) -> str:
        """Stable string key, unique per instance across both shapes."""
        if self.workload:
            return f"{self.namespace}/{self.workload}/{self.pod_group}/{self.replica_key}"
        return key_for(self.namespace, self.pod_group)


# A pod group instance -> its PodGroup (or v1alpha1 Workload) object, or None if unknown.
GroupLookup = Callable[[PodGroupInstance], dict[str, Any] | None]


def pod_group_instance(pod: dict) -> PodGroupInstance | None:
    """The instance ``pod`` belongs to, or None for a pod outside any group."""
    spec = pod.get("spec") or {}
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    group_name = (spec.get("schedulingGroup") or {}).get("podGroupName")
    if group_name:
        return PodGroupInstance(namespace, group_name)
    ref = spec.get("workloadRef") or {}
    if ref.get("name") and ref.get("podGroup"):
        return PodGroupInstance(namespace, ref["podGroup"], ref["name"], ref.get("podGroupReplicaKey") or "")
    return None


def pod_group_keys(pod: dict) -> list[str]:
    """The key of the pod's instance, or none: what pods are indexed by to find a gang's members."""
    instance = pod_group_instance(pod)
    return [instance.key] if instance is not None else []


def is_group_object(obj: dict | None, instance: PodGroupInstance) -> bool:
    """Whether a PodGroup or v1alpha1 Workload object is the one holding ``instance``."""
    if obj is None:
        return False
    meta = obj.get("metadata") or {}
    # Both kinds reach the scheduler as pod-group events; only a Workload has inline podGroups.
    is_workload = "podGroups" in (obj.get("spec") or {})
    return (meta.get("namespace", "") == instance.namespace and meta.get("name") == instance.object_name
            and is_workload == instance.is_workload_shape)


def group_priority(group_obj: dict, instance: PodGroupInstance) -> int | None:
    """The group's priority (``spec.priority``, unset = 0, as upstream's ``PodGroupPriority``);
    None for a v1alpha1 Workload, which has none (its pods' priority stands for it)."""
    if instance.is_workload_shape:
        return None
    return int((group_obj.get("spec") or {}).get("priority") or 0)


def _entries(group_obj: dict, instance: PodGroupInstance) -> list[dict]:
    spec = group_obj.get("spec") or {}
    if not instance.is_workload_shape:
        return list(spec.get("resourceClaims") or [])
    for group in spec.get("podGroups") or []:
        if group.get("name") == instance.pod_group:
            return list(group.get("resourceClaims") or [])
    return []


def _per_member(entry: dict) -> bool:
    return bool(entry.get("resourceClaimTemplateName") and entry.get("constraints"))


def group_resource_claims(group_obj: dict, instance: PodGroupInstance) -> list[dict]:
    """The instance's shared ``resourceClaims`` entries, from a PodGroup or a v1alpha1 Workload
    (template entries with group-level constraints are per member, so not among them)."""
    return [entry for entry in _entries(group_obj, instance) if not _per_member(entry)]


@dataclass(frozen=True)
class GroupDeviceConstraint:
    """All devices allocated to the instance's claims of one entry share each attribute's value.

    The claims are the members' claims from ``template`` (any pod-claim name), or the shared
    claim ``claim_name``.
    """

    attributes: tuple[str, ...]
    template: str = ""
    claim_name: str = ""

    def covers(self, pod_claim: dict) -> bool:
        """Whether a pod's ``spec.resourceClaims[]`` entry is one of the constrained claims."""
        if self.template:
            return pod_claim.get("resourceClaimTemplateName") == self.template
        return pod_claim.get("resourceClaimName") == self.claim_name


def group_device_constraints(group_obj: dict, instance: PodGroupInstance) -> list[GroupDeviceConstraint]:
    """The draft's group-level ``matchAttribute`` constraints of an instance (v1alpha1 only)."""
    found = []
    for entry in _entries(group_obj, instance):
        attributes = tuple(c["matchAttribute"] for c in entry.get("constraints") or () if c.get("matchAttribute"))
        if attributes:
            found.append(GroupDeviceConstraint(attributes, entry.get("resourceClaimTemplateName") or "",
                                               "" if entry.get("resourceClaimTemplateName")
                                               else entry.get("resourceClaimName") or ""))
    return found


def matching_group_claim(pod_claim: dict, group_claims: list[dict]) -> dict | None:
    """The group entry that makes ``pod_claim`` a group claim (KEP-5729 rule), or None."""
    for entry in group_claims:
        if (entry.get("name") == pod_claim.get("name")
                and entry.get("resourceClaimName") == pod_claim.get("resourceClaimName")
                and entry.get("resourceClaimTemplateName") == pod_claim.get("resourceClaimTemplateName")):
            return entry
    return None
