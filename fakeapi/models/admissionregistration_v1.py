"""``admissionregistration.k8s.io/v1`` ValidatingWebhookConfiguration and MutatingWebhookConfiguration.

fakeapi stores, defaults and validates them, and never calls the webhooks they name: install
manifests apply, and controllers that manage their own configurations (patching ``caBundle``)
work, but no admission request is ever sent.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    Bytes,
    Int32,
    KubeModel,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.meta import LabelSelector, ObjectMeta

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
    """Validating admission webhooks (stored, never called by fakeapi)."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("ValidatingWebhookConfiguration")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    webhooks: list[ValidatingWebhook] | None = opt("The webhooks, unique by name.", markers=_BY_NAME)


class MutatingWebhookConfiguration(TopLevel):
    """Mutating admission webhooks (stored, never called by fakeapi)."""

    gvk: ClassVar[tuple[str, str, str]] = ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration")
    api_version: str | None = opt("admissionregistration.k8s.io/v1")
    kind: str | None = opt("MutatingWebhookConfiguration")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    webhooks: list[MutatingWebhook] | None = opt("The webhooks, unique by name.", markers=_BY_NAME)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (ValidatingWebhookConfiguration,
                                                            MutatingWebhookConfiguration)}
