"""``batch/v1``: Job and CronJob (Kubernetes 1.37).

``JobSpec.scheduling`` (KEP-5547, gate ``WorkloadWithJob``) embeds the ``scheduling.k8s.io/v1alpha3``
building blocks; they are modelled here under their upstream names.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    SET,
    VALUE_STRUCT,
    Int32,
    Int64,
    KubeModel,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import ObjectReference, PodTemplateSpec
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.batch.v1"
GROUP, VERSION = "batch", "v1"


class UncountedTerminatedPods(KubeModel):
    """UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't been..."""

    failed: list[str] | None = opt('failed holds UIDs of failed Pods.', markers=SET)
    succeeded: list[str] | None = opt('succeeded holds UIDs of succeeded Pods.', markers=SET)


class JobCondition(KubeModel):
    """JobCondition describes current state of a job."""

    last_probe_time: Time | None = opt('Last time the condition was checked.')
    last_transition_time: Time | None = opt('Last time the condition transit from one status to another.')
    message: str | None = opt('Human readable message indicating details about last transition.')
    reason: str | None = opt("(brief) reason for the condition's last transition.")
    status: str = req('Status of the condition, one of True, False, Unknown.')
    type: str = req('Type of job condition, Complete or Failed.')


class JobStatus(KubeModel):
    """JobStatus represents the current state of a Job."""

    active: Int32 | None = opt('The number of pending and running pods which are not terminating (without a...')
    completed_indexes: str | None = opt("completedIndexes holds the completed indexes when .spec.completionMode =...")
    completion_time: Time | None = opt('Represents time when the job was completed.')
    conditions: list[JobCondition] | None = opt("The latest available...", markers=ATOMIC | patch_merge('type'))
    failed: Int32 | None = opt('The number of pods which reached phase Failed.')
    failed_indexes: str | None = opt('FailedIndexes holds the failed indexes when spec.backoffLimitPerIndex is set.')
    ready: Int32 | None = opt('The number of active pods which have a Ready condition and are not terminating...')
    start_time: Time | None = opt('Represents time when the job controller started processing a job.')
    succeeded: Int32 | None = opt('The number of pods which reached phase Succeeded.')
    terminating: Int32 | None = opt('The number of pods which are terminating (in phase Pending or Running and...')
    uncounted_terminated_pods: UncountedTerminatedPods | None = opt('uncountedTerminatedPods holds the UIDs of...')


class SuccessPolicyRule(KubeModel):
    """SuccessPolicyRule describes rule for declaring a Job as succeeded."""

    succeeded_count: Int32 | None = opt('succeededCount specifies the minimal required size of the actual set of...')
    succeeded_indexes: str | None = opt('succeededIndexes specifies the set of indexes which need to be contained...')


class SuccessPolicy(KubeModel):
    """SuccessPolicy describes when a Job can be declared as succeeded based on the success..."""

    rules: list[SuccessPolicyRule] = req('rules represents the list of alternative rules for the...', markers=ATOMIC)


class WorkloadPodGroupGangSchedulingPolicy(KubeModel):
    """WorkloadPodGroupGangSchedulingPolicy defines the parameters for gang (all-or-nothing)..."""

    min_count: Int32 | None = opt('minCount is the minimum number of pods that must be scheduled at the same time...')


class WorkloadPodGroupBasicSchedulingPolicy(KubeModel):
    """WorkloadPodGroupBasicSchedulingPolicy indicates standard Kubernetes scheduling behavior."""



class WorkloadPodGroupSchedulingPolicy(KubeModel):
    """WorkloadPodGroupSchedulingPolicy defines the scheduling policy for a group of pods..."""

    basic: WorkloadPodGroupBasicSchedulingPolicy | None = opt('basic specifies that standard, pod-by-pod...')
    gang: WorkloadPodGroupGangSchedulingPolicy | None = opt('gang specifies all-or-nothing scheduling semantics.')


