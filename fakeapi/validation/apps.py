"""``apps/v1`` strategies: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.

Defaults follow ``pkg/apis/apps/v1/defaults.go``, rules and messages ``pkg/apis/apps/validation``:
selectors are required, select the template's labels and never change; templates restart
``Always``; replica counts and history limits are non-negative.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required
from fakeapi.validation.common import get, immutable
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import (
    default_template,
    is_zero,
    non_negative,
    not_more_than_100_percent,
    validate_int_or_percent,
    validate_selector_and_template,
)

ALWAYS = ["Always"]
STATEFULSET_UPDATABLE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                       "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
NO_PVCS = ("PersistentVolumeClaims are not served by fakeapi, so per-replica volume claims cannot be created; "
           "use an ephemeral volume or a ResourceClaim instead")


def _status_counts(obj: dict[str, Any], fields: tuple[str, ...]) -> list[FieldError]:
    status = obj.get("status") or {}
    errs: list[FieldError] = []
    for key in fields:
        errs += non_negative(status.get(key), f"status.{key}")
    return errs


def _rolling_update(ru: dict[str, Any] | None, path: str) -> list[FieldError]:
    """``ValidateRollingUpdateDeployment`` / ``…DaemonSet``: not both zero, unavailable ≤ 100%."""
    ru = ru or {}
    unavailable, surge = ru.get("maxUnavailable"), ru.get("maxSurge")
    errs = validate_int_or_percent(unavailable, f"{path}.maxUnavailable")
    errs += validate_int_or_percent(surge, f"{path}.maxSurge")
    if is_zero(unavailable) and is_zero(surge):
        errs.append(invalid(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0"))
    return errs + not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")


class _WorkloadStrategy(Strategy):
    """A pod-owning apps/v1 kind: template defaults, selector/template rules, immutable selector."""

    kind = ""
    status_fields: tuple[str, ...] = ()

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        default_template((obj.get("spec") or {}).get("template"))

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = validate_selector_and_template(spec, "spec", self.kind, restart_policies=ALWAYS)
        for key in ("replicas", "minReadySeconds", "revisionHistoryLimit"):
            errs += non_negative(spec.get(key), f"spec.{key}")
        return errs + self.validate_spec(spec)

    def validate_spec(self, spec: dict[str, Any]) -> list[FieldError]:
        """The kind's own spec rules."""
        return []

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx) + immutable(get(new, "spec", "selector"), get(old, "spec", "selector"),
                                                   "spec.selector")

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return _status_counts(new, self.status_fields)


class DeploymentStrategy(_WorkloadStrategy):
    """Deployments: RollingUpdate 25%/25%, history 10, progress deadline 600 s."""

    kind = "deployment"
    status_fields = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        super().default(obj, ctx)
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)

    def validate_spec(self, spec: dict[str, Any]) -> list[FieldError]:
        strategy = spec.get("strategy") or {}
        errs: list[FieldError] = []
        kind = strategy.get("type")
        if kind not in ("Recreate", "RollingUpdate"):
            errs.append(not_supported("spec.strategy.type", kind or "", ["Recreate", "RollingUpdate"]))
        elif kind == "Recreate" and strategy.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
        elif kind == "RollingUpdate":
            errs += _rolling_update(strategy.get("rollingUpdate"), "spec.strategy.rollingUpdate")
        deadline = spec.get("progressDeadlineSeconds")
        if deadline is not None:
            errs += non_negative(deadline, "spec.progressDeadlineSeconds")
            if deadline <= (spec.get("minReadySeconds") or 0):
                errs.append(invalid("spec.progressDeadlineSeconds", deadline,
                                    "must be greater than minReadySeconds"))
        return errs


class ReplicaSetStrategy(_WorkloadStrategy):
    """ReplicaSets: replicas default to 1."""

    kind = "replicaset"
    status_fields = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    zero_counts = ("replicas",)

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        super().default(obj, ctx)
        obj.setdefault("spec", {}).setdefault("replicas", 1)


