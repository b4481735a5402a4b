"""Which admission requests a rule set matches: upstream's ``webhook/predicates/rules`` and the
namespace and object matchers of ``admission/plugin/policy/matching``, as pure functions.

A request is described by :class:`RequestAttributes`; a match (a ValidatingAdmissionPolicy's
``matchConstraints``, a binding's ``matchResources``) by its JSON dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fakeapi.machinery.selectors import label_selector_from_dict

__all__ = ["RequestAttributes", "matches_resources", "rule_matches"]


@dataclass(frozen=True, slots=True)
class RequestAttributes:
    """One write as admission sees it.  ``namespace`` is "" for cluster-scoped resources (and for
    a Namespace, whose own name stands in for it in upstream's attributes).  ``kind`` is the kind
    of the object admission sees, of the resource's group and version unless ``kind_api_version``
    says otherwise (a subresource's own kind: an Eviction of ``pods/eviction`` is ``policy/v1``)."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    group: str
    version: str
    resource: str
    subresource: str
    name: str
    namespace: str
    kind: str = ""
    kind_api_version: str | None = None

    @classmethod
    def of(cls, operation: str, group: str, version: str, resource: str, kind: str, *, namespaced: bool,
           subresource: str, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None,
           kind_api_version: str | None = None) -> RequestAttributes:
        """The attributes of a write of ``obj`` (or of ``old``, for a delete): its name and, for a
        namespaced resource, its namespace."""
        meta = (obj if obj is not None else old or {}).get("metadata") or {}
        return cls(operation, group, version, resource, subresource, meta.get("name") or "",
                   meta.get("namespace") or "" if namespaced else "", kind, kind_api_version)

    @property
    def kind_group_version(self) -> tuple[str, str]:
        """The group and version of ``kind``."""
        if self.kind_api_version is None:
            return self.group, self.version
        group, _, version = self.kind_api_version.rpartition("/")
        return group, version

    @property
    def about_namespace(self) -> bool:
        """Whether the request is about a Namespace itself."""
        return self.group == "" and self.resource == "namespaces"

    @property
    def judging_namespace(self) -> str:
        """The Namespace whose labels a namespace selector judges: the request's, or the one the
        request is about ("" for another cluster-scoped resource)."""
        return self.name if self.about_namespace else self.namespace


def _split(resource: str) -> tuple[str, str]:
    """``pods/status`` → (pods, status); ``*`` → (*, ""): the main resources only."""
    res, _, sub = resource.partition("/")
    return res, sub


def rule_matches(rule: Mapping[str, Any], attrs: RequestAttributes) -> bool:
    """One ``(Named)RuleWithOperations`` against the request: operation, group, version,
    resource and subresource, scope, and (for a named rule) the object's name."""
    operations = rule.get("operations") or []
    if "*" not in operations and attrs.operation not in operations:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and attrs.version not in versions:
        return False
    if not any((res == "*" or res == attrs.resource) and (sub == "*" or sub == attrs.subresource)
               for res, sub in map(_split, rule.get("resources") or [])):
        return False
    scope = rule.get("scope") or "*"
    cluster_scoped = attrs.about_namespace or not attrs.namespace
    if scope == "Namespaced" and cluster_scoped:
        return False
    if scope == "Cluster" and not cluster_scoped:
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    return None if obj is None else (obj.get("metadata") or {}).get("labels") or {}


def matches_resources(match: Mapping[str, Any], attrs: RequestAttributes, *,
                      namespace: Mapping[str, Any] | None, obj: Mapping[str, Any] | None,
                      old: Mapping[str, Any] | None) -> bool:
    """A ``MatchResources``: a resource rule matches (no rules: any request does; a policy's
    constraints always have some) and no exclusion does, the namespace's
    labels (``namespace``: the object of the request's namespace, or of the Namespace a request
    is about) and the new or the old object's labels meet the selectors.  A cluster-scoped object
    other than a Namespace passes any namespace selector."""
    rules = match.get("resourceRules")
    if rules and not any(rule_matches(rule, attrs) for rule in rules):
        return False
    if any(rule_matches(rule, attrs) for rule in match.get("excludeResourceRules") or []):
        return False
    ns_selector = label_selector_from_dict(match.get("namespaceSelector") or {})
    if not ns_selector.empty and (attrs.namespace or attrs.about_namespace):
        # A Namespace written is judged by its new labels; any other request by its namespace's.
        own = attrs.about_namespace and not attrs.subresource and attrs.operation in ("CREATE", "UPDATE")
        if not ns_selector.matches(_labels(obj if own else namespace)):
            return False
    obj_selector = label_selector_from_dict(match.get("objectSelector") or {})
    return obj_selector.empty or any(o is not None and obj_selector.matches(_labels(o)) for o in (obj, old))
