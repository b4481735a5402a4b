"""RBAC evaluation over stored Roles, ClusterRoles and their bindings (upstream's
``RBACAuthorizer`` and ``DefaultRuleResolver``), as pure functions of the objects.

A request is allowed when any rule of any role bound to the user (cluster-wide by a
ClusterRoleBinding, or in the request's namespace by a RoleBinding) matches it.  Rules only
grant; a binding whose role is missing contributes an error to the denial's reason instead.
Objects are the plain JSON dicts of the API.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from fakeapi.auth.attributes import Attributes
from fakeapi.auth.users import UserInfo
from fakeapi.machinery.tokens import service_account_username

GROUP = "rbac.authorization.k8s.io"
ALL = "*"

Rule = dict[str, Any]


class PolicySource(Protocol):
    """Read access to the RBAC objects (the registry's, or a test's table)."""

    def cluster_role_bindings(self) -> Iterable[dict[str, Any]]:
        """Every ClusterRoleBinding."""
        ...

    def role_bindings(self, namespace: str) -> Iterable[dict[str, Any]]:
        """The RoleBindings of one namespace."""
        ...

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        """A ClusterRole by name, or None."""
        ...

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A Role by namespace and name, or None."""
        ...


# -- matching one rule (rbacv1helpers) ----------------------------------------------------------


def _has(values: Any, wanted: str) -> bool:
    values = values or ()
    return ALL in values or wanted in values


def resource_matches(resources: Any, combined: str, subresource: str) -> bool:
    """``pods``, ``pods/status``, ``*`` and ``*/status`` against ``resource[/subresource]``."""
    for resource in resources or ():
        if resource in (ALL, combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def non_resource_url_matches(urls: Any, path: str) -> bool:
    """Exact paths, ``*``, and prefixes ending in ``*``."""
    for url in urls or ():
        if url in (ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(rule: Rule, attrs: Attributes) -> bool:
    """Whether one PolicyRule covers the request."""
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return non_resource_url_matches(rule.get("nonResourceURLs"), attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    names = rule.get("resourceNames") or ()
    return (_has(rule.get("apiGroups"), attrs.api_group)
            and resource_matches(rule.get("resources"), combined, attrs.subresource)
            and (not names or attrs.name in names))


# -- who a binding applies to ---------------------------------------------------------------------


def subject_applies(subject: dict[str, Any], user: UserInfo, binding_namespace: str) -> bool:
    """Whether a binding's subject names ``user`` (a ServiceAccount subject without a namespace
    means one in the binding's namespace)."""
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user.name == service_account_username(namespace, name)
    return False


def _describe_subject(subject: dict[str, Any], binding_namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return f'ServiceAccount "{subject.get("name", "")}/{namespace}"'
    return f'{subject.get("kind", "")} "{subject.get("name", "")}"'


@dataclass(frozen=True)
class Grant:
    """One rule that applies to a user, and the binding that grants it (for reasons)."""

    rule: Rule
    source: str


def _role_rules(source: PolicySource, role_ref: dict[str, Any], namespace: str) -> tuple[list[Rule], str]:
    """The rules a roleRef points at, or an error text when the role is missing."""
    kind, name = role_ref.get("kind"), role_ref.get("name", "")
    if kind == "ClusterRole":
        role = source.cluster_role(name)
        missing = f'clusterrole.{GROUP} "{name}" not found'
    elif kind == "Role":
        role = source.role(namespace, name)
        missing = f'role.{GROUP} "{name}" not found'
    else:
        return [], f'unsupported role reference kind: "{kind}"'
    if role is None:
        return [], missing
    return list(role.get("rules") or ()), ""


def _bindings(source: PolicySource, namespace: str) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(binding, namespace, description prefix): cluster bindings first, then the namespace's."""
    for binding in source.cluster_role_bindings():
        yield binding, "", f'ClusterRoleBinding "{binding["metadata"]["name"]}"'
    if namespace:
        for binding in source.role_bindings(namespace):
            yield binding, namespace, f'RoleBinding "{binding["metadata"]["name"]}/{namespace}"'


def visit_rules(source: PolicySource, user: UserInfo, namespace: str) -> Iterator[Grant | str]:
    """Every rule that applies to ``user`` in ``namespace`` (a :class:`Grant`), and every error
    met resolving them (a string), in upstream's order."""
    for binding, binding_ns, described in _bindings(source, namespace):
        subject = next((s for s in binding.get("subjects") or () if subject_applies(s, user, binding_ns)), None)
        if subject is None:
            continue
        role_ref = binding.get("roleRef") or {}
        rules, error = _role_rules(source, role_ref, binding_ns)
        if error:
            yield error
            continue
        grant = (f'{described} of {role_ref.get("kind")} "{role_ref.get("name")}" to '
                 f"{_describe_subject(subject, binding_ns)}")
        for rule in rules:
            yield Grant(rule, grant)


@dataclass(frozen=True)
class Decision:
    """An authorizer's answer: allowed, with the reason it gives (empty when none)."""

    allowed: bool
    reason: str = ""


def authorize(source: PolicySource, attrs: Attributes) -> Decision:
    """RBAC's decision: allowed by the first matching rule, else no opinion (denied), with the
    resolution errors as the reason."""
    errors = []
    for item in visit_rules(source, attrs.user, attrs.namespace):
        if isinstance(item, str):
            errors.append(item)
        elif rule_allows(item.rule, attrs):
            return Decision(True, f"RBAC: allowed by {item.source}")
    return Decision(False, f"RBAC: {aggregate(errors)}" if errors else "")


def aggregate(errors: list[str]) -> str:
    """Several errors as one text, as upstream's ``utilerrors.Aggregate``: repeats dropped,
    brackets around more than one."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def rules_for(source: PolicySource, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
    """Every rule that applies to ``user`` in ``namespace``, and the resolution errors."""
    rules: list[Rule] = []
    errors: list[str] = []
    for item in visit_rules(source, user, namespace):
        if isinstance(item, str):
            errors.append(item)
        else:
            rules.append(item.rule)
    return rules, errors


def forbidden_message(attrs: Attributes) -> str:
    """The part of a 403's message that names the user and what was refused."""
    user = attrs.user.name
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = (f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope")
    return f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'
