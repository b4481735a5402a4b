"""``autoscaling/v2`` HorizontalPodAutoscaler strategy.

- Defaults (``pkg/apis/autoscaling/v2/defaults.go``): ``minReplicas`` 1; no metrics means 80%
  average CPU utilization; a ``behavior`` that is set gets both directions filled in (scale up:
  4 pods or 100% per 15 s, no stabilization; scale down: 100% per 15 s, the window left to the
  controller's flag; both ``selectPolicy: Max``).
- Validation (``pkg/apis/autoscaling/validation``): replica bounds (``minReplicas`` 0 only with the
  alpha ``HPAScaleToZero`` gate or when the stored object has it), the target reference (kind,
  name, and an API group unless it is a ReplicationController), each metric's one source and
  target, the scaling rules (windows, policies, tolerance).
- Strategy (``pkg/registry/autoscaling/horizontalpodautoscaler``): status is cleared on create and
  kept on updates of the main resource (the registry's spec/status split), tolerances are dropped
  while ``HPAConfigurableTolerance`` is off, and the apiVersion checks ratchet on updates.

No autoscaling controller runs: fakeapi has no metrics, so nothing scales and status is only what
clients write through ``/status``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required
from fakeapi.validation import names
from fakeapi.validation.common import get, quantity_value
from fakeapi.validation.core import validate_resource_name
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import non_negative

MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
DEFAULT_CPU_UTILIZATION = 80
METRIC_SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
# MetricSpec.type -> the field holding that source.
SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                 "ContainerResource": "containerResource"}
METRIC_TARGET_TYPES = ("Utilization", "Value", "AverageValue")
SELECT_POLICIES = ["Disabled", "Max", "Min"]
POLICY_TYPES = ["Percent", "Pods"]


def _scale_up_rules() -> dict[str, Any]:
    return {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _scale_down_rules() -> dict[str, Any]:
    # No stabilization window: the controller's --horizontal-pod-autoscaler-downscale-stabilization
    # flag stands for it.
    return {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _filled_rules(rules: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    """``copyHPAScalingRules``: the defaults, with every field the client set (even ``[]``) kept."""
    if isinstance(rules, dict):
        defaults.update({key: value for key, value in rules.items() if value is not None})
    return defaults


def default_hpa(obj: dict[str, Any]) -> None:
    """``SetDefaults_HorizontalPodAutoscaler`` (autoscaling/v2)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _filled_rules(behavior.get("scaleUp"), _scale_up_rules())
        behavior["scaleDown"] = _filled_rules(behavior.get("scaleDown"), _scale_down_rules())


