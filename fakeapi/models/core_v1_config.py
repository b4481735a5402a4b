"""Core ``v1`` kinds a controller keeps beside its pods: Secret, ServiceAccount, ResourceQuota,
LimitRange and PodTemplate.

ResourceQuota and LimitRange are stored and validated but not enforced (no quota admission, no
limit defaulting).
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    VALUE_STRUCT,
    Bytes,
    KubeModel,
    Quantity,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import ObjectReference, PodTemplateSpec
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.core.v1"


class LocalObjectReference(KubeModel):
    """A reference to an object in the same namespace, by name."""

    name: str | None = opt("Name of the referent.")


class Secret(TopLevel):
    """Confidential data: values are base64 in ``data``; ``stringData`` is a write-only plain-text
    convenience folded into ``data`` on write."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Secret")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Secret")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    immutable: bool | None = opt("If true, data cannot be changed.")
    data: dict[str, Bytes] | None = opt("Secret data, base64-encoded; keys are config keys.")
    string_data: dict[str, str] | None = opt("Write-only plain-text data, merged into data on write.")
    type: str | None = opt("Opaque (default), kubernetes.io/tls, kubernetes.io/dockerconfigjson, ...")


class ServiceAccount(TopLevel):
    """An identity for processes in pods; its tokens come from the ``token`` subresource."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "ServiceAccount")
    api_version: str | None = opt("v1")
    kind: str | None = opt("ServiceAccount")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    secrets: list[ObjectReference] | None = opt("Secrets pods of this account may use (legacy).",
                                                markers=list_map("name") | patch_merge("name"))
    image_pull_secrets: list[LocalObjectReference] | None = opt("Pull secrets for pods of this account.",
                                                                markers=ATOMIC)
    automount_service_account_token: bool | None = opt("Whether pods mount an API token automatically.")


class ScopedResourceSelectorRequirement(KubeModel):
    """A quota scope, an operator and values."""

    scope_name: str = req("Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, ...")
    operator: str = req("In, NotIn, Exists or DoesNotExist.")
    values: list[str] | None = opt("Values for In/NotIn.", markers=ATOMIC)


class ScopeSelector(KubeModel):
    """Scope requirements ANDed together."""

    match_expressions: list[ScopedResourceSelectorRequirement] | None = opt("Scope requirements.",
                                                                            markers=ATOMIC)


class ResourceQuotaSpec(KubeModel):
    """Hard limits per resource name."""

    hard: dict[str, Quantity] | None = opt("Hard limit per named resource.")
    scopes: list[str] | None = opt("Scopes the quota applies to.", markers=ATOMIC)
    scope_selector: ScopeSelector | None = opt("Scope selector.")


class ResourceQuotaStatus(KubeModel):
    """Enforced limits and current usage (fakeapi never computes usage)."""

    hard: dict[str, Quantity] | None = opt("Enforced hard limits.")
    used: dict[str, Quantity] | None = opt("Observed usage.")


class ResourceQuota(TopLevel):
    """Aggregate limits per namespace.  fakeapi stores quotas without enforcing them."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "ResourceQuota")
    api_version: str | None = opt("v1")
    kind: str | None = opt("ResourceQuota")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ResourceQuotaSpec | None = opt("Desired quota.", markers=VALUE_STRUCT)
    status: ResourceQuotaStatus | None = opt("Enforced quota and usage.", markers=VALUE_STRUCT)


class LimitRangeItem(KubeModel):
    """Limits for one kind of object (Pod, Container, PersistentVolumeClaim)."""

    type: str = req("Pod, Container or PersistentVolumeClaim.")
    max: dict[str, Quantity] | None = opt("Maximum usage per resource.")
    min: dict[str, Quantity] | None = opt("Minimum usage per resource.")
    default: dict[str, Quantity] | None = opt("Default limits.")
    default_request: dict[str, Quantity] | None = opt("Default requests.")
    max_limit_request_ratio: dict[str, Quantity] | None = opt("Maximum limit/request ratio.")


class LimitRangeSpec(KubeModel):
    """The limits."""

    limits: list[LimitRangeItem] = req("Limits to enforce.", markers=ATOMIC)


class LimitRange(TopLevel):
    """Per-object resource limits in a namespace.  fakeapi stores them without applying them."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "LimitRange")
    api_version: str | None = opt("v1")
    kind: str | None = opt("LimitRange")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: LimitRangeSpec | None = opt("The limits.", markers=VALUE_STRUCT)


class PodTemplate(TopLevel):
    """A stored pod template."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "PodTemplate")
    api_version: str | None = opt("v1")
    kind: str | None = opt("PodTemplate")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    template: PodTemplateSpec | None = opt("The pod template.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Secret, ServiceAccount, ResourceQuota, LimitRange,
                                                           PodTemplate)}
