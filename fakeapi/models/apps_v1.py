"""``apps/v1``: Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision (Kubernetes 1.37).

Pod templates are the full core ``PodSpec`` (resource claims, ``schedulingGroup``,
``workloadRef`` included).  StatefulSet ``volumeClaimTemplates`` stay opaque JSON: PersistentVolumeClaims
are not served, so validation refuses a non-empty list (see :mod:`fakeapi.validation.apps`).
"""

from typing import Any, ClassVar

from fakeapi.models.base import (
    ATOMIC,
    VALUE_STRUCT,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    RawExtension,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import PodTemplateSpec
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.apps.v1"
GROUP, VERSION = "apps", "v1"
Open = dict[str, Any]


class ControllerRevision(TopLevel):
    """ControllerRevision implements an immutable snapshot of state data."""

    gvk: ClassVar[tuple[str, str, str]] = ('apps', 'v1', 'ControllerRevision')
    api_version: str | None = opt('apps/v1')
    data: RawExtension = req('Data is the serialized representation of the state.')
    kind: str | None = opt('ControllerRevision')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    revision: Int64 | None = opt('Revision indicates the revision of the state represented by Data.')


class DaemonSetCondition(KubeModel):
    """DaemonSetCondition describes the state of a DaemonSet at a certain point."""

    last_transition_time: Time | None = opt('Last time the condition transitioned from one status to another.')
    message: str | None = opt('A human readable message indicating details about the transition.')
    reason: str | None = opt("The reason for the condition's last transition.")
    status: str | None = opt('Status of the condition, one of True, False, Unknown.')
    type: str | None = opt('Type of DaemonSet condition.')


class DaemonSetStatus(KubeModel):
    """DaemonSetStatus represents the current status of a daemon set."""

    collision_count: Int32 | None = opt('Count of hash collisions for the DaemonSet.')
    conditions: list[DaemonSetCondition] | None = opt(
        "Represents the latest available observations of a...", markers=list_map('type') | patch_merge('type'))
    current_number_scheduled: Int32 = req('The number of nodes that are running at least 1 daemon pod and are...')
    desired_number_scheduled: Int32 = req('The total number of nodes that should be running the daemon pod...')
    number_available: Int32 | None = opt('The number of nodes that should be running the daemon pod and have one...')
    number_misscheduled: Int32 = req('The number of nodes that are running the daemon pod, but are not supposed to...')
    number_ready: Int32 = req('numberReady is the number of nodes that should be running the daemon pod and have...')
    number_unavailable: Int32 | None = opt('The number of nodes that should be running the daemon pod and have...')
    observed_generation: Int64 | None = opt('The most recent generation observed by the daemon set controller.')
    updated_number_scheduled: Int32 | None = opt('The total number of nodes that are running updated daemon pod')


class RollingUpdateDaemonSet(KubeModel):
    """Spec to control the desired behavior of daemon set rolling update."""

    max_surge: IntOrString | None = opt('The maximum number of nodes with an existing available DaemonSet pod that...')
    max_unavailable: IntOrString | None = opt('The maximum number of DaemonSet pods that can be unavailable during...')


class DaemonSetUpdateStrategy(KubeModel):
    """DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet."""

    rolling_update: RollingUpdateDaemonSet | None = opt('Rolling update config params.')
    type: str | None = opt('Type of daemon set update.')


class DaemonSetSpec(KubeModel):
    """DaemonSetSpec is the specification of a daemon set."""

    min_ready_seconds: Int32 | None = opt('The minimum number of seconds for which a newly created DaemonSet pod...')
    revision_history_limit: Int32 | None = opt('The number of old history to retain to allow rollback.')
    selector: LabelSelector = req('A label query over pods that are managed by the daemon set.')
    template: PodTemplateSpec = req('An object that describes the pod that will be created.')
    update_strategy: DaemonSetUpdateStrategy | None = opt('An update strategy to replace existing DaemonSet pods...')


class DaemonSet(TopLevel):
    """DaemonSet represents the configuration of a daemon set."""

    gvk: ClassVar[tuple[str, str, str]] = ('apps', 'v1', 'DaemonSet')
    api_version: str | None = opt('apps/v1')
    kind: str | None = opt('DaemonSet')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    spec: DaemonSetSpec = req('The desired behavior of this daemon set.')
    status: DaemonSetStatus | None = opt('The current status of this daemon set.', markers=VALUE_STRUCT)


class StatefulSetCondition(KubeModel):
    """StatefulSetCondition describes the state of a statefulset at a certain point."""

    last_transition_time: Time | None = opt('Last time the condition transitioned from one status to another.')
    message: str | None = opt('A human readable message indicating details about the transition.')
    reason: str | None = opt("The reason for the condition's last transition.")
    status: str | None = opt('Status of the condition, one of True, False, Unknown.')
    type: str | None = opt('Type of statefulset condition.')


class StatefulSetStatus(KubeModel):
    """StatefulSetStatus represents the current state of a StatefulSet."""

    available_replicas: Int32 | None = opt('Total number of available pods (ready for at least minReadySeconds)...')
    collision_count: Int32 | None = opt('collisionCount is the count of hash collisions for the StatefulSet.')
    conditions: list[StatefulSetCondition] | None = opt(
        "Represents the latest available observations of a...", markers=list_map('type') | patch_merge('type'))
    current_replicas: Int32 | None = opt('currentReplicas is the number of Pods created by the StatefulSet...')
    current_revision: str | None = opt('currentRevision, if not empty, indicates the version of the StatefulSet...')
    observed_generation: Int64 | None = opt('observedGeneration is the most recent generation observed for this...')
    ready_replicas: Int32 | None = opt('readyReplicas is the number of pods created for this StatefulSet with a...')
    replicas: Int32 = req('replicas is the number of Pods created by the StatefulSet controller.')
    update_revision: str | None = opt('updateRevision, if not empty, indicates the version of the StatefulSet used...')
    updated_replicas: Int32 | None = opt('updatedReplicas is the number of Pods created by the StatefulSet...')


class RollingUpdateStatefulSetStrategy(KubeModel):
    """RollingUpdateStatefulSetStrategy is used to communicate parameter for..."""

    max_unavailable: IntOrString | None = opt('The maximum number of pods that can be unavailable during the update.')
    partition: Int32 | None = opt('Partition indicates the ordinal at which the StatefulSet should be partitioned...')


class StatefulSetUpdateStrategy(KubeModel):
    """StatefulSetUpdateStrategy indicates the strategy that the StatefulSet controller will..."""

    rolling_update: RollingUpdateStatefulSetStrategy | None = opt('RollingUpdate is used to communicate parameters...')
    type: str | None = opt('Type indicates the type of the StatefulSetUpdateStrategy.')


class StatefulSetPersistentVolumeClaimRetentionPolicy(KubeModel):
    """StatefulSetPersistentVolumeClaimRetentionPolicy describes the policy used for PVCs..."""

    when_deleted: str | None = opt('WhenDeleted specifies what happens to PVCs created from StatefulSet...')
    when_scaled: str | None = opt('WhenScaled specifies what happens to PVCs created from StatefulSet...')


class StatefulSetOrdinals(KubeModel):
    """StatefulSetOrdinals describes the policy used for replica ordinal assignment in this..."""

    start: Int32 | None = opt("start is the number representing the first replica's index.")


class StatefulSetSpec(KubeModel):
    """A StatefulSetSpec is the specification of a StatefulSet."""

    min_ready_seconds: Int32 | None = opt('Minimum number of seconds for which a newly created pod should be ready...')
    ordinals: StatefulSetOrdinals | None = opt('ordinals controls the numbering of replica indices in a StatefulSet.')
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = opt(
        'persistentVolumeClaimRetentionPolicy describes the lifecycle of persistent volume...')
    pod_management_policy: str | None = opt('podManagementPolicy controls how pods are created during initial...')
    replicas: Int32 | None = opt('replicas is the desired number of replicas of the given Template.')
    revision_history_limit: Int32 | None = opt('revisionHistoryLimit is the maximum number of revisions that will...')
    selector: LabelSelector = req('selector is a label query over pods that should match the replica count.')
    service_name: str | None = opt('serviceName is the name of the service that governs this StatefulSet.')
    template: PodTemplateSpec = req('template is the object that describes the pod that will be created if...')
    update_strategy: StatefulSetUpdateStrategy | None = opt('updateStrategy indicates the...')
    volume_claim_templates: list[Open] | None = opt('volumeClaimTemplates is a list of claims that...', markers=ATOMIC)


class StatefulSet(TopLevel):
    """StatefulSet represents a set of pods with consistent identities."""

    gvk: ClassVar[tuple[str, str, str]] = ('apps', 'v1', 'StatefulSet')
    api_version: str | None = opt('apps/v1')
    kind: str | None = opt('StatefulSet')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    spec: StatefulSetSpec = req('Spec defines the desired identities of pods in this set.')
    status: StatefulSetStatus | None = opt('Status is the current status of Pods in this StatefulSet.',
                                           markers=VALUE_STRUCT)


class ReplicaSetCondition(KubeModel):
    """ReplicaSetCondition describes the state of a replica set at a certain point."""

    last_transition_time: Time | None = opt('The last time the condition transitioned from one status to another.')
    message: str | None = opt('A human readable message indicating details about the transition.')
    reason: str | None = opt("The reason for the condition's last transition.")
    status: str | None = opt('Status of the condition, one of True, False, Unknown.')
    type: str | None = opt('Type of replica set condition.')


class ReplicaSetStatus(KubeModel):
    """ReplicaSetStatus represents the current status of a ReplicaSet."""

    available_replicas: Int32 | None = opt('The number of available non-terminating pods (ready for at least...')
    conditions: list[ReplicaSetCondition] | None = opt(
        "Represents the latest available observations of a replica...", markers=list_map('type') | patch_merge('type'))
    fully_labeled_replicas: Int32 | None = opt('The number of non-terminating pods that have labels matching the...')
    observed_generation: Int64 | None = opt('ObservedGeneration reflects the generation of the most recently...')
    ready_replicas: Int32 | None = opt('The number of non-terminating pods targeted by this ReplicaSet with a...')
    replicas: Int32 = req('Replicas is the most recently observed number of non-terminating pods.')
    terminating_replicas: Int32 | None = opt('The number of terminating pods for this replica set.')


class ReplicaSetSpec(KubeModel):
    """ReplicaSetSpec is the specification of a ReplicaSet."""

    min_ready_seconds: Int32 | None = opt('Minimum number of seconds for which a newly created pod should be ready...')
    replicas: Int32 | None = opt('Replicas is the number of desired pods.')
    selector: LabelSelector = req('Selector is a label query over pods that should match the replica count.')
    template: PodTemplateSpec | None = opt('Template is the object that describes the pod that will be created if...')


class ReplicaSet(TopLevel):
    """ReplicaSet ensures that a specified number of pod replicas are running at any given time."""

    gvk: ClassVar[tuple[str, str, str]] = ('apps', 'v1', 'ReplicaSet')
    api_version: str | None = opt('apps/v1')
    kind: str | None = opt('ReplicaSet')
    metadata: ObjectMeta | None = opt('If the Labels of a ReplicaSet are empty, they are defaulted to be the same...')
    spec: ReplicaSetSpec = req('Spec defines the specification of the desired behavior of the ReplicaSet.')
    status: ReplicaSetStatus | None = opt('Status is the most recently observed status of the ReplicaSet.',
                                          markers=VALUE_STRUCT)


class DeploymentCondition(KubeModel):
    """DeploymentCondition describes the state of a deployment at a certain point."""

    last_transition_time: Time | None = opt('Last time the condition transitioned from one status to another.')
    last_update_time: Time | None = opt('The last time this condition was updated.')
    message: str | None = opt('A human readable message indicating details about the transition.')
    reason: str | None = opt("The reason for the condition's last transition.")
    status: str | None = opt('Status of the condition, one of True, False, Unknown.')
    type: str | None = opt('Type of deployment condition.')


class DeploymentStatus(KubeModel):
    """DeploymentStatus is the most recently observed status of the Deployment."""

    available_replicas: Int32 | None = opt('Total number of available non-terminating pods (ready for at least...')
    collision_count: Int32 | None = opt('Count of hash collisions for the Deployment.')
    conditions: list[DeploymentCondition] | None = opt(
        "Represents the latest available observations of a...", markers=list_map('type') | patch_merge('type'))
    observed_generation: Int64 | None = opt('The generation observed by the deployment controller.')
    ready_replicas: Int32 | None = opt('Total number of non-terminating pods targeted by this Deployment with a...')
    replicas: Int32 | None = opt('Total number of non-terminating pods targeted by this deployment (their labels...')
    terminating_replicas: Int32 | None = opt('Total number of terminating pods targeted by this deployment.')
    unavailable_replicas: Int32 | None = opt('Total number of unavailable pods targeted by this deployment.')
    updated_replicas: Int32 | None = opt('Total number of non-terminating pods targeted by this deployment that...')


class RollingUpdateDeployment(KubeModel):
    """Spec to control the desired behavior of rolling update."""

    max_surge: IntOrString | None = opt('The maximum number of pods that can be scheduled above the desired number...')
    max_unavailable: IntOrString | None = opt('The maximum number of pods that can be unavailable during the update.')


class DeploymentStrategy(KubeModel):
    """DeploymentStrategy describes how to replace existing pods with new ones."""

    rolling_update: RollingUpdateDeployment | None = opt('Rolling update config params.')
    type: str | None = opt('Type of deployment.')


class DeploymentSpec(KubeModel):
    """DeploymentSpec is the specification of the desired behavior of the Deployment."""

    min_ready_seconds: Int32 | None = opt('Minimum number of seconds for which a newly created pod should be ready...')
    paused: bool | None = opt('Indicates that the deployment is paused.')
    progress_deadline_seconds: Int32 | None = opt('The maximum time in seconds for a deployment to make progress...')
    replicas: Int32 | None = opt('Number of desired pods.')
    revision_history_limit: Int32 | None = opt('The number of old ReplicaSets to retain to allow rollback.')
    selector: LabelSelector = req('Label selector for pods.')
    strategy: DeploymentStrategy | None = opt('The deployment strategy to...')
    template: PodTemplateSpec = req('Template describes the pods that will be created.')


class Deployment(TopLevel):
    """Deployment enables declarative updates for Pods and ReplicaSets."""

    gvk: ClassVar[tuple[str, str, str]] = ('apps', 'v1', 'Deployment')
    api_version: str | None = opt('apps/v1')
    kind: str | None = opt('Deployment')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    spec: DeploymentSpec = req('Specification of the desired behavior of the Deployment.')
    status: DeploymentStatus | None = opt('Most recently observed status of the Deployment.', markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {
    m.gvk[2]: m for m in (Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision)
}
