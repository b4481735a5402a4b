"""``authorization.k8s.io/v1``: the access reviews — create-only questions "may this user do
that?", answered in ``status`` by the server's authorizer and never stored."""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, KubeModel, TopLevel, opt, req
from fakeapi.models.meta import LabelSelectorRequirement, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.authorization.v1"
GROUP, VERSION = "authorization.k8s.io", "v1"


class FieldSelectorRequirement(KubeModel):
    """A field, an operator (In, NotIn, Exists, DoesNotExist) and values (``metav1``)."""

    key: str = req("The field the requirement applies to.")
    operator: str = req("In, NotIn, Exists or DoesNotExist.")
    values: list[str] | None = opt("Values for In/NotIn.", markers=ATOMIC)


class FieldSelectorAttributes(KubeModel):
    """A field selector the request is limited to (recorded; RBAC does not use it)."""

    raw_selector: str | None = opt("The selector as in a query parameter.")
    requirements: list[FieldSelectorRequirement] | None = opt("The parsed requirements.", markers=ATOMIC)


class LabelSelectorAttributes(KubeModel):
    """A label selector the request is limited to (recorded; RBAC does not use it)."""

    raw_selector: str | None = opt("The selector as in a query parameter.")
    requirements: list[LabelSelectorRequirement] | None = opt("The parsed requirements.", markers=ATOMIC)


class ResourceAttributes(KubeModel):
    """A resource request: verb, group, resource, subresource, namespace and name."""

    namespace: str | None = opt("Namespace of the request; empty for cluster-scoped or all namespaces.")
    verb: str | None = opt("get, list, watch, create, update, patch, delete, deletecollection or '*'.")
    group: str | None = opt("API group; '*' is all.")
    version: str | None = opt("API version; '*' is all.")
    resource: str | None = opt("Resource (plural); '*' is all.")
    subresource: str | None = opt("Subresource; '' is none.")
    name: str | None = opt("Name of the object; '' is all.")
    field_selector: FieldSelectorAttributes | None = opt("Field selector of a list or watch.")
    label_selector: LabelSelectorAttributes | None = opt("Label selector of a list or watch.")


class NonResourceAttributes(KubeModel):
    """A non-resource request: a path and a lowercase HTTP verb."""

    path: str | None = opt("The URL path.")
    verb: str | None = opt("The lowercase HTTP verb.")


class SubjectAccessReviewSpec(KubeModel):
    """The request and the user it is asked for; exactly one of the attribute sets."""

    resource_attributes: ResourceAttributes | None = opt("A resource request.")
    non_resource_attributes: NonResourceAttributes | None = opt("A non-resource request.")
    user: str | None = opt("The user; at least one of user or groups.")
    groups: list[str] | None = opt("The user's groups.", markers=ATOMIC)
    extra: dict[str, list[str]] | None = opt("The user's extra attributes.")
    uid: str | None = opt("The user's UID.")


class SelfSubjectAccessReviewSpec(KubeModel):
    """The request, asked for the requesting user; exactly one of the attribute sets."""

    resource_attributes: ResourceAttributes | None = opt("A resource request.")
    non_resource_attributes: NonResourceAttributes | None = opt("A non-resource request.")


class SubjectAccessReviewStatus(KubeModel):
    """The answer."""

    allowed: bool = req("Whether the request is allowed.")
    denied: bool | None = opt("Whether the request is explicitly denied (RBAC never denies).")
    reason: str | None = opt("Why it is allowed or denied, when the authorizer says.")
    evaluation_error: str | None = opt("An error met while deciding; the answer may still hold.")


class SubjectAccessReview(TopLevel):
    """May a given user perform an action?"""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "SubjectAccessReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("SubjectAccessReview")
    metadata: ObjectMeta | None = opt("Must be empty.")
    spec: SubjectAccessReviewSpec = req("The question.")
    status: SubjectAccessReviewStatus | None = opt("The answer, filled in by the server.")


class LocalSubjectAccessReview(TopLevel):
    """May a given user perform an action in this namespace?"""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "LocalSubjectAccessReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("LocalSubjectAccessReview")
    metadata: ObjectMeta | None = opt("Empty except for the namespace.")
    spec: SubjectAccessReviewSpec = req("The question; resourceAttributes.namespace must be this namespace.")
    status: SubjectAccessReviewStatus | None = opt("The answer, filled in by the server.")


class SelfSubjectAccessReview(TopLevel):
    """May I perform an action?"""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "SelfSubjectAccessReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("SelfSubjectAccessReview")
    metadata: ObjectMeta | None = opt("Must be empty.")
    spec: SelfSubjectAccessReviewSpec = req("The question.")
    status: SubjectAccessReviewStatus | None = opt("The answer, filled in by the server.")


class SelfSubjectRulesReviewSpec(KubeModel):
    """The namespace to list my rules in."""

    namespace: str | None = opt("The namespace; required.")


class ResourceRule(KubeModel):
    """Verbs allowed on resources."""

    verbs: list[str] = req("Allowed verbs; '*' is all.", markers=ATOMIC)
    api_groups: list[str] | None = opt("API groups; '*' is all.", markers=ATOMIC)
    resources: list[str] | None = opt("Resources; '*' is all.", markers=ATOMIC)
    resource_names: list[str] | None = opt("Names the rule is limited to.", markers=ATOMIC)


class NonResourceRule(KubeModel):
    """Verbs allowed on non-resource URLs."""

    verbs: list[str] = req("Allowed verbs; '*' is all.", markers=ATOMIC)
    non_resource_urls: list[str] | None = opt("URL paths, '*' suffixes allowed.", alias="nonResourceURLs",
                                              markers=ATOMIC)


class SubjectRulesReviewStatus(KubeModel):
    """My rules in the namespace."""

    resource_rules: list[ResourceRule] = req("Rules on resources.", markers=ATOMIC)
    non_resource_rules: list[NonResourceRule] = req("Rules on non-resource URLs.", markers=ATOMIC)
    incomplete: bool = req("True when an authorizer cannot list its rules.")
    evaluation_error: str | None = opt("Errors met while listing rules.")


class SelfSubjectRulesReview(TopLevel):
    """What may I do in a namespace?"""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "SelfSubjectRulesReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("SelfSubjectRulesReview")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: SelfSubjectRulesReviewSpec = req("The question.")
    status: SubjectRulesReviewStatus | None = opt("The answer, filled in by the server.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (
    SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview)}
