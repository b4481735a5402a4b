"""``autoscaling/v2`` HorizontalPodAutoscaler.

fakeapi stores, defaults and validates HPAs; no autoscaling controller runs (there is no metrics
API), so an HPA's status stays as its clients write it through ``/status``.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
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
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.autoscaling.v2"


class CrossVersionObjectReference(KubeModel):
    """Enough to identify the referred resource."""

    kind: str = req("Kind of the referent.")
    name: str = req("Name of the referent.")
    api_version: str | None = opt("API version of the referent.")


class MetricIdentifier(KubeModel):
    """The name and optionally the selector of a metric."""

    name: str = req("Name of the metric.")
    selector: LabelSelector | None = opt("Passed to the metrics server for more specific metrics scoping.")


class MetricTarget(KubeModel):
    """The target value, average value or average utilization of a metric."""

    type: str = req("Utilization, Value or AverageValue.")
    value: Quantity | None = opt("Target value of the metric.")
    average_value: Quantity | None = opt("Target value of the metric's average across the relevant pods.")
    average_utilization: Int32 | None = opt("Target average of a resource metric, as a percentage of the "
                                            "pods' requests.")


class MetricValueStatus(KubeModel):
    """The current value of a metric."""

    value: Quantity | None = opt("Current value of the metric.")
    average_value: Quantity | None = opt("Current average of the metric across the relevant pods.")
    average_utilization: Int32 | None = opt("Current average of a resource metric, as a percentage of the "
                                            "pods' requests.")


class ObjectMetricSource(KubeModel):
    """A metric describing one Kubernetes object (hits-per-second on an Ingress)."""

    described_object: CrossVersionObjectReference = req("The object the metric describes.", markers=VALUE_STRUCT)
    target: MetricTarget = req("Target value of the metric.", markers=VALUE_STRUCT)
    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)


class PodsMetricSource(KubeModel):
    """A metric describing each pod of the scale target, averaged."""

    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)
    target: MetricTarget = req("Target value of the metric.", markers=VALUE_STRUCT)


class ResourceMetricSource(KubeModel):
    """A resource metric (CPU, memory) of each pod of the scale target, averaged."""

    name: str = req("Name of the resource.")
    target: MetricTarget = req("Target value of the metric.", markers=VALUE_STRUCT)


class ContainerResourceMetricSource(KubeModel):
    """A resource metric of one container in each pod of the scale target."""

    name: str = req("Name of the resource.")
    target: MetricTarget = req("Target value of the metric.", markers=VALUE_STRUCT)
    container: str = req("Name of the container.")


class ExternalMetricSource(KubeModel):
    """A metric not associated with any Kubernetes object (a queue's length)."""

    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)
    target: MetricTarget = req("Target value of the metric.", markers=VALUE_STRUCT)


class MetricSpec(KubeModel):
    """How to scale on one metric: ``type`` and the one matching source."""

    type: str = req("ContainerResource, External, Object, Pods or Resource.")
    object: ObjectMetricSource | None = opt("A metric describing one object.")
    pods: PodsMetricSource | None = opt("A metric describing each pod.")
    resource: ResourceMetricSource | None = opt("A resource metric of each pod.")
    container_resource: ContainerResourceMetricSource | None = opt("A resource metric of one container.")
    external: ExternalMetricSource | None = opt("A metric from outside the cluster.")


class HPAScalingPolicy(KubeModel):
    """A change that must hold over a past interval."""

    type: str = req("Pods or Percent.")
    value: Int32 = req("Amount of change permitted (greater than zero).")
    period_seconds: Int32 = req("Window the policy holds over (1 to 1800 seconds).")


class HPAScalingRules(KubeModel):
    """Scaling behavior in one direction."""

    stabilization_window_seconds: Int32 | None = opt("Seconds of past recommendations considered (0 to 3600).")
    select_policy: str | None = opt("Max (default), Min or Disabled.")
    policies: list[HPAScalingPolicy] | None = opt("Potential scaling policies.", markers=ATOMIC)
    tolerance: Quantity | None = opt("Tolerance on the current/desired metric ratio (beta "
                                     "HPAConfigurableTolerance gate).")


class HorizontalPodAutoscalerBehavior(KubeModel):
    """Scaling behavior up and down."""

    scale_up: HPAScalingRules | None = opt("Rules for scaling up.")
    scale_down: HPAScalingRules | None = opt("Rules for scaling down.")


