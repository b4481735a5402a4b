"""``admissionregistration.k8s.io/v1``: webhook configurations, and ValidatingAdmissionPolicy with
its bindings.

fakeapi stores, defaults and validates webhook configurations: install manifests apply, and
controllers that manage their own configurations (patching ``caBundle``) work.  The webhooks
are called only when the server is told to (``ServerOptions.admission_webhooks``,
:mod:`fakeapi.server.webhooks`).  ValidatingAdmissionPolicies are
enforced: their CEL validations run on every write a binding matches
(:mod:`fakeapi.registry.policies`).
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    SET,
    VALUE_STRUCT,
    Bytes,
    Int32,
    Int64,
    KubeModel,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.meta import Condition, LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.admissionregistration.v1"

# Both webhook lists and each webhook's match conditions are map lists keyed by name.
_BY_NAME = list_map("name") | patch_merge("name")


class ServiceReference(KubeModel):
    """The in-cluster Service a webhook is reached through."""

    namespace: str = req("Namespace of the service.")
    name: str = req("Name of the service.")
    path: str | None = opt("URL path sent in every request to the service.")
    port: Int32 | None = opt("Port of the service (1-65535); defaults to 443.")


class WebhookClientConfig(KubeModel):
    """How the apiserver would reach a webhook over TLS (exactly one of url and service)."""

    url: str | None = opt("https URL of the webhook, without user information, query or fragment.")
    service: ServiceReference | None = opt("The Service of an in-cluster webhook.")
    ca_bundle: Bytes | None = opt("PEM CA bundle (base64) that validates the webhook's serving certificate.")


class RuleWithOperations(KubeModel):
    """Operations on resources a webhook cares about (Go embeds ``Rule``, so its fields sit here)."""

    operations: list[str] | None = opt("CREATE, UPDATE, DELETE, CONNECT, or * alone.", markers=ATOMIC)
    api_groups: list[str] | None = opt("API groups; * alone is every group.", markers=ATOMIC)
    api_versions: list[str] | None = opt("API versions; * alone is every version.", markers=ATOMIC)
    resources: list[str] | None = opt("Resources and subresources ('pods', 'pods/log', '*', '*/scale', '*/*').",
                                      markers=ATOMIC)
    scope: str | None = opt("Cluster, Namespaced or * (default).")


class MatchCondition(KubeModel):
    """A CEL condition a request must meet to be sent to the webhook."""

    name: str = req("Qualified name of the condition, unique within the webhook.")
    expression: str = req("CEL expression over object, oldObject, request and authorizer; must evaluate to bool.")


class ValidatingWebhook(KubeModel):
    """One validating admission webhook and the requests it would see."""

    name: str = req("Fully qualified name of the webhook (at least three DNS segments).")
    client_config: WebhookClientConfig = req("How to reach the webhook.")
    rules: list[RuleWithOperations] | None = opt("Operations and resources the webhook cares about.",
                                                 markers=ATOMIC)
    failure_policy: str | None = opt("Ignore or Fail (default).")
    match_policy: str | None = opt("Exact or Equivalent (default).")
    namespace_selector: LabelSelector | None = opt("Namespaces whose objects are sent; defaults to every one.")
    object_selector: LabelSelector | None = opt("Objects sent, by their labels; defaults to every one.")
    side_effects: str = req("None or NoneOnDryRun.")
    timeout_seconds: Int32 | None = opt("Seconds before the call counts as failed (1-30); defaults to 10.")
    admission_review_versions: list[str] = req("AdmissionReview versions the webhook accepts, preferred first; "
                                               "must include v1 or v1beta1.", markers=ATOMIC)
    match_conditions: list[MatchCondition] | None = opt("CEL conditions (at most 64) a request must meet.",
                                                        markers=_BY_NAME)


class MutatingWebhook(ValidatingWebhook):
    """One mutating admission webhook: a validating one's fields and its reinvocation policy."""

    reinvocation_policy: str | None = opt("Never (default) or IfNeeded.")