class TopologyConstraint(KubeModel):
    """TopologyConstraint defines a topology constraint for a PodGroup."""

    key: str = req('key specifies the key of the node label representing the topology domain.')


class WorkloadPodGroupSchedulingConstraints(KubeModel):
    """WorkloadPodGroupSchedulingConstraints defines leaf-level scheduling constraints, such..."""

    topology: list[TopologyConstraint] | None = opt('topology specifies desired topological...', markers=ATOMIC)


class WorkloadPodGroupResourceClaim(KubeModel):
    """WorkloadPodGroupResourceClaim references a dynamic resource claim that is shared..."""

    name: str = req('name uniquely identifies this resource claim inside the group.')
    resource_claim_name: str | None = opt('resourceClaimName is the name of a ResourceClaim object in the same...')
    resource_claim_template_name: str | None = opt('resourceClaimTemplateName is the name of a...')


class WorkloadPodGroupSingleDisruptionMode(KubeModel):
    """WorkloadPodGroupSingleDisruptionMode indicates that individual pods can be disrupted..."""



class WorkloadPodGroupAllDisruptionMode(KubeModel):
    """WorkloadPodGroupAllDisruptionMode indicates that all pods in the group must be..."""



class WorkloadPodGroupDisruptionMode(KubeModel):
    """WorkloadPodGroupDisruptionMode defines how individual pods within a group can be..."""

    all: WorkloadPodGroupAllDisruptionMode | None = opt('all specifies that all pods in the group must be...')
    single: WorkloadPodGroupSingleDisruptionMode | None = opt('single specifies that pods can be disrupted...')


class JobSchedulingConfiguration(KubeModel):
    """JobSchedulingConfiguration composes the reusable workload-aware scheduling building..."""

    disruption_mode: WorkloadPodGroupDisruptionMode | None = opt("DisruptionMode defines the mode in which the...")
    resource_claims: list[WorkloadPodGroupResourceClaim] | None = opt(
        'ResourceClaims defines which ResourceClaims may be shared...', markers=list_map('name') | patch_merge('name'))
    scheduling_constraints: WorkloadPodGroupSchedulingConstraints | None = opt('SchedulingConstraints defines...')
    scheduling_policy: WorkloadPodGroupSchedulingPolicy | None = opt('SchedulingPolicy defines the scheduling...')


class PodFailurePolicyOnPodConditionsPattern(KubeModel):
    """PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an actual pod..."""

    status: str | None = opt('Specifies the required Pod condition status.')
    type: str = req('Specifies the required Pod condition type.')


class PodFailurePolicyOnExitCodesRequirement(KubeModel):
    """PodFailurePolicyOnExitCodesRequirement describes the requirement for handling a failed..."""

    container_name: str | None = opt('Restricts the check for exit codes to the container with the specified name.')
    operator: str = req('Represents the relationship between the container exit code(s) and the specified values.')
    values: list[Int32] = req('Specifies the set of values.', markers=SET)


class PodFailurePolicyRule(KubeModel):
    """PodFailurePolicyRule describes how a pod failure is handled when the requirements are met."""

    action: str = req('Specifies the action taken on a pod failure when the requirements are satisfied.')
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = opt('Represents the requirement on the...')
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = opt('Represents the...', markers=ATOMIC)


class PodFailurePolicy(KubeModel):
    """PodFailurePolicy describes how failed pods influence the backoffLimit."""

    rules: list[PodFailurePolicyRule] = req('A list of pod failure policy rules.', markers=ATOMIC)


