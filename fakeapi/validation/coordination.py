"""``coordination.k8s.io/v1`` Lease strategy (``ValidateLeaseSpec``)."""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, not_supported, required
from fakeapi.validation.strategy import AdmissionContext, Strategy

STRATEGIES_ALLOWED = ["OldestEmulationVersion"]


def validate_lease_spec(spec: dict[str, Any]) -> list[FieldError]:
    """Positive duration, non-negative transitions, a known strategy with a preferred holder."""
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("strategy") is not None and spec["strategy"] not in STRATEGIES_ALLOWED:
        errs.append(not_supported("spec.strategy", spec["strategy"], STRATEGIES_ALLOWED))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        errs.append(required("spec.strategy", "must be specified when preferredHolder is set"))
    return errs


class LeaseStrategy(Strategy):
    """Leases."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_lease_spec(obj.get("spec") or {})


STRATEGIES: dict[str, Strategy] = {"Lease": LeaseStrategy()}