class ValidatingWebhookConfiguration(TopLevel):
    """Validating admission webhooks (called when the server's ``admission_webhooks`` option is on)."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("ValidatingWebhookConfiguration")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    webhooks: list[ValidatingWebhook] | None = opt("The webhooks, unique by name.", markers=_BY_NAME)


class MutatingWebhookConfiguration(TopLevel):
    """Mutating admission webhooks (called when the server's ``admission_webhooks`` option is on)."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("MutatingWebhookConfiguration")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    webhooks: list[MutatingWebhook] | None = opt("The webhooks, unique by name.", markers=_BY_NAME)


class NamedRuleWithOperations(RuleWithOperations):
    """A rule of a policy's match: operations on resources, optionally only the named objects."""

    resource_names: list[str] | None = opt("Names of the objects the rule applies to; empty is every one.",
                                           markers=ATOMIC)


class MatchResources(KubeModel):
    """The requests a policy (or a binding, further) applies to."""

    namespace_selector: LabelSelector | None = opt("Namespaces whose objects match (and Namespaces themselves, "
                                                   "by their own labels); defaults to every one.")
    object_selector: LabelSelector | None = opt("Objects that match, by the labels of the new or the old "
                                                "object; defaults to every one.")
    resource_rules: list[NamedRuleWithOperations] | None = opt("Operations and resources that match.",
                                                               markers=ATOMIC)
    exclude_resource_rules: list[NamedRuleWithOperations] | None = opt(
        "Operations and resources that never match (exclusion wins).", markers=ATOMIC)
    match_policy: str | None = opt("Exact or Equivalent (default).")


class ParamKind(KubeModel):
    """The kind of the objects that parameterize a policy."""

    api_version: str | None = opt("group/version of the parameter kind (v1 for the core group).")
    kind: str | None = opt("Kind of the parameter objects, e.g. ConfigMap.")


class Validation(KubeModel):
    """One CEL validation of a policy."""

    expression: str = req("CEL expression over object, oldObject, request, params, namespaceObject and "
                          "variables; the request is admitted when it evaluates to true.")
    message: str | None = opt("Message of a failure; defaults to one naming the expression.")
    reason: str | None = opt("Unauthorized, Forbidden, Invalid (default) or RequestEntityTooLarge: the "
                             "status of a denied request.")
    message_expression: str | None = opt("CEL expression over the same variables giving the failure's message "
                                         "(a string).")


class AuditAnnotation(KubeModel):
    """An audit annotation a policy would add (fakeapi keeps no audit log; compiled only)."""

    key: str = req("Annotation key, unique within the policy.")
    value_expression: str = req("CEL expression giving the annotation's value (a string or null).")


class Variable(KubeModel):
    """A named CEL expression, available to later ones as ``variables.<name>``."""

    name: str = req("A CEL identifier, unique within the policy.")
    expression: str = req("CEL expression over the same variables as the validations.")


class ValidatingAdmissionPolicySpec(KubeModel):
    """What a policy checks, and the requests it applies to."""

    param_kind: ParamKind | None = opt("Kind of the objects a binding names as parameters (params).")
    match_constraints: MatchResources | None = opt("The requests the policy applies to; required.")
    validations: list[Validation] | None = opt("CEL validations, all of which must pass.", markers=ATOMIC)
    failure_policy: str | None = opt("Fail (default) or Ignore: what an evaluation error or a missing parameter "
                                     "kind does.")
    audit_annotations: list[AuditAnnotation] | None = opt("Audit annotations (compiled; fakeapi keeps no audit "
                                                          "log).", markers=ATOMIC)
    match_conditions: list[MatchCondition] | None = opt("CEL conditions (at most 64) a request must meet to be "
                                                        "validated.", markers=_BY_NAME)
    variables: list[Variable] | None = opt("Named expressions for the others, evaluated in order.",
                                           markers=_BY_NAME)


class ExpressionWarning(KubeModel):
    """A type-checking warning on one expression."""

    field_ref: str = req("Path of the expression's field.")
    warning: str = req("What the type check found.")


class TypeChecking(KubeModel):
    """Results of type-checking a policy's expressions."""

    expression_warnings: list[ExpressionWarning] | None = opt("Warnings per expression.", markers=ATOMIC)


class ValidatingAdmissionPolicyStatus(KubeModel):
    """A policy's observed state (no type-checking controller runs in fakeapi)."""

    observed_generation: Int64 | None = opt("The generation this status was written for.")
    type_checking: TypeChecking | None = opt("Results of type-checking the expressions.")
    conditions: list[Condition] | None = opt("Conditions of the policy.", markers=list_map("type"))


class ValidatingAdmissionPolicy(TopLevel):
    """CEL validations admission runs on the requests its bindings match (enforced by fakeapi)."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("ValidatingAdmissionPolicy")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ValidatingAdmissionPolicySpec | None = opt("What the policy checks.", markers=VALUE_STRUCT)
    status: ValidatingAdmissionPolicyStatus | None = opt("The policy's observed state.", markers=VALUE_STRUCT)


class ParamRef(KubeModel):
    """The parameter objects of a binding: one by name, or those a label selector picks."""

    name: str | None = opt("Name of the parameter object (exclusive with selector).")
    namespace: str | None = opt("Namespace of namespaced parameters; defaults to the request's namespace.")
    selector: LabelSelector | None = opt("Parameter objects by label; the policy is evaluated once per object.")
    parameter_not_found_action: str | None = opt("Deny or Allow: what happens when no parameter is found; "
                                                 "required.")


class ValidatingAdmissionPolicyBindingSpec(KubeModel):
    """Which policy applies, with which parameters, where, and what a failure does."""

    policy_name: str | None = opt("The ValidatingAdmissionPolicy bound; required.")
    param_ref: ParamRef | None = opt("The parameters; required when the policy has a paramKind.")
    match_resources: MatchResources | None = opt("Further limits on the requests the policy applies to.")
    validation_actions: list[str] | None = opt("Deny, Warn and/or Audit (not Deny with Warn): what a failed "
                                               "validation does; required.", markers=SET)


class ValidatingAdmissionPolicyBinding(TopLevel):
    """Binds a ValidatingAdmissionPolicy to resources and parameters."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("ValidatingAdmissionPolicyBinding")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ValidatingAdmissionPolicyBindingSpec | None = opt("The binding.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (ValidatingWebhookConfiguration,
                                                            MutatingWebhookConfiguration,
                                                            ValidatingAdmissionPolicy,
                                                            ValidatingAdmissionPolicyBinding)}
