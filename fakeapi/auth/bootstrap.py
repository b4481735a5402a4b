"""The bootstrap RBAC policy a secure server starts with: the upstream ClusterRoles and
ClusterRoleBindings a cluster's users rely on (a subset of ``bootstrappolicy``).

- ``cluster-admin`` (everything), bound to the group ``system:masters``;
- ``admin``, ``edit`` and ``view``, aggregated from ``system:aggregate-to-{admin,edit,view}``,
  for RoleBindings that grant namespace access;
- ``system:discovery`` and ``system:basic-user`` for every authenticated user (discovery,
  OpenAPI, ``auth can-i``, ``auth whoami``), ``system:public-info-viewer`` for everyone
  (health checks, ``/version``), ``system:auth-delegator`` (TokenReview, SubjectAccessReview).

Controller and node roles are not created: fakeapi's control plane runs as ``system:masters``.
"""

from __future__ import annotations

from typing import Any

from fakeapi.auth.rbac import GROUP
from fakeapi.auth.users import AUTHENTICATED, SYSTEM_MASTERS, UNAUTHENTICATED

READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def _rule(verbs: list[str], group: str, *resources: str) -> dict[str, Any]:
    return {"verbs": verbs, "apiGroups": [group], "resources": list(resources)}


def _role(name: str, rules: list[dict[str, Any]] | None = None, *, aggregate_from: str = "",
          aggregate_to: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(_META["labels"]), "annotations": dict(_META["annotations"])}
    if aggregate_to:
        meta["labels"][AGGREGATE_TO + aggregate_to] = "true"
    role: dict[str, Any] = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": meta}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate_from: "true"}}]}
    role["rules"] = rules or []
    return role


def _binding(role: str, *groups: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": role, "labels": dict(_META["labels"]), "annotations": dict(_META["annotations"])},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": group} for group in groups]}


CLUSTER_ROLES: tuple[dict[str, Any], ...] = (
    _role("cluster-admin", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                            {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    _role("admin", aggregate_from="admin"),
    _role("edit", aggregate_from="edit", aggregate_to="admin"),
    _role("view", aggregate_from="view", aggregate_to="edit"),
    _role("system:aggregate-to-admin", [
        _rule(["create"], "authorization.k8s.io", "localsubjectaccessreviews"),
        _rule(READ + WRITE, GROUP, "rolebindings", "roles"),
    ], aggregate_to="admin"),
    _role("system:aggregate-to-edit", [
        _rule(READ, "", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"),
        _rule(["impersonate"], "", "serviceaccounts"),
        _rule(WRITE, "", "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
        _rule(["create"], "", "pods/eviction"),
        _rule(WRITE, "", "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
              "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
        _rule(["create"], "", "serviceaccounts/token"),
        _rule(WRITE, "apps", "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
              "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
        _rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
        _rule(WRITE, "batch", "cronjobs", "jobs"),
        _rule(WRITE, "policy", "poddisruptionbudgets"),
        _rule(WRITE, "networking.k8s.io", "ingresses", "networkpolicies"),
        _rule(READ + WRITE, "coordination.k8s.io", "leases"),
        _rule(WRITE, "resource.k8s.io", "resourceclaims", "resourceclaimtemplates"),
    ], aggregate_to="edit"),
    _role("system:aggregate-to-view", [
        _rule(READ, "", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
              "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
              "services/status"),
        _rule(READ, "", "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
              "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
        _rule(READ, "", "namespaces"),
        _rule(READ, "discovery.k8s.io", "endpointslices"),
        _rule(READ, "apps", "controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
              "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status",
              "statefulsets", "statefulsets/scale", "statefulsets/status"),
        _rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
        _rule(READ, "batch", "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
        _rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
        _rule(READ, "networking.k8s.io", "ingresses", "ingresses/status", "networkpolicies"),
        _rule(READ, "resource.k8s.io", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
    ], aggregate_to="view"),
    _role("system:discovery", [{"verbs": ["get"], "nonResourceURLs": [
        "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
        "/version", "/version/"]}]),
    _role("system:basic-user", [
        _rule(["create"], "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
        _rule(["create"], "authentication.k8s.io", "selfsubjectreviews"),
    ]),
    _role("system:public-info-viewer", [{"verbs": ["get"], "nonResourceURLs": [
        "/healthz", "/livez", "/readyz", "/version", "/version/"]}]),
    _role("system:auth-delegator", [
        _rule(["create"], "authentication.k8s.io", "tokenreviews"),
        _rule(["create"], "authorization.k8s.io", "subjectaccessreviews"),
    ]),
)

CLUSTER_ROLE_BINDINGS: tuple[dict[str, Any], ...] = (
    _binding("cluster-admin", SYSTEM_MASTERS),
    _binding("system:discovery", AUTHENTICATED),
    _binding("system:basic-user", AUTHENTICATED),
    _binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
)
