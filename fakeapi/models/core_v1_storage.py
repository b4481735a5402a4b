"""Core ``v1`` PersistentVolume and PersistentVolumeClaim.

fakeapi stores and validates them; no provisioner or binder runs, so a claim stays ``Pending``
and a volume ``Available`` until a client binds them (``claimRef``/``volumeName`` and the status
phases).  Volume sources (hostPath, nfs, csi, ...) are kept as given.
"""

from typing import ClassVar

from pydantic import ConfigDict

from fakeapi.models.base import (
    ATOMIC,
    VALUE_STRUCT,
    KubeModel,
    Quantity,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import NodeSelector, ObjectReference
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.core.v1"


class VolumeNodeAffinity(KubeModel):
    """Nodes a volume can be reached from."""

    required: NodeSelector | None = opt("Nodes the volume is reachable from.")


class TopologySelectorLabelRequirement(KubeModel):
    """A topology label and the values it may take."""

    key: str = req("The label key.")
    values: list[str] = req("Values the label may take (any of them).", markers=ATOMIC)


class TopologySelectorTerm(KubeModel):
    """Topology labels that must all match (a StorageClass's allowed topologies)."""

    match_label_expressions: list[TopologySelectorLabelRequirement] | None = opt(
        "Label requirements, ANDed.", markers=ATOMIC)


class PersistentVolumeSpec(KubeModel):
    """A volume's capacity, access and source (the source fields are kept as given)."""

    model_config = ConfigDict(extra="allow")
    capacity: dict[str, Quantity] | None = opt("Capacity, e.g. storage: 10Gi.")
    access_modes: list[str] | None = opt("ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod.",
                                         markers=ATOMIC)
    claim_ref: ObjectReference | None = opt("The claim bound to this volume.")
    persistent_volume_reclaim_policy: str | None = opt("Retain (default for static volumes), Delete or Recycle.")
    storage_class_name: str | None = opt("Storage class of the volume.")
    mount_options: list[str] | None = opt("Mount options.", markers=ATOMIC)
    volume_mode: str | None = opt("Filesystem (default) or Block.")
    node_affinity: VolumeNodeAffinity | None = opt("Nodes the volume is reachable from.")
    volume_attributes_class_name: str | None = opt("VolumeAttributesClass of the volume.")


class PersistentVolumeStatus(KubeModel):
    """Observed state of a volume."""

    phase: str | None = opt("Pending, Available, Bound, Released or Failed.")
    message: str | None = opt("Why the volume is in this phase.")
    reason: str | None = opt("Brief CamelCase reason.")
    last_phase_transition_time: Time | None = opt("When the phase last changed.")


class PersistentVolume(TopLevel):
    """A piece of storage in the cluster."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "PersistentVolume")
    api_version: str | None = opt("v1")
    kind: str | None = opt("PersistentVolume")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: PersistentVolumeSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: PersistentVolumeStatus | None = opt("Observed state.", markers=VALUE_STRUCT)


class VolumeResourceRequirements(KubeModel):
    """Storage a claim asks for."""

    limits: dict[str, Quantity] | None = opt("Maximum amounts.")
    requests: dict[str, Quantity] | None = opt("Minimum amounts, e.g. storage: 1Gi.")


class TypedLocalObjectReference(KubeModel):
    """An object in the same namespace, by API group, kind and name."""

    api_group: str | None = opt("API group of the referent; empty for the core group.")
    kind: str = req("Kind of the referent.")
    name: str = req("Name of the referent.")


class TypedObjectReference(TypedLocalObjectReference):
    """An object by API group, kind, name and namespace."""

    namespace: str | None = opt("Namespace of the referent.")


class PersistentVolumeClaimSpec(KubeModel):
    """What a claim asks for."""

    access_modes: list[str] | None = opt("Desired access modes.", markers=ATOMIC)
    selector: LabelSelector | None = opt("Volumes to consider for binding.")
    resources: VolumeResourceRequirements | None = opt("Requested storage.")
    volume_name: str | None = opt("The volume bound to this claim.")
    storage_class_name: str | None = opt("Storage class the claim asks for.")
    volume_mode: str | None = opt("Filesystem (default) or Block.")
    data_source: TypedLocalObjectReference | None = opt("Populate from a snapshot or another claim.")
    data_source_ref: TypedObjectReference | None = opt("Populate from any object.")
    volume_attributes_class_name: str | None = opt("VolumeAttributesClass the claim asks for.")


class PersistentVolumeClaimCondition(KubeModel):
    """A claim condition (Resizing, FileSystemResizePending, ...)."""

    type: str = req("Condition type.")
    status: str = req("True, False or Unknown.")
    last_probe_time: Time | None = opt("Last probe.")
    last_transition_time: Time | None = opt("Last status change.")
    reason: str | None = opt("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")


class ModifyVolumeStatus(KubeModel):
    """State of a volume attributes class change."""

    target_volume_attributes_class_name: str | None = opt("The class being applied.")
    status: str = req("Pending, InProgress or Infeasible.")


class VolumeHealthCondition(KubeModel):
    """An adverse condition the CSI controller reports."""

    status: str = req("Condition status.")
    reason: str = req("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")


class VolumeHealthStatus(KubeModel):
    """Health of the bound volume."""

    health_conditions: list[VolumeHealthCondition] | None = opt(
        "Adverse conditions (at most 16).", markers=list_map("status", "reason") | patch_merge("status"))
    last_transition_time: Time | None = opt("When the current conditions first appeared.")


class PersistentVolumeClaimStatus(KubeModel):
    """Observed state of a claim."""

    phase: str | None = opt("Pending, Bound or Lost.")
    access_modes: list[str] | None = opt("Access modes of the bound volume.", markers=ATOMIC)
    capacity: dict[str, Quantity] | None = opt("Capacity of the bound volume.")
    conditions: list[PersistentVolumeClaimCondition] | None = opt(
        "Conditions.", markers=list_map("type") | patch_merge("type"))
    allocated_resources: dict[str, Quantity] | None = opt("Resources allocated for resizing.")
    allocated_resource_statuses: dict[str, str] | None = opt("Resize state per resource.")
    current_volume_attributes_class_name: str | None = opt("Current VolumeAttributesClass.")
    modify_volume_status: ModifyVolumeStatus | None = opt("State of a volume modification.")
    health_status: VolumeHealthStatus | None = opt("Health of the bound volume.")


class PersistentVolumeClaim(TopLevel):
    """A request for storage by a user."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "PersistentVolumeClaim")
    api_version: str | None = opt("v1")
    kind: str | None = opt("PersistentVolumeClaim")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: PersistentVolumeClaimSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: PersistentVolumeClaimStatus | None = opt("Observed state.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (PersistentVolume, PersistentVolumeClaim)}
