"""``meta.k8s.io/v1`` types embedded in every object: ObjectMeta, OwnerReference, Condition."""

from typing import Any

from fakeapi.models.base import ATOMIC, SET, Int64, KubeModel, Time, list_map, opt, patch_merge, req

OPENAPI_PACKAGE = "io.k8s.apimachinery.pkg.apis.meta.v1"

# The finalizers DeleteOptions.propagationPolicy adds (metav1.FinalizerOrphanDependents,
# metav1.FinalizerDeleteDependents); the garbage collector removes them.
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"


class OwnerReference(KubeModel):
    """Identifies an owning object; dependents are garbage collected once every owner is gone."""

    api_version: str = req("API version of the owner.")
    kind: str = req("Kind of the owner.")
    name: str = req("Name of the owner.")
    uid: str = req("UID of the owner.")
    controller: bool | None = opt("True if this owner is the managing controller (at most one).")
    block_owner_deletion: bool | None = opt(
        "If true, foreground deletion of the owner waits until this dependent is gone.")


class ManagedFieldsEntry(KubeModel):
    """One field manager's claim on a set of fields (server-side apply bookkeeping)."""

    manager: str | None = opt("Name of the workflow managing these fields.")
    operation: str | None = opt("Apply or Update.")
    api_version: str | None = opt("Version of the schema the fields refer to.")
    time: Time | None = opt("When the entry was last changed.")
    fields_type: str | None = opt("Format of fieldsV1; only FieldsV1 exists.")
    fields_v1: dict[str, Any] | None = opt("The set of managed fields, as a trie.", alias="fieldsV1")
    subresource: str | None = opt("Subresource the write went through, if any.")


class ObjectMeta(KubeModel):
    """Metadata every persisted object has."""

    name: str | None = opt("Unique name within the namespace (or cluster); immutable.")
    generate_name: str | None = opt("Prefix from which the server generates a unique name.")
    namespace: str | None = opt("Namespace of a namespaced object; empty for cluster-scoped kinds.")
    self_link: str | None = opt("Deprecated; never set by this server.")
    uid: str | None = opt("Unique identity assigned by the server; immutable.")
    resource_version: str | None = opt("Opaque version for optimistic concurrency and watches.")
    generation: Int64 | None = opt("Sequence number of the desired state, bumped on spec changes.")
    creation_timestamp: Time | None = opt("When the object was created (RFC 3339).")
    deletion_timestamp: Time | None = opt("When graceful deletion was requested (RFC 3339).")
    deletion_grace_period_seconds: Int64 | None = opt("Seconds allowed for graceful termination.")
    labels: dict[str, str] | None = opt("Key/value labels used by selectors.")
    annotations: dict[str, str] | None = opt("Key/value annotations for tools; not queryable.")
    owner_references: list[OwnerReference] | None = opt(
        "Objects this object depends on.", markers=list_map("uid") | patch_merge("uid"))
    finalizers: list[str] | None = opt("Must be empty before the object is removed from storage.",
                                       markers=SET | patch_merge())
    managed_fields: list[ManagedFieldsEntry] | None = opt("Field ownership for server-side apply.",
                                                          markers=ATOMIC)


class Condition(KubeModel):
    """A standard ``metav1.Condition``: one aspect of an object's current state."""

    type: str = req("CamelCase condition type, unique in the list.")
    status: str = req("True, False or Unknown.")
    observed_generation: Int64 | None = opt("metadata.generation the condition was set for.")
    last_transition_time: Time = req("When the status last changed.")
    reason: str = req("CamelCase, machine-readable reason for the last transition.")
    message: str | None = opt("Human-readable details; may be empty.")


class LabelSelectorRequirement(KubeModel):
    """A label key, an operator (In, NotIn, Exists, DoesNotExist) and values."""

    key: str = req("The label key the selector applies to.")
    operator: str = req("In, NotIn, Exists or DoesNotExist.")
    values: list[str] | None = opt("Values for In/NotIn (non-empty); empty for Exists/DoesNotExist.",
                                   markers=ATOMIC)


class LabelSelector(KubeModel):
    """A label query: matchLabels and matchExpressions ANDed; empty selects everything."""

    match_labels: dict[str, str] | None = opt("Label key/value pairs that must all match.")
    match_expressions: list[LabelSelectorRequirement] | None = opt("Requirements that must all hold.",
                                                                   markers=ATOMIC)
