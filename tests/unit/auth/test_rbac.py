"""RBAC evaluation over a table of roles and bindings: rule matching, subjects, reasons."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.auth import rbac
from fakeapi.auth.attributes import Attributes
from fakeapi.auth.users import UserInfo

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))
SA = UserInfo("system:serviceaccount:ns:robot", groups=("system:serviceaccounts",))


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None,
         names: list[str] | None = None, urls: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"verbs": verbs}
    for key, value in (("apiGroups", groups), ("resources", resources), ("resourceNames", names),
                       ("nonResourceURLs", urls)):
        if value is not None:
            out[key] = value
    return out


def res(verb: str, resource: str, *, group: str = "", subresource: str = "", name: str = "", namespace: str = "ns",
        user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, verb, namespace=namespace, api_group=group, api_version="v1", resource=resource,
                      subresource=subresource, name=name)


def url(verb: str, path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, verb, resource_request=False, path=path)


RULE_CASES = [
    ("exact", rule(["get"], [""], ["pods"]), res("get", "pods"), True),
    ("other-verb", rule(["get"], [""], ["pods"]), res("list", "pods"), False),
    ("verb-star", rule(["*"], [""], ["pods"]), res("delete", "pods"), True),
    ("other-group", rule(["get"], ["apps"], ["pods"]), res("get", "pods"), False),
    ("group-star", rule(["get"], ["*"], ["deployments"]), res("get", "deployments", group="apps"), True),
    ("resource-star", rule(["get"], [""], ["*"]), res("get", "pods", subresource="log"), True),
    ("subresource-needs-naming", rule(["get"], [""], ["pods"]), res("get", "pods", subresource="status"), False),
    ("subresource-named", rule(["get"], [""], ["pods/status"]), res("get", "pods", subresource="status"), True),
    ("star-slash-subresource", rule(["update"], ["apps"], ["*/scale"]),
     res("update", "deployments", group="apps", subresource="scale"), True),
    ("star-slash-other-subresource", rule(["update"], ["apps"], ["*/scale"]),
     res("update", "deployments", group="apps", subresource="status"), False),
    ("star-slash-no-subresource", rule(["update"], ["apps"], ["*/scale"]), res("update", "deployments", group="apps"),
     False),
    ("resource-name", rule(["get"], [""], ["configmaps"], ["one"]), res("get", "configmaps", name="one"), True),
    ("other-resource-name", rule(["get"], [""], ["configmaps"], ["one"]), res("get", "configmaps", name="two"), False),
    ("resource-names-deny-list", rule(["list"], [""], ["configmaps"], ["one"]), res("list", "configmaps"), False),
    ("url-exact", rule(["get"], urls=["/healthz"]), url("get", "/healthz"), True),
    ("url-prefix", rule(["get"], urls=["/apis/*"]), url("get", "/apis/apps/v1"), True),
    ("url-prefix-is-not-parent", rule(["get"], urls=["/apis/*"]), url("get", "/apis"), False),
    ("url-star", rule(["*"], urls=["*"]), url("post", "/anything"), True),
    ("url-rule-not-for-resources", rule(["get"], urls=["*"]), res("get", "pods"), False),
    ("resource-rule-not-for-urls", rule(["get"], ["*"], ["*"]), url("get", "/healthz"), False),
]


@pytest.mark.parametrize(("policy_rule", "attrs", "allowed"), [c[1:] for c in RULE_CASES],
                         ids=[c[0] for c in RULE_CASES])
def test_rule_allows(policy_rule: dict[str, Any], attrs: Attributes, allowed: bool) -> None:
    assert rbac.rule_allows(policy_rule, attrs) is allowed


SUBJECT_CASES = [
    ("user", {"kind": "User", "name": "alice"}, ALICE, "", True),
    ("other-user", {"kind": "User", "name": "bob"}, ALICE, "", False),
    ("group", {"kind": "Group", "name": "devs"}, ALICE, "", True),
    ("other-group", {"kind": "Group", "name": "ops"}, ALICE, "", False),
    ("sa-explicit-namespace", {"kind": "ServiceAccount", "name": "robot", "namespace": "ns"}, SA, "", True),
    ("sa-binding-namespace", {"kind": "ServiceAccount", "name": "robot"}, SA, "ns", True),
    ("sa-other-namespace", {"kind": "ServiceAccount", "name": "robot", "namespace": "other"}, SA, "ns", False),
    ("sa-without-any-namespace", {"kind": "ServiceAccount", "name": "robot"}, SA, "", False),
    ("sa-name-is-not-a-user-subject", {"kind": "User", "name": "robot"}, SA, "ns", False),
    ("unknown-kind", {"kind": "Robot", "name": "alice"}, ALICE, "", False),
]


@pytest.mark.parametrize(("subject", "user", "namespace", "applies"), [c[1:] for c in SUBJECT_CASES],
                         ids=[c[0] for c in SUBJECT_CASES])
def test_subject_applies(subject: dict[str, Any], user: UserInfo, namespace: str, applies: bool) -> None:
    assert rbac.subject_applies(subject, user, namespace) is applies


class Policy:
    """A static :class:`rbac.PolicySource` for the tables below."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects = objects

    def _of(self, kind: str, namespace: str = "") -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind and o["metadata"].get("namespace", "") == namespace]

    def cluster_role_bindings(self) -> list[dict[str, Any]]:
        return self._of("ClusterRoleBinding")

    def role_bindings(self, namespace: str) -> list[dict[str, Any]]:
        return self._of("RoleBinding", namespace)

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        return next((o for o in self._of("ClusterRole") if o["metadata"]["name"] == name), None)

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self._of("Role", namespace) if o["metadata"]["name"] == name), None)


