"""RBAC kinds: upstream's rule, binding and subject validation, binding defaults, immutable roleRef."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.models.rbac_v1 import GROUP
from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext
from tests.unit.validation.builders import causes, validate

ROLE, CLUSTER_ROLE = (GROUP, "v1", "Role"), (GROUP, "v1", "ClusterRole")
BINDING, CLUSTER_BINDING = (GROUP, "v1", "RoleBinding"), (GROUP, "v1", "ClusterRoleBinding")


def role(*rules: dict[str, Any], name: str = "reader") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "rules": list(rules)}


def binding(*subjects: dict[str, Any], kind: str = "ClusterRole", name: str = "view", **ref: Any) -> dict[str, Any]:
    return {"metadata": {"name": "b", "namespace": "default"}, "roleRef": {"kind": kind, "name": name, **ref},
            "subjects": list(subjects)}


PODS = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}

ROLE_CASES = [
    ("valid", ROLE, role(PODS), []),
    ("colon-names-are-fine", CLUSTER_ROLE, role(PODS, name="system:pod-reader"), []),
    ("slash-in-name", CLUSTER_ROLE, role(PODS, name="a/b"), [("FieldValueInvalid", "metadata.name")]),
    ("no-verbs", ROLE, role({**PODS, "verbs": []}), [("FieldValueRequired", "rules[0].verbs")]),
    ("no-groups", ROLE, role({"verbs": ["get"], "resources": ["pods"]}),
     [("FieldValueRequired", "rules[0].apiGroups")]),
    ("no-resources", ROLE, role({"verbs": ["get"], "apiGroups": [""]}), [("FieldValueRequired", "rules[0].resources")]),
    ("names-for-two-resources", ROLE, role({**PODS, "resources": ["pods", "secrets"], "resourceNames": ["x"]}),
     [("FieldValueRequired", "rules[0].resourceNames")]),
    ("urls-in-a-role", ROLE, role({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
     [("FieldValueInvalid", "rules[0].nonResourceURLs")]),
    ("urls-in-a-cluster-role", CLUSTER_ROLE, role({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}), []),
    ("urls-and-resources", CLUSTER_ROLE, role({**PODS, "nonResourceURLs": ["/healthz"]}),
     [("FieldValueInvalid", "rules[0].nonResourceURLs")]),
]
BINDING_CASES = [
    ("valid-defaults-groups", BINDING, binding({"kind": "User", "name": "alice"}), []),
    ("role-ref-role", BINDING, binding(kind="Role"), []),
    ("cluster-binding-to-a-role", CLUSTER_BINDING, binding(kind="Role"), [("FieldValueNotSupported", "roleRef.kind")]),
    ("other-ref-group", BINDING, binding(apiGroup="example.com"), [("FieldValueNotSupported", "roleRef.apiGroup")]),
    ("no-role-name", BINDING, binding(name=""), [("FieldValueRequired", "roleRef.name")]),
    ("sa-namespace-defaults-in-a-rolebinding", BINDING, binding({"kind": "ServiceAccount", "name": "robot"}), []),
    ("sa-needs-namespace-cluster-wide", CLUSTER_BINDING, binding({"kind": "ServiceAccount", "name": "robot"}),
     [("FieldValueRequired", "subjects[0].namespace")]),
    ("sa-bad-name", BINDING, binding({"kind": "ServiceAccount", "name": "Robot_1"}),
     [("FieldValueInvalid", "subjects[0].name")]),
    ("sa-with-api-group", BINDING, binding({"kind": "ServiceAccount", "name": "robot", "apiGroup": GROUP}),
     [("FieldValueNotSupported", "subjects[0].apiGroup")]),
    ("user-other-group", BINDING, binding({"kind": "User", "name": "alice", "apiGroup": "example.com"}),
     [("FieldValueNotSupported", "subjects[0].apiGroup")]),
    ("empty-group-name", BINDING, binding({"kind": "Group", "name": ""}),
     [("FieldValueRequired", "subjects[0].name"), ("FieldValueInvalid", "subjects[0].name")]),
    ("unknown-subject-kind", BINDING, binding({"kind": "Robot", "name": "r"}),
     [("FieldValueNotSupported", "subjects[0].kind")]),
]


@pytest.mark.parametrize(("gvk", "obj", "expected"), [c[1:] for c in ROLE_CASES + BINDING_CASES],
                         ids=[c[0] for c in ROLE_CASES + BINDING_CASES])
def test_validation(gvk: tuple[str, str, str], obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    if gvk in (CLUSTER_ROLE, CLUSTER_BINDING):
        del obj["metadata"]["namespace"]
    assert causes(validate(obj, gvk)) == expected


def test_binding_defaults_fill_api_groups() -> None:
    obj = binding({"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                  {"kind": "ServiceAccount", "name": "robot"})
    STRATEGIES[BINDING].default(obj, AdmissionContext())
    assert obj["roleRef"]["apiGroup"] == GROUP
    assert [s.get("apiGroup") for s in obj["subjects"]] == [GROUP, GROUP, None]


def test_role_ref_is_immutable() -> None:
    old = binding({"kind": "User", "name": "alice"}, apiGroup=GROUP)
    new = binding({"kind": "User", "name": "bob", "apiGroup": GROUP}, name="edit", apiGroup=GROUP)
    errors = STRATEGIES[BINDING].validate_update(new, old, AdmissionContext(operation="UPDATE"))
    assert [(e.type, e.field, e.detail) for e in errors] == [("FieldValueInvalid", "roleRef", "cannot change roleRef")]
