"""Table columns of the ``admissionregistration.k8s.io/v1`` kinds, after upstream's
``pkg/printers/internalversion/printers.go``: webhook configurations (Name, Webhooks, Age),
ValidatingAdmissionPolicy (Name, Validations, ParamKind, Age) and its binding (Name, PolicyName,
ParamRef, Age)."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.resource import AGE, Column


def _webhooks(config: dict[str, Any]) -> int:
    return len(config.get("webhooks") or [])


WEBHOOK_CONFIGURATION_COLUMNS = (
    Column("Webhooks", _webhooks, type="integer",
           description="Webhooks indicates the number of webhooks registered in this configuration"),
    AGE,
)


UNSET = "<unset>"


def _validations(policy: dict[str, Any]) -> int:
    return len((policy.get("spec") or {}).get("validations") or [])


def _param_kind(policy: dict[str, Any]) -> str:
    kind = (policy.get("spec") or {}).get("paramKind")
    return f"{kind.get('apiVersion') or ''}/{kind.get('kind') or ''}" if kind else UNSET


def _policy_name(binding: dict[str, Any]) -> str:
    return (binding.get("spec") or {}).get("policyName") or ""


def go_label_selector(selector: dict[str, Any]) -> str:
    """A ``metav1.LabelSelector`` as its generated Go ``String()`` prints it."""
    labels = selector.get("matchLabels") or {}
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [])
    return ("&LabelSelector{MatchLabels:map[string]string{" + "".join(f"{k}: {labels[k]}," for k in sorted(labels))
            + "},MatchExpressions:[]LabelSelectorRequirement{" + expressions + "},}")


def _param_ref(binding: dict[str, Any]) -> str:
    ref = (binding.get("spec") or {}).get("paramRef")
    if not ref:
        return UNSET
    if ref.get("name"):
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    return go_label_selector(ref["selector"]) if ref.get("selector") is not None else UNSET


VALIDATING_ADMISSION_POLICY_COLUMNS = (
    Column("Validations", _validations, type="integer",
           description="Validations indicates the number of validation rules defined in this configuration"),
    Column("ParamKind", _param_kind, description="ParamKind specifies the kind of resources used to parameterize "
                                                 "this policy"),
    AGE,
)
VALIDATING_ADMISSION_POLICY_BINDING_COLUMNS = (
    Column("PolicyName", _policy_name, description="PolicyName indicates the policy definition which the policy "
                                                   "binding binded to"),
    Column("ParamRef", _param_ref, description="ParamRef indicates the param resource which sets the "
                                               "configration param"),
    AGE,
)
