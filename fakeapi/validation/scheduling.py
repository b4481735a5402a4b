"""``scheduling.k8s.io`` strategies: Workload (v1beta1 and the v1alpha1 draft shape) and PodGroup.

Pod groups are immutable except ``gang.minCount`` (v1beta1); with ``DRAWorkloadResourceClaims``
off the KEP-5729 fields are dropped on write unless the stored object already uses them, and
the alpha CompositePodGroup fields are always dropped (their gate does not exist here, i.e. off).
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, required
from fakeapi.machinery.finalizers import PODGROUP_PROTECTION_FINALIZER
from fakeapi.validation import names
from fakeapi.validation.common import (
    get,
    immutable,
    validate_list,
)
from fakeapi.validation.core import validate_claim_source
from fakeapi.validation.priority import admit_group_priority
from fakeapi.validation.resource import CONSTRAINTS_MAX, fully_qualified_attribute
from fakeapi.validation.strategy import AdmissionContext, Strategy

POD_GROUPS_MAX = 8
POD_GROUP_CLAIMS_MAX = 4


def _one_of(obj: dict[str, Any] | None, path: str, keys: tuple[str, str], *,
            v1alpha1: bool = False) -> list[FieldError]:
    """A union: 1.36+ words a missing member as declarative validation does, 1.35 (v1alpha1) as Required."""
    present = [k for k in keys if (obj or {}).get(k) is not None]
    listed = ", ".join(f"`{k}`" for k in keys)
    if not present:
        if v1alpha1:
            return [required(path, f"exactly one of {listed} is required")]
        return [invalid(path, "", f"must specify one of: {listed}")]
    if len(present) > 1:
        value = "{" + ", ".join(f"`{k}`" for k in present) + "}"
        return [invalid(path, value, f"exactly one of {listed} is required, but multiple fields are set")]
    return []


def _policy(policy: dict[str, Any] | None, path: str, *, v1alpha1: bool = False) -> list[FieldError]:
    errs = _one_of(policy, path, ("basic", "gang"), v1alpha1=v1alpha1)
    if len(errs) or (policy or {}).get("gang") is None:
        return errs  # upstream checks the chosen member only once the union is valid
    min_count = policy["gang"].get("minCount") or 0
    # 1.36+ reports 0 (unset) as Required, like declarative validation; 1.35 as not positive.
    if min_count == 0 and not v1alpha1:
        return [required(f"{path}.gang.minCount")]
    if min_count < 1:
        return [invalid(f"{path}.gang.minCount", min_count, "must be greater than zero")]
    return []


def _claims(claims: list[dict[str, Any]] | None, path: str) -> list[FieldError]:
    return validate_list(claims, path, POD_GROUP_CLAIMS_MAX, validate_claim_source, key=lambda c: c.get("name"))


def _controller_ref(ref: dict[str, Any] | None) -> list[FieldError]:
    if ref is None:
        return []
    errs: list[FieldError] = []
    if ref.get("apiGroup"):
        errs += names.check("spec.controllerRef.apiGroup", ref["apiGroup"], names.dns1123_subdomain)
    errs += [required(f"spec.controllerRef.{k}") for k in ("kind", "name") if not ref.get(k)]
    return errs


def _group_fields(tpl: dict[str, Any], path: str) -> list[FieldError]:
    """Fields shared by v1beta1 PodGroupTemplate and PodGroupSpec."""
    errs = _policy(tpl.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    topology = get(tpl, "schedulingConstraints", "topology")
    errs += validate_list(topology, f"{path}.schedulingConstraints.topology", 1,
                          lambda t, p: names.check_required(f"{p}.key", t.get("key"), names.qualified_name))
    errs += _claims(tpl.get("resourceClaims"), f"{path}.resourceClaims")
    if tpl.get("disruptionMode") is not None:
        errs += _one_of(tpl["disruptionMode"], f"{path}.disruptionMode", ("single", "all"))
    if tpl.get("priorityClassName"):
        errs += names.check(f"{path}.priorityClassName", tpl["priorityClassName"], names.dns1123_subdomain)
    if tpl.get("priority") is not None and tpl["priority"] > 1_000_000_000:
        errs.append(invalid(f"{path}.priority", tpl["priority"], "must be less than or equal to 1000000000"))
    policy = tpl.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        errs.append(invalid(f"{path}.preemptionPolicy", policy, "must be Never or PreemptLowerPriority"))
    return errs


def _ensure_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(obj.get("spec"), dict):
        obj["spec"] = {}
    return obj["spec"]


def _keep_if_used(new: dict[str, Any] | None, old: dict[str, Any] | None, key: str, enabled: bool) -> None:
    if new is not None and not enabled and not (old or {}).get(key):
        new.pop(key, None)


# --- v1beta1 -------------------------------------------------------------------------------

def _template(tpl: dict[str, Any], path: str) -> list[FieldError]:
    return names.check_required(f"{path}.name", tpl.get("name"), names.dns1123_label) + _group_fields(tpl, path)


class WorkloadV1beta1Strategy(Strategy):
    """Workload (1.37 shape): 1..8 immutable podGroupTemplates."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        _ensure_spec(obj)

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        spec, old_spec = _ensure_spec(new), get(old, "spec") or {}
        _keep_if_used(spec, old_spec, "compositePodGroupTemplates", False)
        old_templates = {t.get("name"): t for t in old_spec.get("podGroupTemplates") or []}
        for tpl in spec.get("podGroupTemplates") or []:
            _keep_if_used(tpl, old_templates.get(tpl.get("name")), "resourceClaims",
                          ctx.gates.DRAWorkloadResourceClaims)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _controller_ref(spec.get("controllerRef"))
        templates = spec.get("podGroupTemplates")
        if not templates and not spec.get("compositePodGroupTemplates"):
            errs.append(required("spec.podGroupTemplates", "must have at least one item"))
        return errs + validate_list(templates, "spec.podGroupTemplates", POD_GROUPS_MAX, _template,
                                    key=lambda t: t.get("name"))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx) + _workload_immutability(new, old, "podGroupTemplates")


