"""``apiextensions.k8s.io/v1``: CustomResourceDefinition.

Field names, list markers and required-ness follow upstream
``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go`` and
``types_jsonschema.go``.  ``JSONSchemaProps`` is recursive; the members that are unions in Go
(``items``: schema or array, ``additionalProperties``: schema or bool) and free JSON
(``default``, ``enum``, ``example``) are opaque here and checked by the CRD's validation.
"""

from __future__ import annotations  # JSONSchemaProps names itself (see fakeapi.models)

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    Bytes,
    Int32,
    Int64,
    KubeModel,
    RawExtension,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
GROUP, VERSION = "apiextensions.k8s.io", "v1"
# The finalizer the API server puts on a deleting CRD until its custom objects are gone.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class ExternalDocumentation(KubeModel):
    """A link to documentation outside the schema."""

    description: str | None = opt("Description of the linked documentation.")
    url: str | None = opt("URL of the documentation.")


class ValidationRule(KubeModel):
    """One CEL rule of ``x-kubernetes-validations``."""

    rule: str = req("The CEL expression; ``self`` is the value of the schema node (``oldSelf`` the old one).")
    message: str | None = opt("Message shown when the rule is false.")
    message_expression: str | None = opt("CEL expression that evaluates to the message shown when the rule is "
                                         "false.")
    reason: str | None = opt("Reason of the failure: FieldValueInvalid (default), FieldValueForbidden, "
                             "FieldValueRequired or FieldValueDuplicate.")
    field_path: str | None = opt("Path of the field the failure is reported at, relative to the node.")
    optional_old_self: bool | None = opt("Run a transition rule also on create (oldSelf is then an empty "
                                         "optional).")


class JSONSchemaProps(KubeModel):
    """A JSON-Schema (OpenAPI v3) node of a custom resource's structural schema."""

    id: str | None = opt("Not supported in structural schemas.")
    schema_: str | None = opt("Not supported in structural schemas.", alias="$schema")
    ref: str | None = opt("Not supported in structural schemas.", alias="$ref")
    description: str | None = opt("Description of the field.")
    type: str | None = opt("object, array, string, integer, number or boolean.")
    format: str | None = opt("Format of a string (date-time, int-or-string...) or number.")
    title: str | None = opt("Title of the field.")
    default: RawExtension | None = opt("Value applied when the field is absent.")
    maximum: float | None = opt("Largest allowed number.")
    exclusive_maximum: bool | None = opt("Whether maximum itself is excluded.")
    minimum: float | None = opt("Smallest allowed number.")
    exclusive_minimum: bool | None = opt("Whether minimum itself is excluded.")
    max_length: Int64 | None = opt("Longest allowed string, in characters.")
    min_length: Int64 | None = opt("Shortest allowed string, in characters.")
    pattern: str | None = opt("Regular expression (RE2) a string must match.")
    max_items: Int64 | None = opt("Most items of an array.")
    min_items: Int64 | None = opt("Fewest items of an array.")
    unique_items: bool | None = opt("Not supported when true.")
    multiple_of: float | None = opt("A number must be a multiple of this.")
    enum: list[RawExtension] | None = opt("Allowed values.", markers=ATOMIC)
    max_properties: Int64 | None = opt("Most properties of an object.")
    min_properties: Int64 | None = opt("Fewest properties of an object.")
    required: list[str] | None = opt("Properties that must be present.", markers=ATOMIC)
    items: RawExtension | None = opt("Schema of the items of an array.")
    all_of: list[JSONSchemaProps] | None = opt("Value validation: all must hold.", markers=ATOMIC)
    one_of: list[JSONSchemaProps] | None = opt("Value validation: exactly one must hold.", markers=ATOMIC)
    any_of: list[JSONSchemaProps] | None = opt("Value validation: at least one must hold.", markers=ATOMIC)
    not_: JSONSchemaProps | None = opt("Value validation: must not hold.", alias="not")
    properties: dict[str, JSONSchemaProps] | None = opt("Schemas of the properties of an object.")
    additional_properties: RawExtension | None = opt("Schema of the values of a map (or true).")
    pattern_properties: dict[str, JSONSchemaProps] | None = opt("Not supported in structural schemas.")
    dependencies: RawExtension | None = opt("Not supported in structural schemas.")
    additional_items: RawExtension | None = opt("Not supported in structural schemas.")
    definitions: dict[str, JSONSchemaProps] | None = opt("Not supported in structural schemas.")
    external_docs: ExternalDocumentation | None = opt("Link to documentation.")
    example: RawExtension | None = opt("An example value.")
    nullable: bool | None = opt("Whether null is a valid value (kept, not pruned).")
    x_kubernetes_preserve_unknown_fields: bool | None = opt(
        "Keep fields the schema does not specify.", alias="x-kubernetes-preserve-unknown-fields")
    x_kubernetes_embedded_resource: bool | None = opt(
        "The node is a Kubernetes object with apiVersion, kind and metadata.",
        alias="x-kubernetes-embedded-resource")
    x_kubernetes_int_or_string: bool | None = opt("The value is an integer or a string.",
                                                  alias="x-kubernetes-int-or-string")
    x_kubernetes_list_map_keys: list[str] | None = opt("Keys of a list of type map.",
                                                       alias="x-kubernetes-list-map-keys", markers=ATOMIC)
    x_kubernetes_list_type: str | None = opt("atomic, set or map.", alias="x-kubernetes-list-type")
    x_kubernetes_map_type: str | None = opt("granular or atomic.", alias="x-kubernetes-map-type")
    x_kubernetes_validations: list[ValidationRule] | None = opt(
        "CEL validation rules.", alias="x-kubernetes-validations", markers=list_map("rule") | patch_merge("rule"))


