"""ValidatingAdmissionPolicy enforcement: upstream's validating policy plugin
(``apiserver/pkg/admission/plugin/policy/validating``), run by the registry's write pipeline after
a write's own validation, as kube-apiserver runs it after the strategy's.

For each ValidatingAdmissionPolicyBinding (by name) whose policy exists and matches the request
(the policy's ``matchConstraints``, then the binding's ``matchResources``): its parameters are
found, its match conditions decide whether it applies, and its validations run once per
parameter.  A failed validation (or an evaluation error under ``failurePolicy: Fail``) is a
decision the binding's ``validationActions`` route: Deny refuses the write with the first such
decision, Warn adds a warning, Audit does nothing here (fakeapi keeps no audit log).  Messages,
reasons and codes are upstream's.

Deviations: ``matchPolicy: Equivalent`` matches as Exact (fakeapi serves each resource in one
version, bar a few); variables are evaluated eagerly, in order (one that fails is left out, and
the validation that reads it fails on the missing key); no cost budget; the authorizer is not
provided; writes with no bindings in the store skip all of this in one check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakeapi.auth.users import UserInfo, api_form
from fakeapi.errors import (
    Forbidden,
    Invalid,
    RequestEntityTooLarge,
    StatusError,
    Unauthorized,
    qualified_kind,
    status_details,
)
from fakeapi.machinery.admission_match import RequestAttributes, matches_resources
from fakeapi.machinery.admission_review import cel_variables
from fakeapi.machinery.cel_admission import evaluate, match_conditions
from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import KindTable, ResourceType
from fakeapi.store.objects import ObjectStore

GROUP = "admissionregistration.k8s.io"
POLICIES, BINDINGS = "validatingadmissionpolicies", "validatingadmissionpolicybindings"
# Never evaluated by policies (upstream's IsExemptAdmissionConfigurationResource).
EXEMPT = frozenset({"validatingwebhookconfigurations", "mutatingwebhookconfigurations", POLICIES, BINDINGS,
                    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"})
# A validation's reason is its denial's Status (reason and code); any other is Invalid (422).
_REASONS: dict[str, type[StatusError]] = {"Unauthorized": Unauthorized, "Forbidden": Forbidden,
                                          "RequestEntityTooLarge": RequestEntityTooLarge, "Invalid": Invalid}
MAX_MESSAGE_BYTES = 5 * 1024  # a messageExpression's result beyond this is not used


class _Refusal(Exception):
    """A decision that denies whatever the binding's actions are: a configuration error, of the
    policy (its message names no binding) or of the binding."""

    def __init__(self, message: str, *, of_policy: bool = False) -> None:
        super().__init__(message)
        self.of_policy = of_policy


class Policies:
    """The ValidatingAdmissionPolicies and bindings of one registry, applied to its writes."""

    def __init__(self, store: ObjectStore, reads: Reader, kinds: KindTable) -> None:
        self._store = store
        self._reads = reads
        self._kinds = kinds
        policies, bindings = kinds.by_plural(GROUP, POLICIES), kinds.by_plural(GROUP, BINDINGS)
        assert policies is not None and bindings is not None, "the admissionregistration kinds are built in"
        self._policies, self._bindings = policies, bindings
        # Asked on every write: most clusters have no binding, and then that is all a write pays.
        self._bindings_key = bindings.storage_key

    def active(self) -> bool:
        """Whether any binding is stored."""
        return self._store.count(self._bindings_key) > 0

    def bindings(self) -> list[dict[str, Any]]:
        """The bindings stored, by name."""
        return self._reads.items(self._bindings)

    def admit(self, rt: ResourceType, attrs: RequestAttributes, obj: dict[str, Any] | None,
              old: dict[str, Any] | None, *, user: UserInfo | None, dry_run: bool,
              options: Mapping[str, Any] | None = None) -> list[str]:
        """Run the policies the stored bindings bind on one write; returns the warnings of Warn
        actions, raises the Status of the first denial.  ``options``: the fields of the request's
        Create-, Update- or DeleteOptions as it sent them (``request.options``)."""
        policy_rt = self._policies
        if rt.group == GROUP and rt.plural in EXEMPT:
            return []
        judging = attrs.judging_namespace
        namespace = self._reads.find(self._kinds.namespaces, "", judging) if judging else None
        warnings: list[str] = []
        base: dict[str, Any] | None = None  # the CEL variables but params and variables, made once
        for binding in self.bindings():
            spec = binding.get("spec") or {}
            policy = self._reads.find(policy_rt, "", spec.get("policyName") or "")
            if policy is None:
                continue
            pspec = policy.get("spec") or {}
            constraints = pspec.get("matchConstraints")
            if constraints is None or not matches_resources(constraints, attrs, namespace=namespace, obj=obj, old=old):
                continue
            if (limits := spec.get("matchResources")) is not None and \
                    not matches_resources(limits, attrs, namespace=namespace, obj=obj, old=old):
                continue
            names = (policy["metadata"]["name"], binding["metadata"]["name"])
            fail_closed = pspec.get("failurePolicy") != "Ignore"
            if base is None:
                base = cel_variables(attrs, obj, old, namespace, api_form(user), dry_run, options)
            try:
                params = self._params(pspec, spec, attrs)
            except _Refusal as refusal:
                if fail_closed:
                    message = (f"ValidatingAdmissionPolicy '{names[0]}' denied request: {refusal}" if refusal.of_policy
                               else _message(names, str(refusal)))
                    raise _denied(rt, attrs, obj, old, message, "Invalid") from None
                continue
            for param in params:
                for message, reason in _decisions(pspec, {**base, "params": param}, fail_closed):
                    actions = spec.get("validationActions") or []
                    if "Deny" in actions:
                        raise _denied(rt, attrs, obj, old, _message(names, message), reason)
                    if "Warn" in actions:
                        warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{names[0]}' with "
                                        f"binding '{names[1]}': {message}")
        return warnings

    def _params(self, pspec: Mapping[str, Any], spec: Mapping[str, Any],
                attrs: RequestAttributes) -> list[dict[str, Any] | None]:
        """The parameter objects to evaluate the policy with (``[None]`` without a paramKind or
        paramRef; ``[]`` when none was found and the binding allows that)."""
        kind, ref = pspec.get("paramKind"), spec.get("paramRef")
        if not kind or not ref:
            return [None]
        api_version, kind_name = kind.get("apiVersion") or "", kind.get("kind") or ""
        group, _, version = api_version.rpartition("/")
        param_rt = next((k for k in self._kinds if (k.group, k.version, k.kind) == (group, version, kind_name)), None)
        if param_rt is None:
            gvk = f"{group}/{version}, Kind={kind_name}"
            raise _Refusal(f"failed to configure policy: failed to find resource referenced by paramKind: '{gvk}'",
                           of_policy=True)
        namespace = ""
        if param_rt.namespaced:
            namespace = ref.get("namespace") or attrs.namespace
            if not namespace:
                raise _Refusal("failed to configure binding: cannot use namespaced paramRef in policy binding "
                               "that matches cluster-scoped resources")
        if ref.get("name"):
            found = self._reads.find(param_rt, namespace, ref["name"])
            params: list[dict[str, Any] | None] = [found] if found is not None else []
        else:
            try:
                selector = label_selector_from_dict(ref.get("selector") or {})
            except SelectorError as exc:
                raise _Refusal(f"failed to configure binding: {exc}") from None
            params = [p for p in self._reads.items(param_rt, namespace or None)
                      if selector.matches((p.get("metadata") or {}).get("labels"))]
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise _Refusal("failed to configure binding: no params found for policy binding with `Deny` "
                           "parameterNotFoundAction")
        return params


def _message(names: tuple[str, str], detail: str) -> str:
    policy, binding = names
    return f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {detail}"


def _denied(rt: ResourceType, attrs: RequestAttributes, obj: dict[str, Any] | None, old: dict[str, Any] | None,
            message: str, reason: str) -> StatusError:
    """``admission.NewForbidden`` with the decision's reason and its code (422 for Invalid)."""
    meta = (obj if obj is not None else old or {}).get("metadata") or {}
    name = attrs.name or meta.get("name") or meta.get("generateName") or "Unknown"
    error = _REASONS.get(reason, Invalid)
    return error(f'{qualified_kind(rt.plural, rt.group)} "{name}" is forbidden: {message}',
                 details={**status_details(rt.plural, rt.group, name), "causes": [{"message": message}]})


