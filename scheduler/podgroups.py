"""Pure helpers: which pod-group instance a pod belongs to, and which of its claims are group claims.

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
"""

from __future__ import annotations

from dataclasses import dataclass

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
        return f"{self.namespace}/{self.pod_group}"


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


def group_resource_claims(group_obj: dict, instance: PodGroupInstance) -> list[dict]:
    """The instance's ``resourceClaims`` entries, from a PodGroup or a v1alpha1 Workload."""
    spec = group_obj.get("spec") or {}
    if not instance.is_workload_shape:
        return list(spec.get("resourceClaims") or [])
    for group in spec.get("podGroups") or []:
        if group.get("name") == instance.pod_group:
            return list(group.get("resourceClaims") or [])
    return []


def matching_group_claim(pod_claim: dict, group_claims: list[dict]) -> dict | None:
    """The group entry that makes ``pod_claim`` a group claim (KEP-5729 rule), or None."""
    for entry in group_claims:
        if (entry.get("name") == pod_claim.get("name")
                and entry.get("resourceClaimName") == pod_claim.get("resourceClaimName")
                and entry.get("resourceClaimTemplateName") == pod_claim.get("resourceClaimTemplateName")):
            return entry
    return None


def consumer_ref(group_obj: dict, instance: PodGroupInstance) -> dict:
    """The ``reservedFor`` entry that reserves a claim for the whole group."""
    meta = group_obj.get("metadata") or {}
    return {"apiGroup": SCHEDULING_GROUP, "resource": instance.consumer_resource,
            "name": meta.get("name", instance.object_name), "uid": meta.get("uid", "")}


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


def is_pod_consumer(ref: dict, pod: dict) -> bool:
    meta = pod.get("metadata") or {}
    return (not ref.get("apiGroup") and ref.get("resource") == "pods"
            and ref.get("uid") == meta.get("uid"))


def claim_allows_pod(claim: dict, pod: dict) -> bool:
    """Kubelet/scheduler "allowed pod" check: reserved for the pod itself or for its group."""
    instance = pod_group_instance(pod)
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if is_pod_consumer(ref, pod) or is_group_consumer(ref, instance):
            return True
    return False
