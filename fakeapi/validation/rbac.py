"""``rbac.authorization.k8s.io/v1`` strategies: roles, bindings and their upstream validation.

Names only need to be valid URL path segments (``system:masters`` style names are the norm).
Binding defaults fill ``roleRef.apiGroup`` and each subject's ``apiGroup``; ``roleRef`` is
immutable.  Escalation prevention (a user may grant only what it holds, unless it has
``escalate``/``bind``) is not enforced.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, not_supported, required
from fakeapi.models.rbac_v1 import GROUP
from fakeapi.validation import names
from fakeapi.validation.strategy import AdmissionContext, Strategy

SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


def _rule(rule: dict[str, Any], path: str, *, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.get("verbs"):
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs")
    if urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.get("apiGroups"):
        errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    if rule.get("resourceNames") and len(rule.get("resources") or ()) > 1:
        errs.append(required(f"{path}.resourceNames", "resource names cannot apply to multiple resources"))
    return errs


def _rules(obj: dict[str, Any], *, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or ()):
        errs += _rule(rule, f"rules[{i}]", namespaced=namespaced)
    return errs


def _subject(subject: dict[str, Any], path: str, *, namespaced: bool) -> list[FieldError]:
    name, kind, group = subject.get("name") or "", subject.get("kind"), subject.get("apiGroup") or ""
    errs = [] if name else [required(f"{path}.name")]
    if kind == "ServiceAccount":
        if name:
            errs += names.check(f"{path}.name", name, names.dns1123_subdomain)
        if group:
            errs.append(not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if not name:
            errs.append(invalid(f"{path}.name", name, f"{kind.lower()} name cannot be empty"))
        if group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind or "", SUBJECT_KINDS))
    return errs


def _binding(obj: dict[str, Any], *, namespaced: bool) -> list[FieldError]:
    ref = obj.get("roleRef") or {}
    errs: list[FieldError] = []
    if ref.get("apiGroup") != GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        errs.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    role_name = ref.get("name") or ""
    if not role_name:
        errs.append(required("roleRef.name"))
    errs += names.check("roleRef.name", role_name, names.path_segment_name) if role_name else []
    for i, subject in enumerate(obj.get("subjects") or ()):
        errs += _subject(subject, f"subjects[{i}]", namespaced=namespaced)
    return errs


def _default_binding(obj: dict[str, Any]) -> None:
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or ():
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


class _RBACStrategy(Strategy):
    namespaced = True

    def validate_name(self, name: str) -> list[str]:
        return names.path_segment_name(name)


class RoleStrategy(_RBACStrategy):
    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return _rules(obj, namespaced=self.namespaced)


class ClusterRoleStrategy(RoleStrategy):
    namespaced = False


class RoleBindingStrategy(_RBACStrategy):
    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        _default_binding(obj)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return _binding(obj, namespaced=self.namespaced)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = self.validate(new, ctx)
        if new.get("roleRef") != old.get("roleRef"):
            errs.append(invalid("roleRef", new.get("roleRef"), "cannot change roleRef"))
        return errs


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    namespaced = False


STRATEGIES: dict[str, Strategy] = {
    "Role": RoleStrategy(), "ClusterRole": ClusterRoleStrategy(),
    "RoleBinding": RoleBindingStrategy(), "ClusterRoleBinding": ClusterRoleBindingStrategy(),
}