class CustomResourceValidation(KubeModel):
    """The schema of one version."""

    open_apiv3_schema: JSONSchemaProps | None = opt("The structural OpenAPI v3 schema.", alias="openAPIV3Schema")


class CustomResourceSubresourceScale(KubeModel):
    """Where the scale subresource finds replicas and the label selector."""

    spec_replicas_path: str = req("JSON path of the desired replicas, under .spec.")
    status_replicas_path: str = req("JSON path of the observed replicas, under .status.")
    label_selector_path: str | None = opt("JSON path of the label selector string, under .spec or .status.")


class CustomResourceSubresourceStatus(KubeModel):
    """Enables the status subresource (an empty object)."""


class CustomResourceSubresources(KubeModel):
    """Subresources served for the version: ``status`` and ``scale``."""

    status: CustomResourceSubresourceStatus | None = opt("Serve /status (an empty object enables it).")
    scale: CustomResourceSubresourceScale | None = opt("Serve /scale.")


class CustomResourceColumnDefinition(KubeModel):
    """An additional printer column of ``kubectl get``."""

    name: str = req("Column header.")
    type: str = req("integer, number, string, boolean or date.")
    format: str | None = opt("Optional format of the column type.")
    description: str | None = opt("Human-readable description of the column.")
    priority: Int32 | None = opt("0: shown by default; greater: only with -o wide.")
    json_path: str = req("Simple JSON path evaluated against each object.", alias="jsonPath")


class SelectableField(KubeModel):
    """A field usable in field selectors."""

    json_path: str = req("Simple JSON path of a string, integer or boolean field.", alias="jsonPath")


class CustomResourceDefinitionVersion(KubeModel):
    """One served or stored version of a custom resource."""

    name: str = req("Version name, e.g. v1, v1beta1.")
    served: bool = req("Whether the version is served by the REST API.")
    storage: bool = req("Whether objects are stored at this version (exactly one).")
    deprecated: bool | None = opt("Requests to this version get a deprecation warning.")
    deprecation_warning: str | None = opt("Overrides the default deprecation warning.")
    schema_: CustomResourceValidation | None = opt("The schema of this version.", alias="schema")
    subresources: CustomResourceSubresources | None = opt("Subresources of this version.")
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = opt(
        "Columns of kubectl get.", markers=ATOMIC)
    selectable_fields: list[SelectableField] | None = opt("Fields usable in field selectors.", markers=ATOMIC)