@dataclass(frozen=True)
class ReferenceOptions:
    """``CrossVersionObjectReferenceValidationOptions``: which apiVersion checks a reference skips."""

    allow_empty_api_group: bool = False
    allow_invalid_api_version: bool = False


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: (group, version), or None for more than one slash."""
    if api_version in ("", "/"):
        return "", ""
    if api_version.count("/") > 1:
        return None
    group, _, version = api_version.rpartition("/")
    return group, version


def validate_api_version(ref: dict[str, Any], opts: ReferenceOptions, path: str) -> list[FieldError]:
    """``ValidateAPIVersion``: a parsable group/version, with a group unless the options allow none."""
    api_version = ref.get("apiVersion") or ""
    parsed = _parse_group_version(api_version)
    if parsed is None:
        return [invalid(path, api_version, f"unexpected GroupVersion string: {api_version}")]
    if not parsed[0] and not opts.allow_empty_api_group:
        if not api_version:
            return [required(path, "")]
        return [invalid(path, api_version, "must specify an API group")]
    return []


def validate_cross_version_object_reference(ref: Any, path: str, opts: ReferenceOptions) -> list[FieldError]:
    """``ValidateCrossVersionObjectReference``: kind and name set and one URL path segment each."""
    ref = ref if isinstance(ref, dict) else {}
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        errs += names.check_required(f"{path}.{key}", ref.get(key), names.path_segment_name)
    if not opts.allow_invalid_api_version:
        errs += validate_api_version(ref, opts, f"{path}.apiVersion")
    return errs


def _sign(quantity: Any) -> int:
    value = quantity_value(quantity)
    return 1 if value is None else (value > 0) - (value < 0)


def _metric_target(target: dict[str, Any], path: str) -> list[FieldError]:
    """``validateMetricTarget``."""
    errs: list[FieldError] = []
    kind = target.get("type") or ""
    if not kind:
        errs.append(required(f"{path}.type", "must specify a metric target type"))
    if kind not in METRIC_TARGET_TYPES:
        errs.append(invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and _sign(target[key]) != 1:
            errs.append(invalid(f"{path}.{key}", target[key], "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errs


def _metric_identifier(metric: dict[str, Any], path: str) -> list[FieldError]:
    """``validateMetricIdentifier``."""
    name = metric.get("name")
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return names.check(f"{path}.name", name, names.path_segment_name)


def _object_source(src: dict[str, Any], path: str, opts: ReferenceOptions) -> list[FieldError]:
    target = src.get("target") or {}
    errs = validate_cross_version_object_reference(src.get("describedObject"), f"{path}.describedObject", opts)
    errs += _metric_identifier(src.get("metric") or {}, f"{path}.metric") + _metric_target(target, f"{path}.target")
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    return errs


def _external_source(src: dict[str, Any], path: str) -> list[FieldError]:
    target = src.get("target") or {}
    errs = _metric_identifier(src.get("metric") or {}, f"{path}.metric") + _metric_target(target, f"{path}.target")
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(required(f"{path}.target.averageValue",
                             "must set either a target value for metric or a per-pod target"))
    if target.get("value") is not None and target.get("averageValue") is not None:
        errs.append(forbidden(f"{path}.target.value",
                              "may not set both a target value for metric and a per-pod target"))
    return errs


def _pods_source(src: dict[str, Any], path: str) -> list[FieldError]:
    target = src.get("target") or {}
    errs = _metric_identifier(src.get("metric") or {}, f"{path}.metric") + _metric_target(target, f"{path}.target")
    if target.get("averageValue") is None:
        errs.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    return errs


def _resource_target(target: dict[str, Any], path: str) -> list[FieldError]:
    """What Resource and ContainerResource sources share: utilization or average value, not both."""
    errs = _metric_target(target, path)
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        errs.append(required(f"{path}.averageUtilization",
                             "must set either a target raw value or a target utilization"))
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        errs.append(forbidden(f"{path}.averageValue", "may not set both a target raw value and a target utilization"))
    return errs


def _resource_source(src: dict[str, Any], path: str) -> list[FieldError]:
    errs = [] if src.get("name") else [required(f"{path}.name", "must specify a resource name")]
    return errs + _resource_target(src.get("target") or {}, f"{path}.target")


def _container_resource_source(src: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = src.get("name")
    if not name:
        errs.append(required(f"{path}.name", "must specify a resource name"))
    else:
        errs += validate_resource_name(name, f"{path}.name")
    container = src.get("container")
    if not container:
        errs.append(required(f"{path}.container", "must specify a container"))
    else:
        errs += names.check(f"{path}.container", container, names.dns1123_label)
    return errs + _resource_target(src.get("target") or {}, f"{path}.target")


def _metric_spec(spec: dict[str, Any], path: str, opts: ReferenceOptions) -> list[FieldError]:
    """``validateMetricSpec``: the type, then the source it names and no other."""
    errs: list[FieldError] = []
    kind = spec.get("type") or ""
    if not kind:
        errs.append(required(f"{path}.type", "must specify a metric source type"))
    if kind not in METRIC_SOURCE_TYPES:
        errs.append(not_supported(f"{path}.type", kind, METRIC_SOURCE_TYPES))
    # Only the first source present is validated, in upstream's order.
    checks: dict[str, Callable[[dict[str, Any], str], list[FieldError]]] = {
        "object": lambda src, p: _object_source(src, p, opts), "external": _external_source,
        "pods": _pods_source, "resource": _resource_source, "containerResource": _container_resource_source}
    present = [key for key in checks if isinstance(spec.get(key), dict)]
    if present:
        errs += checks[present[0]](spec[present[0]], f"{path}.{present[0]}")
    expected = SOURCE_FIELDS.get(kind, "")
    if expected and expected not in present:
        errs.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    if not expected:
        # Upstream's switch reports an unknown type a second time.
        errs.append(not_supported(f"{path}.type", kind, METRIC_SOURCE_TYPES))
    if len(present) != 1:
        errs += [forbidden(f"{path}.{key}", "must populate the given metric source only")
                 for key in sorted(present) if key != expected]
    return errs


def _metrics(metrics: list[Any], path: str, min_replicas: Any, opts: ReferenceOptions) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, metric in enumerate(metrics):
        errs += _metric_spec(metric if isinstance(metric, dict) else {}, f"{path}[{i}]", opts)
    types = {metric.get("type") for metric in metrics if isinstance(metric, dict)}
    if min_replicas == 0 and not types & {"Object", "External"}:
        errs.append(forbidden(path, "must specify at least one Object or External metric to support scaling to "
                                    "zero replicas"))
    return errs


def _scaling_policy(policy: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if policy.get("type") not in POLICY_TYPES:
        errs.append(not_supported(f"{path}.type", policy.get("type") or "", POLICY_TYPES))
    value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
    if value <= 0:
        errs.append(invalid(f"{path}.value", value, "must be greater than zero"))
    if period <= 0:
        errs.append(invalid(f"{path}.periodSeconds", period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        errs.append(invalid(f"{path}.periodSeconds", period, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def _scaling_rules(rules: Any, path: str) -> list[FieldError]:
    """``validateScalingRules``."""
    if not isinstance(rules, dict):
        return []
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        errs += _scaling_policy(policy if isinstance(policy, dict) else {}, f"{path}.policies[{i}]")
    tolerance = rules.get("tolerance")
    if tolerance is not None and _sign(tolerance) < 0:
        errs.append(invalid(f"{path}.tolerance", tolerance, "must be greater or equal to zero"))
    return errs


@dataclass(frozen=True)
class SpecOptions:
    """``HorizontalPodAutoscalerSpecValidationOptions``."""

    min_replicas_lower_bound: int = 1
    scale_target_ref: ReferenceOptions = ReferenceOptions()
    object_metrics: ReferenceOptions = ReferenceOptions(allow_empty_api_group=True)


def validate_hpa_spec(spec: dict[str, Any], opts: SpecOptions) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec``."""
    errs: list[FieldError] = []
    low = opts.min_replicas_lower_bound
    min_replicas, max_replicas = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if min_replicas is not None and min_replicas < low:
        errs.append(invalid("spec.minReplicas", min_replicas, f"must be greater than or equal to {low}"))
    if max_replicas < 1:
        errs.append(invalid("spec.maxReplicas", max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        errs.append(invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_object_reference(spec.get("scaleTargetRef"), "spec.scaleTargetRef",
                                                    opts.scale_target_ref)
    errs += _metrics(spec.get("metrics") or [], "spec.metrics", min_replicas, opts.object_metrics)
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        errs += _scaling_rules(behavior.get("scaleUp"), "spec.behavior.scaleUp")
        errs += _scaling_rules(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    return errs


def spec_options(new: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> SpecOptions:
    """``validationOptionsForHorizontalPodAutoscaler``: what a create checks, relaxed on updates for
    what the stored object already has (minReplicas 0, the target's apiVersion, object metrics)."""
    low = 0 if ctx.gates.HPAScaleToZero or get(old, "spec", "minReplicas") == 0 else 1
    new_ref, old_ref = get(new, "spec", "scaleTargetRef") or {}, get(old, "spec", "scaleTargetRef") or {}
    target = ReferenceOptions()
    if old is not None and (old_ref.get("apiVersion"), old_ref.get("kind")) == (new_ref.get("apiVersion"),
                                                                               new_ref.get("kind")):
        target = ReferenceOptions(allow_invalid_api_version=True)
    elif new_ref.get("kind") == "ReplicationController":  # the one scalable kind of the core group
        target = ReferenceOptions(allow_empty_api_group=True)
    objects = ReferenceOptions(allow_empty_api_group=True)
    old_objects = [(metric.get("object") or {}).get("describedObject") or {}
                   for metric in get(old, "spec", "metrics") or [] if metric.get("type") == "Object"]
    if any(validate_api_version(ref, objects, "") for ref in old_objects):
        objects = ReferenceOptions(allow_empty_api_group=True, allow_invalid_api_version=True)
    return SpecOptions(low, target, objects)


def _uses_tolerance(hpa: dict[str, Any] | None) -> bool:
    behavior = get(hpa, "spec", "behavior") or {}
    return any(isinstance(behavior.get(key), dict) and behavior[key].get("tolerance") is not None
               for key in ("scaleUp", "scaleDown"))


class HorizontalPodAutoscalerStrategy(Strategy):
    """HorizontalPodAutoscalers: v2 defaults, spec validation, status counts never negative."""

    zero_counts = ("desiredReplicas",)

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        default_hpa(obj)

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        if ctx.gates.HPAConfigurableTolerance or _uses_tolerance(old):
            return
        behavior = get(new, "spec", "behavior") or {}
        for key in ("scaleUp", "scaleDown"):
            if isinstance(behavior.get(key), dict):
                behavior[key].pop("tolerance", None)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_hpa_spec(obj.get("spec") or {}, spec_options(obj, None, ctx))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_hpa_spec(new.get("spec") or {}, spec_options(new, old, ctx))

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        status = new.get("status") or {}
        return (non_negative(status.get("currentReplicas"), "status.currentReplicas")
                + non_negative(status.get("desiredReplicas"), "status.desiredReplicas"))


STRATEGIES: dict[str, Strategy] = {"HorizontalPodAutoscaler": HorizontalPodAutoscalerStrategy()}