def _workload_immutability(new: dict[str, Any], old: dict[str, Any], groups_key: str) -> list[FieldError]:
    errs: list[FieldError] = []
    old_ref = get(old, "spec", "controllerRef")
    if old_ref is not None:
        errs += immutable(get(new, "spec", "controllerRef"), old_ref, "spec.controllerRef")
    return errs + immutable(get(new, "spec", groups_key), get(old, "spec", groups_key), f"spec.{groups_key}")


class PodGroupStrategy(Strategy):
    """PodGroup: protection finalizer, disruptionMode default, immutable spec but gang.minCount."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        _ensure_spec(obj).setdefault("disruptionMode", {"single": {}})

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        gate = ctx.gates.DRAWorkloadResourceClaims
        _keep_if_used(_ensure_spec(new), get(old, "spec"), "resourceClaims", gate)
        _keep_if_used(new.get("spec"), get(old, "spec"), "parentCompositePodGroupName", False)
        _keep_if_used(new.get("status"), get(old, "status"), "resourceClaimStatuses", gate)

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if ctx.operation != "CREATE" or not ctx.gates.GenericWorkload:
            return
        finalizers = obj.setdefault("metadata", {}).setdefault("finalizers", [])
        if PODGROUP_PROTECTION_FINALIZER not in finalizers:
            finalizers.append(PODGROUP_PROTECTION_FINALIZER)
        admit_group_priority(obj, ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        ref = spec.get("workloadRef")
        if ref is not None:
            errs += names.check_required("spec.workloadRef.workloadName", ref.get("workloadName"),
                                         names.dns1123_subdomain)
            errs += names.check_required("spec.workloadRef.templateName", ref.get("templateName"),
                                         names.dns1123_label)
        return errs + _group_fields(spec, "spec")

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        errs = self.validate(new, ctx)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        for key in ("workloadRef", "schedulingConstraints", "resourceClaims", "disruptionMode",
                    "priorityClassName", "priority", "preemptionPolicy", "parentCompositePodGroupName"):
            errs += immutable(spec.get(key), old_spec.get(key), f"spec.{key}")
        policy, old_policy = spec.get("schedulingPolicy") or {}, old_spec.get("schedulingPolicy") or {}
        errs += immutable(policy.get("basic"), old_policy.get("basic"), "spec.schedulingPolicy.basic")
        if (policy.get("gang") is None) != (old_policy.get("gang") is None):
            errs.append(invalid("spec.schedulingPolicy.gang", policy.get("gang"), "field is immutable"))
        return errs

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        spec_names = {c.get("name") for c in get(new, "spec", "resourceClaims") or []}

        def entry(s: dict[str, Any], p: str) -> list[FieldError]:
            if s.get("name") not in spec_names:
                return [invalid(f"{p}.name", s.get("name"),
                                "must match the name of an entry in `spec.resourceClaims`")]
            if s.get("resourceClaimName"):
                return names.check(f"{p}.resourceClaimName", s["resourceClaimName"], names.dns1123_subdomain)
            return []

        errs = validate_list(get(new, "status", "resourceClaimStatuses"), "status.resourceClaimStatuses",
                              POD_GROUP_CLAIMS_MAX, entry, key=lambda s: s.get("name"))
        return errs + validate_list(get(new, "status", "conditions"), "status.conditions", -1,
                                    key=lambda c: c.get("type"))


# --- v1alpha1 (1.35 shape + KEP-5729 draft extensions) -------------------------------------

def _alpha_claim(claim: dict[str, Any], path: str) -> list[FieldError]:
    def constraint(c: dict[str, Any], p: str) -> list[FieldError]:
        if not c.get("matchAttribute"):
            return [required(f"{p}.matchAttribute")]
        return fully_qualified_attribute(f"{p}.matchAttribute", c["matchAttribute"])

    return validate_claim_source(claim, path) + validate_list(
        claim.get("constraints"), f"{path}.constraints", CONSTRAINTS_MAX, constraint)


def _alpha_group(group: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check_required(f"{path}.name", group.get("name"), names.dns1123_label)
    errs += _policy(group.get("policy"), f"{path}.policy", v1alpha1=True)
    return errs + validate_list(group.get("resourceClaims"), f"{path}.resourceClaims", POD_GROUP_CLAIMS_MAX,
                                _alpha_claim, key=lambda c: c.get("name"))


class WorkloadV1alpha1Strategy(Strategy):
    """Workload (1.35 shape): 1..8 immutable podGroups, draft resourceClaims behind the KEP-5729 gate."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        _ensure_spec(obj)

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        old_groups = {g.get("name"): g for g in get(old, "spec", "podGroups") or []}
        for group in get(new, "spec", "podGroups") or []:
            _keep_if_used(group, old_groups.get(group.get("name")), "resourceClaims",
                          ctx.gates.DRAWorkloadResourceClaims)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _controller_ref(spec.get("controllerRef"))
        if not spec.get("podGroups"):
            errs.append(required("spec.podGroups", "must have at least one item"))
        return errs + validate_list(spec.get("podGroups"), "spec.podGroups", POD_GROUPS_MAX, _alpha_group,
                                    key=lambda g: g.get("name"))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx) + _workload_immutability(new, old, "podGroups")
