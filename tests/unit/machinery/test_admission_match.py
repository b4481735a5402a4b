"""Admission matching as upstream's rules, namespace and object matchers decide it."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.admission_match import RequestAttributes, matches_resources, rule_matches

POD = RequestAttributes("CREATE", "", "v1", "pods", "", "web", "default", "Pod")
POD_STATUS = RequestAttributes("UPDATE", "", "v1", "pods", "status", "web", "default", "Pod")
NODE = RequestAttributes("CREATE", "", "v1", "nodes", "", "n1", "", "Node")
NAMESPACE = RequestAttributes("CREATE", "", "v1", "namespaces", "", "team-a", "", "Namespace")
DEPLOYMENT = RequestAttributes("DELETE", "apps", "v1", "deployments", "", "api", "default", "Deployment")


def rule(resources: list[str], *, operations: list[str] | None = None, groups: list[str] | None = None,
         versions: list[str] | None = None, scope: str = "*", names: list[str] | None = None) -> dict[str, Any]:
    return {"operations": operations or ["*"], "apiGroups": groups or ["*"], "apiVersions": versions or ["*"],
            "resources": resources, "scope": scope, "resourceNames": names or []}


@pytest.mark.parametrize(("resources", "attrs", "expected"), [
    (["pods"], POD, True),
    (["pods"], POD_STATUS, False),          # a plain resource is never its subresources
    (["*"], POD_STATUS, False),             # "*": every resource, no subresource
    (["*/*"], POD_STATUS, True),
    (["pods/*"], POD_STATUS, True),
    (["*/status"], POD_STATUS, True),
    (["*/scale"], POD_STATUS, False),
    (["pods/status"], POD, False),
    (["deployments"], POD, False),
])
def test_resources_and_subresources(resources: list[str], attrs: RequestAttributes, expected: bool) -> None:
    assert rule_matches(rule(resources), attrs) is expected


@pytest.mark.parametrize(("scope", "attrs", "expected"), [
    ("Namespaced", POD, True), ("Namespaced", NODE, False), ("Namespaced", NAMESPACE, False),
    ("Cluster", POD, False), ("Cluster", NODE, True), ("Cluster", NAMESPACE, True),
    ("*", POD, True), ("*", NODE, True),
])
def test_scope(scope: str, attrs: RequestAttributes, expected: bool) -> None:
    assert rule_matches(rule(["*"], scope=scope), attrs) is expected


def test_operations_groups_versions_and_names() -> None:
    assert rule_matches(rule(["deployments"], operations=["DELETE"], groups=["apps"], versions=["v1"]), DEPLOYMENT)
    assert not rule_matches(rule(["deployments"], operations=["CREATE", "UPDATE"]), DEPLOYMENT)
    assert not rule_matches(rule(["deployments"], groups=[""]), DEPLOYMENT)
    assert not rule_matches(rule(["deployments"], versions=["v1beta1"]), DEPLOYMENT)
    assert rule_matches(rule(["deployments"], names=["api", "web"]), DEPLOYMENT)
    assert not rule_matches(rule(["deployments"], names=["web"]), DEPLOYMENT)


def labelled(**labels: str) -> dict[str, Any]:
    return {"metadata": {"labels": labels}}


def match(**spec: Any) -> dict[str, Any]:
    return {"resourceRules": [rule(["*"])], **spec}


PROD = {"matchLabels": {"env": "prod"}}


def test_namespace_selector() -> None:
    prod, dev = labelled(env="prod"), labelled(env="dev")
    selected = match(namespaceSelector=PROD)
    assert matches_resources(selected, POD, namespace=prod, obj=labelled(), old=None)
    assert not matches_resources(selected, POD, namespace=dev, obj=labelled(), old=None)
    # A cluster-scoped object other than a Namespace passes any namespace selector ...
    assert matches_resources(selected, NODE, namespace=None, obj=labelled(), old=None)
    # ... and a Namespace written is judged by its own new labels.
    assert matches_resources(selected, NAMESPACE, namespace=dev, obj=prod, old=None)
    assert not matches_resources(selected, NAMESPACE, namespace=prod, obj=dev, old=None)


def test_object_selector_takes_the_new_or_the_old_object() -> None:
    selected = match(objectSelector=PROD)
    assert matches_resources(selected, DEPLOYMENT, namespace=None, obj=None, old=labelled(env="prod"))
    assert matches_resources(selected, POD, namespace=None, obj=labelled(env="dev"), old=labelled(env="prod"))
    assert not matches_resources(selected, POD, namespace=None, obj=labelled(env="dev"), old=None)
    assert matches_resources(match(objectSelector={}), POD, namespace=None, obj=None, old=None)


def test_exclusions_win_and_no_rules_match_everything() -> None:
    excluded = match(excludeResourceRules=[rule(["pods"], names=["web"])])
    assert not matches_resources(excluded, POD, namespace=None, obj=None, old=None)
    assert matches_resources(excluded, NODE, namespace=None, obj=None, old=None)
    assert matches_resources({}, POD, namespace=None, obj=None, old=None)  # a binding's matchResources
