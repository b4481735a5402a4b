"""``policy/v1``: PodDisruptionBudget and the Eviction body of ``pods/{name}/eviction``.

Eviction is not a stored kind: the eviction subresource decodes it with this model.
"""

from typing import Any, ClassVar

from fakeapi.models.base import (
    VALUE_STRUCT,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
)
from fakeapi.models.meta import Condition, LabelSelector, ObjectMeta
from fakeapi.models.options import DeleteOptions

OPENAPI_PACKAGE = "io.k8s.api.policy.v1"
GROUP, VERSION = "policy", "v1"
Open = dict[str, Any]


class Eviction(TopLevel):
    """Eviction evicts a pod from its node subject to certain policies and safety constraints."""

    gvk: ClassVar[tuple[str, str, str]] = ('policy', 'v1', 'Eviction')
    api_version: str | None = opt('policy/v1')
    delete_options: DeleteOptions | None = opt('deleteOptions may be provided')
    kind: str | None = opt('Eviction')
    metadata: ObjectMeta | None = opt('metadata describes the pod that is being evicted.')


class PodDisruptionBudgetStatus(KubeModel):
    """PodDisruptionBudgetStatus represents information about the status of a..."""

    conditions: list[Condition] | None = opt('Conditions contain...', markers=list_map('type') | patch_merge('type'))
    current_healthy: Int32 | None = opt('current number of healthy pods')
    desired_healthy: Int32 | None = opt('minimum desired number of healthy pods')
    disrupted_pods: dict[str, Time] | None = opt('DisruptedPods contains information about pods whose eviction was...')
    disruptions_allowed: Int32 | None = opt('Number of pod disruptions that are currently allowed.')
    expected_pods: Int32 | None = opt('total number of pods counted by this disruption budget')
    observed_generation: Int64 | None = opt('Most recent generation observed when updating this PDB status.')


class PodDisruptionBudgetSpec(KubeModel):
    """PodDisruptionBudgetSpec is a description of a PodDisruptionBudget."""

    max_unavailable: IntOrString | None = opt("maxUnavailable indicates that an eviction is allowed if at most...")
    min_available: IntOrString | None = opt("minAvailable indicates that an eviction is allowed if at least...")
    selector: LabelSelector | None = opt("Pods whose evictions the budget manages.")
    unhealthy_pod_eviction_policy: str | None = opt('unhealthyPodEvictionPolicy defines the criteria for when...')


class PodDisruptionBudget(TopLevel):
    """PodDisruptionBudget is an object to define the max disruption that can be caused to a..."""

    gvk: ClassVar[tuple[str, str, str]] = ('policy', 'v1', 'PodDisruptionBudget')
    api_version: str | None = opt('policy/v1')
    kind: str | None = opt('PodDisruptionBudget')
    metadata: ObjectMeta | None = opt("metadata is the standard object's metadata.")
    spec: PodDisruptionBudgetSpec | None = opt('spec is the specification of the desired behavior of the...')
    status: PodDisruptionBudgetStatus | None = opt('status is the most recently observed status of the...',
                                                   markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {"PodDisruptionBudget": PodDisruptionBudget}
