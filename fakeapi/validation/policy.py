"""``policy/v1`` strategy: PodDisruptionBudget (``pkg/apis/policy/validation``)."""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, not_supported
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import (
    non_negative,
    not_more_than_100_percent,
    validate_int_or_percent,
    validate_label_selector,
)

EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]


STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


class PodDisruptionBudgetStrategy(Strategy):
    """PDBs: one of minAvailable/maxUnavailable, valid selector, a known unhealthy-pod policy."""

    zero_counts = STATUS_COUNTS

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            errs.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
        for key in ("minAvailable", "maxUnavailable"):
            errs += validate_int_or_percent(spec.get(key), f"spec.{key}")
            errs += not_more_than_100_percent(spec.get(key), f"spec.{key}")
        if spec.get("selector") is not None:
            errs += validate_label_selector(spec["selector"], "spec.selector")
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None and policy not in EVICTION_POLICIES:
            errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
        return errs

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        status = new.get("status") or {}
        errs: list[FieldError] = []
        for key in STATUS_COUNTS:
            errs += non_negative(status.get(key), f"status.{key}")
        return errs


STRATEGIES: dict[str, Strategy] = {"PodDisruptionBudget": PodDisruptionBudgetStrategy()}
