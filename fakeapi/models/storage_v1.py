"""``storage.k8s.io/v1`` StorageClass, CSIDriver, CSINode and CSIStorageCapacity.

fakeapi stores and validates them; no provisioner, attacher or kubelet plugin registration runs.
StorageClass names the default class PersistentVolumeClaims get (the ``DefaultStorageClass``
admission plugin); the CSI kinds are what drivers and their sidecars publish.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    SET,
    VALUE_STRUCT,
    Int32,
    Int64,
    KubeModel,
    Quantity,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1_storage import TopologySelectorTerm
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.storage.v1"


class StorageClass(TopLevel):
    """A class of storage PersistentVolumes can be dynamically provisioned from (no spec: the
    fields sit at the top level)."""

    gvk: ClassVar[tuple[str, str, str]] = ("storage.k8s.io", "v1", "StorageClass")
    api_version: str | None = opt("storage.k8s.io/v1")
    kind: str | None = opt("StorageClass")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    provisioner: str = req("The provisioner (a CSI driver name, or kubernetes.io/...); immutable.")
    parameters: dict[str, str] | None = opt("Parameters for the provisioner; immutable.")
    reclaim_policy: str | None = opt("Delete (default) or Retain, for the volumes provisioned; immutable.")
    mount_options: list[str] | None = opt("Mount options of the volumes provisioned (not validated).",
                                          markers=ATOMIC)
    allow_volume_expansion: bool | None = opt("Whether claims of this class may grow.")
    volume_binding_mode: str | None = opt("Immediate (default) or WaitForFirstConsumer; immutable.")
    allowed_topologies: list[TopologySelectorTerm] | None = opt(
        "Topologies volumes may be provisioned in; empty means anywhere.", markers=ATOMIC)


class TokenRequest(KubeModel):
    """A service account token the kubelet passes to the driver on mount."""

    audience: str = req("Audience of the token; empty means the apiserver's.")
    expiration_seconds: Int64 | None = opt("Validity of the token (at least 10 minutes).")


class CSIDriverSpec(KubeModel):
    """What a CSI driver needs from Kubernetes."""

    attach_required: bool | None = opt("Whether volumes need an attach (VolumeAttachment) before mount; "
                                       "immutable; defaults to true.")
    pod_info_on_mount: bool | None = opt("Whether the driver gets the pod's name, namespace and UID on mount.")
    volume_lifecycle_modes: list[str] | None = opt("Persistent (default) and/or Ephemeral; immutable.",
                                                   markers=SET)
    storage_capacity: bool | None = opt("Whether scheduling considers the CSIStorageCapacity objects the "
                                        "driver publishes.")
    fs_group_policy: str | None = opt("ReadWriteOnceWithFSType (default), File or None.")
    token_requests: list[TokenRequest] | None = opt("Service account tokens passed on mount.", markers=ATOMIC)
    requires_republish: bool | None = opt("Whether NodePublishVolume is called periodically.")
    se_linux_mount: bool | None = opt("Whether the driver supports the -o context mount option.")
    node_allocatable_update_period_seconds: Int64 | None = opt(
        "Seconds between updates of the CSINode allocatable count (at least 10).")
    service_account_token_in_secrets: bool | None = opt(
        "Whether the tokens go in the NodePublishVolume secrets instead of the volume context; needs "
        "tokenRequests.")
    prevent_pod_scheduling_if_missing: bool | None = opt(
        "Whether pods using the driver stay off nodes where it is not registered.")


class CSIDriver(TopLevel):
    """A CSI volume driver deployed in the cluster (named as the driver)."""

    gvk: ClassVar[tuple[str, str, str]] = ("storage.k8s.io", "v1", "CSIDriver")
    api_version: str | None = opt("storage.k8s.io/v1")
    kind: str | None = opt("CSIDriver")
    metadata: ObjectMeta | None = opt("Standard object metadata; the name is the driver's.")
    spec: CSIDriverSpec = req("The driver's specification.", markers=VALUE_STRUCT)


class VolumeNodeResources(KubeModel):
    """Volume limits of a node for one driver."""

    count: Int32 | None = opt("Most unique volumes of the driver the node can use; unset is unbounded.")


class CSINodeDriver(KubeModel):
    """One CSI driver registered on a node."""

    name: str = req("The driver's name.")
    node_id: str = req("The node as the storage system knows it.", alias="nodeID")
    topology_keys: list[str] | None = opt("Topology keys the driver supports.", markers=ATOMIC)
    allocatable: VolumeNodeResources | None = opt("Volume resources available for scheduling.")


class CSINodeSpec(KubeModel):
    """The CSI drivers of a node."""

    drivers: list[CSINodeDriver] = req("The drivers registered on the node.",
                                       markers=list_map("name") | patch_merge("name"))


class StorageHealthCondition(KubeModel):
    """An adverse condition of a driver's storage backend on a node."""

    status: str = req("StorageUnreachable or StorageDegraded.")
    reason: str = req("Brief CamelCase reason.")
    message: str | None = opt("Human-readable message.")
    access_mode: str | None = opt("The access mode affected; unset is all.")
    volume_mode: str | None = opt("The volume mode affected; unset is both.")
    last_transition_time: Time | None = opt("When the condition first appeared.")


class StorageHealth(KubeModel):
    """Backend health one driver reports on a node."""

    name: str = req("The driver's name.")
    health_conditions: list[StorageHealthCondition] | None = opt("Adverse conditions (at most 16).",
                                                                 markers=ATOMIC)


class CSINodeStatus(KubeModel):
    """Storage health of a node (the alpha CSIVolumeHealth gate, off in 1.37: never stored)."""

    storage_health: list[StorageHealth] | None = opt("Backend health per driver.",
                                                     markers=list_map("name") | patch_merge("name"))


class CSINode(TopLevel):
    """The CSI drivers installed on a node (named as the node)."""

    gvk: ClassVar[tuple[str, str, str]] = ("storage.k8s.io", "v1", "CSINode")
    api_version: str | None = opt("storage.k8s.io/v1")
    kind: str | None = opt("CSINode")
    metadata: ObjectMeta | None = opt("Standard object metadata; the name is the node's.")
    spec: CSINodeSpec = req("The drivers of the node.", markers=VALUE_STRUCT)
    status: CSINodeStatus | None = opt("Storage health of the node.")


class CSIStorageCapacity(TopLevel):
    """The result of one CSI GetCapacity call: capacity of a class in a topology segment (no spec)."""

    gvk: ClassVar[tuple[str, str, str]] = ("storage.k8s.io", "v1", "CSIStorageCapacity")
    api_version: str | None = opt("storage.k8s.io/v1")
    kind: str | None = opt("CSIStorageCapacity")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    node_topology: LabelSelector | None = opt("Nodes that reach the storage; unset is none, empty is all; "
                                              "immutable.")
    storage_class_name: str = req("The StorageClass the capacity applies to; immutable.")
    capacity: Quantity | None = opt("Available capacity; unset means unknown.")
    maximum_volume_size: Quantity | None = opt("Largest volume that can be created.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (StorageClass, CSIDriver, CSINode, CSIStorageCapacity)}