def _decisions(pspec: Mapping[str, Any], activation: dict[str, Any], fail_closed: bool) -> list[tuple[str, str]]:
    """The failures of one evaluation of a policy: (message, reason) per failed validation, or
    per evaluation error when the policy fails closed; none when a match condition is false."""
    matched, failed = match_conditions(pspec.get("matchConditions") or [], activation)
    if not matched:
        return []
    errors = [f"expression '{condition.get('expression')}' resulted in error: {error}" for condition, error in failed]
    if errors:
        return [(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]", "Invalid")] if fail_closed else []
    variables: dict[str, Any] = {}
    activation["variables"] = variables
    for variable in pspec.get("variables") or []:
        value, error = evaluate(variable.get("expression") or "", activation)
        if error is None:
            variables[variable.get("name") or ""] = value
    out = []
    for validation in pspec.get("validations") or []:
        expression = (validation.get("expression") or "").strip()
        value, error = evaluate(expression, activation)
        if error is not None:
            if fail_closed:
                out.append((f"expression '{expression}' resulted in error: {error}", "Invalid"))
            continue
        if value is not True:
            out.append((_failure_message(validation, activation), validation.get("reason") or "Invalid"))
    return out


def _failure_message(validation: Mapping[str, Any], activation: dict[str, Any]) -> str:
    """messageExpression's result, else message, else the expression (upstream's order)."""
    if validation.get("messageExpression"):
        text, error = evaluate(validation["messageExpression"], activation)
        if error is None and isinstance(text, str) and text.strip() and "\n" not in text \
                and len(text.encode()) <= MAX_MESSAGE_BYTES:
            return text.strip()
    if (validation.get("message") or "").strip():
        return validation["message"].strip()
    return f"failed expression: {(validation.get('expression') or '').strip()}"