class HorizontalPodAutoscalerSpec(KubeModel):
    """The desired autoscaling."""

    scale_target_ref: CrossVersionObjectReference = req("The resource to scale.", markers=VALUE_STRUCT)
    min_replicas: Int32 | None = opt("Lower limit of replicas; defaults to 1.")
    max_replicas: Int32 = req("Upper limit of replicas.")
    metrics: list[MetricSpec] | None = opt("Metrics to scale on; defaults to 80% average CPU utilization.",
                                           markers=ATOMIC)
    behavior: HorizontalPodAutoscalerBehavior | None = opt("Scaling behavior up and down.")


class ObjectMetricStatus(KubeModel):
    """The current value of an object metric."""

    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)
    current: MetricValueStatus = req("Current value of the metric.", markers=VALUE_STRUCT)
    described_object: CrossVersionObjectReference = req("The object the metric describes.", markers=VALUE_STRUCT)


class PodsMetricStatus(KubeModel):
    """The current value of a pods metric."""

    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)
    current: MetricValueStatus = req("Current value of the metric.", markers=VALUE_STRUCT)


class ResourceMetricStatus(KubeModel):
    """The current value of a resource metric."""

    name: str = req("Name of the resource.")
    current: MetricValueStatus = req("Current value of the metric.", markers=VALUE_STRUCT)


class ContainerResourceMetricStatus(KubeModel):
    """The current value of a container resource metric."""

    name: str = req("Name of the resource.")
    current: MetricValueStatus = req("Current value of the metric.", markers=VALUE_STRUCT)
    container: str = req("Name of the container.")


class ExternalMetricStatus(KubeModel):
    """The current value of an external metric."""

    metric: MetricIdentifier = req("The metric, by name and selector.", markers=VALUE_STRUCT)
    current: MetricValueStatus = req("Current value of the metric.", markers=VALUE_STRUCT)


class MetricStatus(KubeModel):
    """The last-read state of one metric."""

    type: str = req("ContainerResource, External, Object, Pods or Resource.")
    object: ObjectMetricStatus | None = opt("An object metric.")
    pods: PodsMetricStatus | None = opt("A pods metric.")
    resource: ResourceMetricStatus | None = opt("A resource metric.")
    container_resource: ContainerResourceMetricStatus | None = opt("A container resource metric.")
    external: ExternalMetricStatus | None = opt("An external metric.")


class HorizontalPodAutoscalerCondition(KubeModel):
    """The state of an HPA at a certain point."""

    type: str = req("AbleToScale, ScalingActive or ScalingLimited.")
    status: str = req("True, False or Unknown.")
    last_transition_time: Time | None = opt("When the condition last changed status.")
    reason: str | None = opt("Reason for the last transition.")
    message: str | None = opt("Human-readable details of the transition.")
    observed_generation: Int64 | None = opt("The .metadata.generation the condition was set for.")


class HorizontalPodAutoscalerStatus(KubeModel):
    """What the autoscaler last observed (written by its controller, which fakeapi does not run)."""

    observed_generation: Int64 | None = opt("Most recent generation observed.")
    last_scale_time: Time | None = opt("When the autoscaler last changed the replica count.")
    current_replicas: Int32 | None = opt("Replicas last seen.")
    desired_replicas: Int32 = req("Replicas last calculated.")
    current_metrics: list[MetricStatus] | None = opt("Last read state of the metrics.", markers=ATOMIC)
    conditions: list[HorizontalPodAutoscalerCondition] | None = opt(
        "Whether the autoscaler can scale its target.", markers=list_map("type") | patch_merge("type"))


class HorizontalPodAutoscaler(TopLevel):
    """Scales a resource with a scale subresource on the metrics given."""

    gvk: ClassVar[tuple[str, str, str]] = ("autoscaling", "v2", "HorizontalPodAutoscaler")
    api_version: str | None = opt("autoscaling/v2")
    kind: str | None = opt("HorizontalPodAutoscaler")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: HorizontalPodAutoscalerSpec | None = opt("The desired autoscaling.", markers=VALUE_STRUCT)
    status: HorizontalPodAutoscalerStatus | None = opt("What the autoscaler last observed.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (HorizontalPodAutoscaler,)}