class JobSpec(KubeModel):
    """JobSpec describes how the job execution will look like."""

    active_deadline_seconds: Int64 | None = opt('Specifies the duration in seconds relative to the startTime that...')
    backoff_limit: Int32 | None = opt('Specifies the number of retries before marking this job failed.')
    backoff_limit_per_index: Int32 | None = opt('Specifies the limit for the number of retries within an index...')
    completion_mode: str | None = opt('completionMode specifies how Pod completions are tracked.')
    completions: Int32 | None = opt('Specifies the desired number of successfully finished pods the job should be...')
    managed_by: str | None = opt('ManagedBy field indicates the controller that manages a Job.')
    manual_selector: bool | None = opt('manualSelector controls generation of pod labels and pod selectors.')
    max_failed_indexes: Int32 | None = opt('Specifies the maximal number of failed indexes before marking the Job...')
    parallelism: Int32 | None = opt('Specifies the maximum desired number of pods the job should run at any given...')
    pod_failure_policy: PodFailurePolicy | None = opt('Specifies the policy of handling failed pods.')
    pod_replacement_policy: str | None = opt('podReplacementPolicy specifies when to create replacement Pods.')
    scheduling: JobSchedulingConfiguration | None = opt('scheduling defines the Workload-aware Scheduling...')
    selector: LabelSelector | None = opt('A label query over pods that should match the pod count.')
    success_policy: SuccessPolicy | None = opt('successPolicy specifies the policy when the Job can be declared as...')
    suspend: bool | None = opt('suspend specifies whether the Job controller should create Pods or not.')
    template: PodTemplateSpec = req('Describes the pod that will be created when executing a job.')
    ttl_seconds_after_finished: Int32 | None = opt('ttlSecondsAfterFinished limits the lifetime of a Job that has...')


class Job(TopLevel):
    """Job represents the configuration of a single job."""

    gvk: ClassVar[tuple[str, str, str]] = ('batch', 'v1', 'Job')
    api_version: str | None = opt('batch/v1')
    kind: str | None = opt('Job')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    spec: JobSpec | None = opt('Specification of the desired behavior of a job.')
    status: JobStatus | None = opt('Current status of a job.', markers=VALUE_STRUCT)


class CronJobStatus(KubeModel):
    """CronJobStatus represents the current state of a cron job."""

    active: list[ObjectReference] | None = opt('A list of pointers to currently running jobs.', markers=ATOMIC)
    last_schedule_time: Time | None = opt('Information when was the last time the job was successfully scheduled.')
    last_successful_time: Time | None = opt('Information when was the last time the job successfully completed.')


class JobTemplateSpec(KubeModel):
    """JobTemplateSpec describes the data a Job should have when created from a template"""

    metadata: ObjectMeta | None = opt("Standard object's metadata of the jobs created from this template.")
    spec: JobSpec | None = opt('Specification of the desired behavior of the job.')


class CronJobSpec(KubeModel):
    """CronJobSpec describes how the job execution will look like and when it will actually run."""

    concurrency_policy: str | None = opt('Specifies how to treat concurrent executions of a Job.')
    failed_jobs_history_limit: Int32 | None = opt('The number of failed finished jobs to retain.')
    job_template: JobTemplateSpec = req('Specifies the job that will be created when executing a CronJob.')
    schedule: str = req('The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.')
    starting_deadline_seconds: Int64 | None = opt('Optional deadline in seconds for starting the job if it misses...')
    successful_jobs_history_limit: Int32 | None = opt('The number of successful finished jobs to retain.')
    suspend: bool | None = opt('This flag tells the controller to suspend subsequent executions, it does not apply...')
    time_zone: str | None = opt('The time zone name for the given schedule, see...')


class CronJob(TopLevel):
    """CronJob represents the configuration of a single cron job."""

    gvk: ClassVar[tuple[str, str, str]] = ('batch', 'v1', 'CronJob')
    api_version: str | None = opt('batch/v1')
    kind: str | None = opt('CronJob')
    metadata: ObjectMeta | None = opt("Standard object's metadata.")
    spec: CronJobSpec = req('Specification of the desired behavior of a cron job, including the schedule.')
    status: CronJobStatus | None = opt('Current status of a cron job.', markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Job, CronJob)}
