"""Rules every workload kind shares: label selectors, pod templates, int-or-percent values.

Upstream keeps these in ``apimachinery/pkg/apis/meta/v1/validation`` (``ValidateLabelSelector``)
and ``pkg/apis/core/validation`` (``ValidatePodTemplateSpec``); messages follow them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required
from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict
from fakeapi.validation import names
from fakeapi.validation.common import get, validate_annotations, validate_labels
from fakeapi.validation.core import default_pod_spec, validate_pod_spec

_SELECTOR_OPERATORS = ["DoesNotExist", "Exists", "In", "NotIn"]
_PERCENT = re.compile(r"^[0-9]+%\Z")
IS_NEGATIVE = "must be greater than or equal to 0"


def non_negative(value: int | None, path: str) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    return [invalid(path, value, IS_NEGATIVE)] if value is not None and value < 0 else []


def validate_label_selector(selector: dict[str, Any] | None, path: str) -> list[FieldError]:
    """``ValidateLabelSelector``: operators, values per operator, qualified keys, label values."""
    errs: list[FieldError] = []
    for i, req in enumerate((selector or {}).get("matchExpressions") or []):
        p = f"{path}.matchExpressions[{i}]"
        op, values = req.get("operator", ""), req.get("values") or []
        if op in ("In", "NotIn") and not values:
            errs.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op not in _SELECTOR_OPERATORS:
            errs.append(invalid(f"{p}.operator", op, "not a valid selector operator"))
        errs += names.check(f"{p}.key", req.get("key", ""), names.qualified_name)
        for v in values:
            errs += names.check(f"{p}.values", v, names.label_value)
    errs += validate_labels((selector or {}).get("matchLabels"), f"{path}.matchLabels")
    return errs


def selector_matches_labels(selector: dict[str, Any] | None, labels: dict[str, str] | None) -> bool:
    """Whether a ``metav1.LabelSelector`` selects ``labels`` (False for an unparsable selector)."""
    try:
        return label_selector_from_dict(selector).matches(labels or {})
    except SelectorError:
        return False


def _nest(errs: list[FieldError], prefix: str) -> list[FieldError]:
    # validate_pod_spec reports paths from "spec."; a template's spec sits under ``prefix``.
    return [replace(e, field=f"{prefix}.{e.field}") for e in errs]


def validate_pod_template(template: dict[str, Any] | None, path: str, *,
                          restart_policies: list[str]) -> list[FieldError]:
    """``ValidatePodTemplateSpec`` plus the restart policies the owning kind allows."""
    if not template:
        return [required(path)]
    errs = validate_labels(get(template, "metadata", "labels"), f"{path}.metadata.labels")
    errs += validate_annotations(get(template, "metadata", "annotations"), f"{path}.metadata.annotations")
    spec = template.get("spec")
    if not spec:
        return [*errs, required(f"{path}.spec")]
    errs += _nest(validate_pod_spec(spec), path)
    policy = spec.get("restartPolicy")
    if policy in ("Always", "Never", "OnFailure") and policy not in restart_policies:
        errs.append(not_supported(f"{path}.spec.restartPolicy", policy, restart_policies))
    if spec.get("activeDeadlineSeconds") is not None and "Always" in restart_policies:
        errs.append(forbidden(f"{path}.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicaSet is "
                                                                    "not Supported"))
    return errs


def validate_selector_and_template(spec: dict[str, Any], path: str, kind: str, *,
                                   restart_policies: list[str]) -> list[FieldError]:
    """A workload's selector is required, non-empty and must select its template's labels."""
    selector, template = spec.get("selector"), spec.get("template")
    errs: list[FieldError] = []
    if selector is None:
        errs.append(required(f"{path}.selector"))
    else:
        errs += validate_label_selector(selector, f"{path}.selector")
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid(f"{path}.selector", selector, f"empty selector is invalid for {kind}"))
    labels = get(template, "metadata", "labels")
    if selector is not None and not errs and not selector_matches_labels(selector, labels):
        errs.append(invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    return errs + validate_pod_template(template, f"{path}.template", restart_policies=restart_policies)


def default_template(template: dict[str, Any] | None) -> None:
    """A pod template's spec gets the pod spec defaults (``SetDefaults_PodSpec``)."""
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def validate_int_or_percent(value: int | str | None, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a non-negative int or a ``N%`` string."""
    if value is None:
        return []
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                         "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
        return []
    return non_negative(value, path)


def percent_value(value: int | str | None) -> int | None:
    """The number of an int-or-percent value (``"25%"`` → 25), None when unset or malformed."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return None


def is_zero(value: int | str | None) -> bool:
    """An int-or-percent that resolves to nothing: ``0`` or ``"0%"`` (unset is not zero)."""
    return value is not None and percent_value(value) == 0


def not_more_than_100_percent(value: int | str | None, path: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``."""
    if isinstance(value, str) and (percent_value(value) or 0) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []
