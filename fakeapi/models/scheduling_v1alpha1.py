"""``scheduling.k8s.io/v1alpha1``: the Kubernetes 1.35 Workload, extended as the KEP-5729 draft proposed.

Upstream 1.35 has ``spec.podGroups[]`` with ``policy.basic|gang.minCount``.  The draft fields
``podGroups[].resourceClaims[]`` (with optional ``constraints[].matchAttribute``) never shipped
upstream; they are fakeapi extensions and their descriptions say so.
"""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, Int32, KubeModel, TopLevel, list_map, opt, patch_merge, req
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.scheduling.v1alpha1"
GROUP, VERSION = "scheduling.k8s.io", "v1alpha1"
EXTENSION = "fakeapi extension (KEP-5729 draft, not in upstream Kubernetes): "


class TypedLocalObjectReference(KubeModel):
    """The object that manages a Workload."""

    api_group: str | None = opt("API group of the object; empty for core.")
    kind: str = req("Kind of the object.")
    name: str = req("Name of the object.")


class BasicSchedulingPolicy(KubeModel):
    """Pods are scheduled independently; no fields (strict decoding rejects any key)."""


class GangSchedulingPolicy(KubeModel):
    """All-or-nothing scheduling of at least minCount pods per replica key."""

    min_count: Int32 = req("Minimum number of pods scheduled together; at least 1.")


class PodGroupPolicy(KubeModel):
    """Exactly one of basic or gang."""

    basic: BasicSchedulingPolicy | None = opt("Pods are scheduled independently.")
    gang: GangSchedulingPolicy | None = opt("Pods are scheduled as a gang.")


class PodGroupClaimConstraint(KubeModel):
    """fakeapi extension (KEP-5729 draft): a constraint across the devices of a pod-group claim."""

    match_attribute: str | None = opt(
        EXTENSION + "fully qualified device attribute that all devices allocated for this claim "
        "across the pod group must share.")


class PodGroupResourceClaim(KubeModel):
    """fakeapi extension (KEP-5729 draft): a claim shared by every pod of a pod-group instance."""

    name: str = req(EXTENSION + "DNS label, unique in the pod group; pods use the same entry name.")
    resource_claim_name: str | None = opt(EXTENSION + "an existing ResourceClaim in the namespace.")
    resource_claim_template_name: str | None = opt(
        EXTENSION + "a template; one claim is generated per pod-group instance.")
    constraints: list[PodGroupClaimConstraint] | None = opt(
        EXTENSION + "constraints across the devices allocated for this claim.", markers=ATOMIC)


class PodGroup(KubeModel):
    """A named group of pods inside a Workload; each replica key is one gang instance."""

    name: str = req("DNS label, unique in the Workload.")
    policy: PodGroupPolicy = req("Basic or gang scheduling.")
    resource_claims: list[PodGroupResourceClaim] | None = opt(
        EXTENSION + "claims shared by the pods of each instance; at most 4.",
        # Marked like the v1beta1 PodGroupTemplate.resourceClaims this draft field became.
        markers=list_map("name") | patch_merge("name", retain_keys=True))


class WorkloadSpec(KubeModel):
    """The pod groups of a workload; immutable."""

    controller_ref: TypedLocalObjectReference | None = opt("Managing object; immutable once set.")
    pod_groups: list[PodGroup] = req("Pod groups; 1 to 8; immutable.", markers=list_map("name"))


class Workload(TopLevel):
    """A workload with inline pod groups (Kubernetes 1.35 shape)."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "Workload")
    api_version: str | None = opt("scheduling.k8s.io/v1alpha1")
    kind: str | None = opt("Workload")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: WorkloadSpec = req("The pod groups.")


MODELS: dict[str, type[TopLevel]] = {"Workload": Workload}