class CustomResourceDefinitionNames(KubeModel):
    """Names of the custom resource."""

    plural: str = req("Plural name: the resource in URLs.")
    singular: str | None = opt("Singular name; defaults to the lower-cased kind.")
    short_names: list[str] | None = opt("Short names for kubectl.", markers=ATOMIC)
    kind: str = req("Kind (CamelCase).")
    list_kind: str | None = opt("Kind of lists; defaults to kind + List.")
    categories: list[str] | None = opt("Groups of resources, e.g. all.", markers=ATOMIC)


class ServiceReference(KubeModel):
    """A service of the conversion webhook."""

    namespace: str = req("Namespace of the service.")
    name: str = req("Name of the service.")
    path: str | None = opt("URL path.")
    port: Int32 | None = opt("Port; defaults to 443.")


class WebhookClientConfig(KubeModel):
    """How to reach the conversion webhook."""

    url: str | None = opt("URL of the webhook.")
    service: ServiceReference | None = opt("Service of the webhook.")
    ca_bundle: Bytes | None = opt("PEM CA bundle (base64).")


class WebhookConversion(KubeModel):
    """Webhook conversion settings."""

    client_config: WebhookClientConfig | None = opt("How to call the webhook.")
    conversion_review_versions: list[str] = req("ConversionReview versions the webhook understands.",
                                                markers=ATOMIC)


class CustomResourceConversion(KubeModel):
    """How objects are converted between versions."""

    strategy: str = req("None (only apiVersion changes) or Webhook (not supported by fakeapi).")
    webhook: WebhookConversion | None = opt("Webhook settings when strategy is Webhook.")


class CustomResourceDefinitionSpec(KubeModel):
    """The desired custom resource."""

    group: str = req("API group of the resource.")
    names: CustomResourceDefinitionNames = req("Names of the resource.")
    scope: str = req("Cluster or Namespaced.")
    versions: list[CustomResourceDefinitionVersion] = req("Versions, exactly one of them storage.",
                                                          markers=ATOMIC)
    conversion: CustomResourceConversion | None = opt("Conversion between versions.")
    preserve_unknown_fields: bool | None = opt("Deprecated; must be false.")


class CustomResourceDefinitionCondition(KubeModel):
    """One condition of a CRD (NamesAccepted, Established, Terminating)."""

    type: str = req("Type of the condition.")
    status: str = req("True, False or Unknown.")
    last_transition_time: Time | None = opt("When the status last changed.")
    reason: str | None = opt("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")
    observed_generation: Int64 | None = opt("Generation the condition was set for.")


class CustomResourceDefinitionStatus(KubeModel):
    """The observed state of a CRD."""

    conditions: list[CustomResourceDefinitionCondition] | None = opt("Current conditions.",
                                                                     markers=list_map("type"))
    accepted_names: CustomResourceDefinitionNames | None = opt("Names actually served.")
    stored_versions: list[str] | None = opt("Versions objects were ever stored at.", markers=ATOMIC)
    observed_generation: Int64 | None = opt("Generation the status was computed for.")


class CustomResourceDefinition(TopLevel):
    """A custom resource served by the API server at ``/apis/<group>/<version>/<plural>``."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "CustomResourceDefinition")
    api_version: str | None = opt("apiextensions.k8s.io/v1")
    kind: str | None = opt("CustomResourceDefinition")
    metadata: ObjectMeta | None = opt("Standard object metadata; the name is <plural>.<group>.")
    spec: CustomResourceDefinitionSpec = req("The custom resource to serve.")
    status: CustomResourceDefinitionStatus | None = opt("Conditions, accepted names, stored versions.")


MODELS: dict[str, type[TopLevel]] = {"CustomResourceDefinition": CustomResourceDefinition}
