"""``scheduling.k8s.io/v1beta1``: Workload and PodGroup in the Kubernetes 1.37 shape.

A Workload is only a set of templates; the creating controller copies a template into a
self-contained PodGroup, which the scheduler gang-schedules and which may own ResourceClaims
(KEP-5729).
"""

from __future__ import annotations  # CompositePodGroupTemplate names itself (see fakeapi.models)

from typing import ClassVar

from fakeapi.models.base import ATOMIC, VALUE_STRUCT, Int32, KubeModel, TopLevel, list_map, opt, patch_merge, req
from fakeapi.models.meta import Condition, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.scheduling.v1beta1"

GROUP, VERSION = "scheduling.k8s.io", "v1beta1"


class TypedLocalObjectReference(KubeModel):
    """The object that manages a Workload (e.g. a Job)."""

    api_group: str | None = opt("API group of the object; empty for core.")
    kind: str = req("Kind of the object.")
    name: str = req("Name of the object.")


class BasicSchedulingPolicy(KubeModel):
    """Pods are scheduled independently; no fields (strict decoding rejects any key)."""


class SingleDisruptionMode(KubeModel):
    """Pods can be disrupted one by one; no fields."""


class AllDisruptionMode(KubeModel):
    """The whole group is disrupted together; no fields."""


class GangSchedulingPolicy(KubeModel):
    """All-or-nothing scheduling of at least minCount pods."""

    min_count: Int32 = req("Minimum number of pods scheduled together; at least 1.")


class PodGroupSchedulingPolicy(KubeModel):
    """Exactly one of basic or gang."""

    basic: BasicSchedulingPolicy | None = opt("Pods are scheduled independently.")
    gang: GangSchedulingPolicy | None = opt("Pods are scheduled as a gang.")


class TopologyConstraint(KubeModel):
    """Place all pods of the group in one topology domain."""

    key: str = req("Node label key identifying the domain.")


class PodGroupSchedulingConstraints(KubeModel):
    """Placement constraints of a pod group."""

    topology: list[TopologyConstraint] | None = opt("At most one topology constraint.",
                                                    markers=ATOMIC)


class DisruptionMode(KubeModel):
    """How pods of the group may be disrupted: exactly one of single or all."""

    single: SingleDisruptionMode | None = opt("Pods can be disrupted one by one (default).")
    all: AllDisruptionMode | None = opt("The whole group is disrupted together.")


class PodGroupResourceClaim(KubeModel):
    """A claim shared by all pods of the group: exactly one of the two sources."""

    name: str = req("DNS label, unique in the group; pods use the same entry name.")
    resource_claim_name: str | None = opt("An existing ResourceClaim in the namespace.")
    resource_claim_template_name: str | None = opt("A template; one claim is generated per PodGroup.")


class PodGroupResourceClaimStatus(KubeModel):
    """The generated claim for a template-based PodGroup claim."""

    name: str = req("Name of the entry in spec.resourceClaims.")
    resource_claim_name: str | None = opt("Generated claim; unset means no claim is needed.")


class PodGroupTemplate(KubeModel):
    """A template copied into PodGroups created for the Workload."""

    name: str = req("DNS label, unique in the Workload.")
    scheduling_policy: PodGroupSchedulingPolicy = req("Basic or gang scheduling.")
    scheduling_constraints: PodGroupSchedulingConstraints | None = opt("Topology constraints.")
    resource_claims: list[PodGroupResourceClaim] | None = opt(
        "Claims shared by the group; at most 4 (gate DRAWorkloadResourceClaims).",
        markers=list_map("name") | patch_merge("name", retain_keys=True))
    disruption_mode: DisruptionMode | None = opt("Disruption mode.")
    priority_class_name: str | None = opt("Priority class of the group.")
    priority: Int32 | None = opt("Priority value.")
    preemption_policy: str | None = opt("Never or PreemptLowerPriority.")


class CompositeBasicSchedulingPolicy(KubeModel):
    """Children are scheduled independently; no fields (alpha)."""


class SingleCompositeDisruptionMode(KubeModel):
    """Children disrupted one by one; no fields (alpha)."""


class AllCompositeDisruptionMode(KubeModel):
    """Everything disrupted together; no fields (alpha)."""


class CompositeGangSchedulingPolicy(KubeModel):
    """Gang policy over child groups (alpha, gate CompositePodGroup)."""

    min_group_count: Int32 = req("Minimum number of child groups scheduled together.")