class StatefulSetStrategy(_WorkloadStrategy):
    """StatefulSets: OrderedReady, RollingUpdate partition 0; only some spec fields may change."""

    kind = "statefulset"
    status_fields = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas")
    zero_counts = ("replicas", "availableReplicas")

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        super().default(obj, ctx)
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        update = spec.setdefault("updateStrategy", {})
        update.setdefault("type", "RollingUpdate")
        if update["type"] == "RollingUpdate":
            ru = update.setdefault("rollingUpdate", {})
            ru.setdefault("partition", 0)
            ru.setdefault("maxUnavailable", 1)  # MaxUnavailableStatefulSet is beta (on) in 1.37
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})

    def validate_spec(self, spec: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        policy = spec.get("podManagementPolicy")
        if policy not in ("OrderedReady", "Parallel"):
            errs.append(not_supported("spec.podManagementPolicy", policy or "", ["OrderedReady", "Parallel"]))
        update = spec.get("updateStrategy") or {}
        kind = update.get("type")
        if kind not in ("OnDelete", "RollingUpdate"):
            errs.append(not_supported("spec.updateStrategy.type", kind or "", ["OnDelete", "RollingUpdate"]))
        elif kind == "OnDelete" and update.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.updateStrategy.rollingUpdate",
                                  "only allowed for updateStrategy 'RollingUpdate'"))
        else:
            ru, path = update.get("rollingUpdate") or {}, "spec.updateStrategy.rollingUpdate"
            errs += non_negative(ru.get("partition"), f"{path}.partition")
            errs += validate_int_or_percent(ru.get("maxUnavailable"), f"{path}.maxUnavailable")
            if is_zero(ru.get("maxUnavailable")):
                errs.append(invalid(f"{path}.maxUnavailable", ru["maxUnavailable"], "must be greater than 0"))
        errs += non_negative(get(spec, "ordinals", "start"), "spec.ordinals.start")
        if spec.get("volumeClaimTemplates"):
            errs.append(forbidden("spec.volumeClaimTemplates", NO_PVCS))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        errs = self.validate(new, ctx)
        masked = {k: v for k, v in (new.get("spec") or {}).items() if k not in STATEFULSET_MUTABLE}
        old_masked = {k: v for k, v in (old.get("spec") or {}).items() if k not in STATEFULSET_MUTABLE}
        if masked != old_masked:
            errs.append(forbidden("spec", STATEFULSET_UPDATABLE))
        return errs


class DaemonSetStrategy(_WorkloadStrategy):
    """DaemonSets: RollingUpdate maxUnavailable 1, maxSurge 0; history 10."""

    kind = "daemonset"
    status_fields = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")
    zero_counts = status_fields

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        super().default(obj, ctx)
        spec = obj.setdefault("spec", {})
        update = spec.setdefault("updateStrategy", {})
        update.setdefault("type", "RollingUpdate")
        if update["type"] == "RollingUpdate":
            ru = update.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", 1)
            ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)

    def validate_spec(self, spec: dict[str, Any]) -> list[FieldError]:
        update = spec.get("updateStrategy") or {}
        kind = update.get("type")
        if kind not in ("OnDelete", "RollingUpdate"):
            return [not_supported("spec.updateStrategy.type", kind or "", ["OnDelete", "RollingUpdate"])]
        if kind == "RollingUpdate":
            return _rolling_update(update.get("rollingUpdate"), "spec.updateStrategy.rollingUpdate")
        return []


class ControllerRevisionStrategy(Strategy):
    """ControllerRevisions: data required; data and revision never change."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = non_negative(obj.get("revision"), "revision")
        if obj.get("data") is None:
            errs.append(required("data"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx) + immutable(new.get("data"), old.get("data"), "data")


STRATEGIES: dict[str, Strategy] = {
    "Deployment": DeploymentStrategy(), "ReplicaSet": ReplicaSetStrategy(), "StatefulSet": StatefulSetStrategy(),
    "DaemonSet": DaemonSetStrategy(), "ControllerRevision": ControllerRevisionStrategy(),
}