def role(name: str, *rules: dict[str, Any], namespace: str = "") -> dict[str, Any]:
    return {"kind": "Role" if namespace else "ClusterRole", "metadata": {"name": name, "namespace": namespace},
            "rules": list(rules)}


def binding(name: str, role_kind: str, role_name: str, *subjects: dict[str, Any],
            namespace: str = "") -> dict[str, Any]:
    return {"kind": "RoleBinding" if namespace else "ClusterRoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": rbac.GROUP, "kind": role_kind, "name": role_name}, "subjects": list(subjects)}


READER = role("pod-reader", rule(["get", "list"], [""], ["pods"]))
LOCAL = role("cm-writer", rule(["create"], [""], ["configmaps"]), namespace="ns")
ROBOT = {"kind": "ServiceAccount", "name": "robot"}
POLICY = Policy(
    READER, LOCAL,
    binding("read-pods-in-ns", "ClusterRole", "pod-reader", ROBOT, namespace="ns"),
    binding("write-cms", "Role", "cm-writer", {"kind": "Group", "name": "devs"}, namespace="ns"),
    binding("dangling", "ClusterRole", "gone", {"kind": "Group", "name": "devs"}),
)

DECISIONS = [
    ("sa-in-bound-namespace", res("list", "pods", user=SA), True,
     'RBAC: allowed by RoleBinding "read-pods-in-ns/ns" of ClusterRole "pod-reader" to ServiceAccount "robot/ns"'),
    ("sa-other-namespace", res("list", "pods", namespace="other", user=SA), False, ""),
    ("sa-cluster-wide", res("list", "pods", namespace="", user=SA), False, ""),
    ("sa-verb-not-granted", res("delete", "pods", user=SA), False, ""),
    ("group-role", res("create", "configmaps"), True,
     'RBAC: allowed by RoleBinding "write-cms/ns" of Role "cm-writer" to Group "devs"'),
    ("denied-with-missing-role", res("delete", "configmaps"), False,
     f'RBAC: clusterrole.{rbac.GROUP} "gone" not found'),
]


@pytest.mark.parametrize(("attrs", "allowed", "reason"), [c[1:] for c in DECISIONS], ids=[c[0] for c in DECISIONS])
def test_authorize(attrs: Attributes, allowed: bool, reason: str) -> None:
    assert rbac.authorize(POLICY, attrs) == rbac.Decision(allowed, reason)


def test_missing_roles_are_listed_once_each_in_the_reason() -> None:
    policy = Policy(binding("a", "ClusterRole", "gone", {"kind": "User", "name": "alice"}),
                    binding("b", "ClusterRole", "gone", {"kind": "User", "name": "alice"}),
                    binding("c", "Role", "absent", {"kind": "User", "name": "alice"}, namespace="ns"))
    decision = rbac.authorize(policy, res("get", "pods"))
    assert decision == rbac.Decision(False, f'RBAC: [clusterrole.{rbac.GROUP} "gone" not found, '
                                            f'role.{rbac.GROUP} "absent" not found]')


def test_rules_for_lists_cluster_then_namespace_rules() -> None:
    rules, errors = rbac.rules_for(POLICY, ALICE, "ns")
    assert rules == LOCAL["rules"]
    assert errors == [f'clusterrole.{rbac.GROUP} "gone" not found']
    assert rbac.rules_for(POLICY, SA, "ns") == (READER["rules"], [])
    assert rbac.rules_for(POLICY, SA, "other") == ([], [])


MESSAGES = [
    ("namespaced", res("list", "pods", user=SA),
     'User "system:serviceaccount:ns:robot" cannot list resource "pods" in API group "" in the namespace "ns"'),
    ("cluster-scope", res("get", "nodes", namespace=""),
     'User "alice" cannot get resource "nodes" in API group "" at the cluster scope'),
    ("subresource", res("create", "deployments", group="apps", subresource="scale"),
     'User "alice" cannot create resource "deployments/scale" in API group "apps" in the namespace "ns"'),
    ("non-resource", url("get", "/metrics"), 'User "alice" cannot get path "/metrics"'),
]


@pytest.mark.parametrize(("attrs", "message"), [c[1:] for c in MESSAGES], ids=[c[0] for c in MESSAGES])
def test_forbidden_message(attrs: Attributes, message: str) -> None:
    assert rbac.forbidden_message(attrs) == message