class CompositePodGroupSchedulingPolicy(KubeModel):
    """Exactly one of basic or gang (alpha)."""

    basic: CompositeBasicSchedulingPolicy | None = opt("Children are scheduled independently.")
    gang: CompositeGangSchedulingPolicy | None = opt("Children are scheduled as a gang.")


class CompositePodGroupSchedulingConstraints(KubeModel):
    """Placement constraints of a composite group (alpha)."""

    topology: list[TopologyConstraint] | None = opt("At most one topology constraint.",
                                                    markers=ATOMIC)


class CompositeDisruptionMode(KubeModel):
    """Disruption mode of a composite group (alpha)."""

    single: SingleCompositeDisruptionMode | None = opt("Children disrupted one by one.")
    all: AllCompositeDisruptionMode | None = opt("Everything disrupted together.")


class CompositePodGroupTemplate(KubeModel):
    """A hierarchy level of pod groups (alpha, gate CompositePodGroup; dropped when off)."""

    name: str = req("DNS label.")
    scheduling_policy: CompositePodGroupSchedulingPolicy = req("Basic or gang.")
    scheduling_constraints: CompositePodGroupSchedulingConstraints | None = opt("Constraints.")
    disruption_mode: CompositeDisruptionMode | None = opt("Disruption mode.")
    pod_group_templates: list[PodGroupTemplate] | None = opt("Leaf templates.",
                                                             markers=list_map("name"))
    composite_pod_group_templates: list[CompositePodGroupTemplate] | None = opt(
        "Nested composite templates.", markers=list_map("name"))
    priority_class_name: str | None = opt("Priority class.")
    priority: Int32 | None = opt("Priority value.")
    preemption_policy: str | None = opt("Preemption policy.")


class WorkloadSpec(KubeModel):
    """Templates of the pod groups of a workload."""

    controller_ref: TypedLocalObjectReference | None = opt("Managing object; immutable once set.")
    pod_group_templates: list[PodGroupTemplate] | None = opt(
        "Pod group templates; 1 to 8, none may be added or removed.", markers=list_map("name"))
    composite_pod_group_templates: list[CompositePodGroupTemplate] | None = opt(
        "Alpha hierarchical templates.", markers=list_map("name"))


class Workload(TopLevel):
    """A workload's scheduling requirements as PodGroup templates."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "Workload")
    api_version: str | None = opt("scheduling.k8s.io/v1beta1")
    kind: str | None = opt("Workload")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: WorkloadSpec = req("The templates.")


class WorkloadReference(KubeModel):
    """The Workload template a PodGroup was created from."""

    workload_name: str = req("Name of the Workload (DNS subdomain).")
    template_name: str = req("Name of the PodGroupTemplate (DNS label).")


class PodGroupSpec(KubeModel):
    """A self-contained pod group; everything but gang.minCount is immutable."""

    workload_ref: WorkloadReference | None = opt("Origin template; immutable.")
    parent_composite_pod_group_name: str | None = opt("Alpha: parent CompositePodGroup.")
    scheduling_policy: PodGroupSchedulingPolicy = req("Basic or gang; gang.minCount is mutable.")
    scheduling_constraints: PodGroupSchedulingConstraints | None = opt("Topology constraints.")
    resource_claims: list[PodGroupResourceClaim] | None = opt(
        "Claims shared by all pods of the group; at most 4; immutable.",
        markers=list_map("name") | patch_merge("name", retain_keys=True))
    disruption_mode: DisruptionMode | None = opt("Defaults to single.")
    priority_class_name: str | None = opt("Priority class; immutable.")
    priority: Int32 | None = opt("Priority value; immutable.")
    preemption_policy: str | None = opt("Never or PreemptLowerPriority; immutable.")


class PodGroupStatus(KubeModel):
    """Scheduling state of the group and its generated claims."""

    conditions: list[Condition] | None = opt("PodGroupInitiallyScheduled, DisruptionTarget.",
                                             markers=list_map("type") | patch_merge("type"))
    resource_claim_statuses: list[PodGroupResourceClaimStatus] | None = opt(
        "Generated claim names; at most 4.",
        markers=list_map("name") | patch_merge("name", retain_keys=True))


class PodGroup(TopLevel):
    """A group of pods scheduled together, optionally sharing ResourceClaims."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "PodGroup")
    api_version: str | None = opt("scheduling.k8s.io/v1beta1")
    kind: str | None = opt("PodGroup")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: PodGroupSpec = req("The group.")
    status: PodGroupStatus | None = opt("Written via the status subresource.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {"Workload": Workload, "PodGroup": PodGroup}
