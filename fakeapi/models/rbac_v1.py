"""``rbac.authorization.k8s.io/v1``: Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, KubeModel, TopLevel, opt, req
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.rbac.v1"
GROUP, VERSION = "rbac.authorization.k8s.io", "v1"


class PolicyRule(KubeModel):
    """Verbs on resources (or on non-resource URLs); who it applies to is the bindings' business."""

    verbs: list[str] = req("Verbs that apply to every resource in the rule; '*' is all.", markers=ATOMIC)
    api_groups: list[str] | None = opt("API groups of the resources; '' is core, '*' all.", markers=ATOMIC)
    resources: list[str] | None = opt("Resources ('pods', 'pods/status', '*', '*/scale').", markers=ATOMIC)
    resource_names: list[str] | None = opt("Names the rule is limited to; empty allows every name.",
                                           markers=ATOMIC)
    non_resource_urls: list[str] | None = opt(
        "Non-resource URL paths ('/healthz', '/apis/*'); only in ClusterRoles bound cluster-wide.",
        alias="nonResourceURLs", markers=ATOMIC)


class AggregationRule(KubeModel):
    """How to find the ClusterRoles whose rules make up an aggregated ClusterRole."""

    cluster_role_selectors: list[LabelSelector] | None = opt(
        "Label selectors; the rules of every ClusterRole matching any of them are aggregated.", markers=ATOMIC)


class Subject(KubeModel):
    """A user, group or ServiceAccount a binding applies to."""

    kind: str = req("User, Group or ServiceAccount.")
    api_group: str | None = opt("'' for ServiceAccount, rbac.authorization.k8s.io for User and Group (defaulted).")
    name: str = req("Name of the user, group or ServiceAccount.")
    namespace: str | None = opt("Namespace of a ServiceAccount subject.")


class RoleRef(KubeModel):
    """The role a binding grants; immutable."""

    api_group: str = req("rbac.authorization.k8s.io.")
    kind: str = req("Role or ClusterRole.")
    name: str = req("Name of the role.")


class Role(TopLevel):
    """Namespaced rules, granted by RoleBindings of the same namespace."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "Role")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("Role")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    rules: list[PolicyRule] | None = opt("The rules of this Role.", markers=ATOMIC)


class ClusterRole(TopLevel):
    """Cluster-wide rules, granted by ClusterRoleBindings (everywhere) or RoleBindings (one namespace)."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "ClusterRole")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("ClusterRole")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    rules: list[PolicyRule] | None = opt("The rules of this ClusterRole; controller-managed when aggregated.",
                                         markers=ATOMIC)
    aggregation_rule: AggregationRule | None = opt("Builds rules from other ClusterRoles, selected by label.")


class RoleBinding(TopLevel):
    """Grants a Role or ClusterRole to subjects within one namespace."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "RoleBinding")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("RoleBinding")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    subjects: list[Subject] | None = opt("Who the role is granted to.", markers=ATOMIC)
    role_ref: RoleRef = req("A Role in this namespace or a ClusterRole; immutable.")


class ClusterRoleBinding(TopLevel):
    """Grants a ClusterRole to subjects cluster-wide."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "ClusterRoleBinding")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("ClusterRoleBinding")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    subjects: list[Subject] | None = opt("Who the role is granted to.", markers=ATOMIC)
    role_ref: RoleRef = req("A ClusterRole; immutable.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Role, ClusterRole, RoleBinding, ClusterRoleBinding)}
