"""CRD validation (upstream's validation.go messages) and CEL x-kubernetes-validations, as tables."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.machinery import cel_rules
from fakeapi.machinery import structural as st
from fakeapi.validation.apiextensions import CustomResourceDefinitionStrategy, validate_crd
from fakeapi.validation.strategy import AdmissionContext


def crd(schema: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    version = {"name": "v1", "served": True, "storage": True,
               "schema": {"openAPIV3Schema": schema or {"type": "object"}}}
    body = {"metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
                     "versions": [version], **spec}}
    CustomResourceDefinitionStrategy().default(body, AdmissionContext())
    return body


def errors(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_crd(obj)]


def spec_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def test_a_valid_crd_has_no_errors_and_gets_upstream_defaults() -> None:
    obj = crd()
    assert errors(obj) == []
    assert obj["spec"]["names"] == {"plural": "foos", "kind": "Foo", "singular": "foo", "listKind": "FooList"}
    assert obj["spec"]["conversion"] == {"strategy": "None"}
    assert obj["status"]["storedVersions"] == ["v1"]


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda o: o["metadata"].update(name="bars.example.com"),
     'metadata.name: Invalid value: "bars.example.com": must be spec.names.plural+"."+spec.group'),
    (lambda o: o["spec"].update(group="example", metadata=None) or o["metadata"].update(name="foos.example"),
     'spec.group: Invalid value: "example": should be a domain with at least one dot'),
    (lambda o: o["spec"].update(scope="Global"),
     'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'),
    (lambda o: o["spec"]["names"].update(plural="Foos") or o["metadata"].update(name="Foos.example.com"),
     "spec.names.plural: Invalid value: \"Foos\": a DNS-1035 label must consist of lower case alphanumeric "
     "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
     "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
    (lambda o: o["spec"]["names"].update(listKind="Foo"),
     'spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same'),
    (lambda o: o["spec"]["versions"][0].update(storage=False),
     "must have exactly one version marked as storage version"),
    (lambda o: o["spec"].update(conversion={"strategy": "Webhook"}),
     "spec.conversion.strategy: Forbidden: Webhook conversion is not supported by fakeapi"),
    (lambda o: o["spec"].update(group="foo.k8s.io") or o["metadata"].update(name="foos.foo.k8s.io"),
     'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
     'annotation "api-approved.kubernetes.io"'),
    (lambda o: o["spec"]["versions"][0].update(additionalPrinterColumns=[{"name": "A", "type": "int",
                                                                         "jsonPath": ".spec.a"}]),
     'spec.additionalPrinterColumns[0].type: Unsupported value: "int": supported values: "boolean", "date", '
     '"integer", "number", "string"'),
    (lambda o: o["spec"]["versions"][0].update(subresources={"scale": {"specReplicasPath": ".status.r",
                                                                      "statusReplicasPath": ".status.r"}}),
     'spec.subresources.scale.specReplicasPath: Invalid value: ".status.r": should be a json path under .spec'),
    (lambda o: o["spec"]["versions"][0].update(selectableFields=[{"jsonPath": ".spec.nope"}]),
     'spec.selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a '
     'valid field'),
], ids=["name", "group-dot", "scope", "plural-dns1035", "list-kind", "storage", "webhook", "protected-group",
        "column-type", "scale-path", "selectable-field"])
def test_crd_errors(mutate: Any, expected: str) -> None:
    obj = crd()
    mutate(obj)
    assert any(expected in e for e in errors(obj)), errors(obj)


P = "spec.validation.openAPIV3Schema"


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}},
     f"{P}.properties[spec].type: Required value: must not be empty for specified object fields"),
    ({"type": "string"}, f'{P}.type: Invalid value: "string": must be object at the root'),
    ({"type": "object", "properties": {"l": {"type": "array"}}}, f"{P}.properties[l].items: Required value: must be "
                                                                 f"specified"),
    ({"type": "object", "properties": {"s": {"type": "string", "pattern": "(?=a)"}}},
     f'{P}.properties[s].pattern: Invalid value: "(?=a)": must be a valid regular expression, but isn\'t: error '
     f"parsing regexp"),
    ({"type": "object", "properties": {"s": {"type": "string", "uniqueItems": True}}},
     f"{P}.properties[s].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity "
     f"becomes quadratic"),
    ({"type": "object", "properties": {"s": {"$ref": "#/x"}}}, f"{P}.properties[s].$ref: Forbidden: $ref is not "
                                                               f"supported"),
    ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
     f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but "
     f"metadata is implicitly specified"),
    ({"type": "object", "properties": {"o": {"type": "object", "anyOf": [{"type": "string"}]}}},
     f"{P}.properties[o].anyOf[0].type: Forbidden: must be empty to be structural"),
    ({"type": "object", "properties": {"m": {"type": "array", "x-kubernetes-list-type": "map",
                                             "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}},
     f"{P}.properties[m].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type "
     f"is map"),
    ({"type": "object", "properties": {"m": {"type": "array", "x-kubernetes-list-type": "map",
                                             "x-kubernetes-list-map-keys": ["k"],
                                             "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}},
     f"{P}.properties[m].items.properties[k].default: Required value: this property is in "
     f"x-kubernetes-list-map-keys, so it must have a default or be a required property"),
    ({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}},
     f'{P}.properties[n].default: Invalid value: "x"'),
    ({"type": "object", "properties": {"o": {"type": "object", "default": {"x": 1},
                                             "properties": {"y": {"type": "integer"}}}}},
     f'{P}.properties[o].default: Invalid value: {{"x":1}}: must not have unknown fields'),
], ids=["type-required", "root-object", "items-required", "re2-pattern", "unique-items", "ref", "metadata",
        "junctor-type", "map-keys", "map-key-default", "default-type", "default-pruned"])
def test_non_structural_schemas_are_refused(schema: dict[str, Any], expected: str) -> None:
    assert any(e.startswith(expected) for e in errors(crd(schema))), errors(crd(schema))


def test_differing_schemas_report_per_version_paths() -> None:
    obj = crd({"type": "string"})
    second = copy.deepcopy(obj["spec"]["versions"][0])
    second.update(name="v2", storage=False, schema={"openAPIV3Schema": {"type": "object"}})
    obj["spec"]["versions"].append(second)
    assert 'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root' in \
        errors(obj)


def rules(rule: dict[str, Any], at: dict[str, Any] | None = None) -> dict[str, Any]:
    node = {"type": "object", "x-kubernetes-validations": [rule],
            "properties": {"x": {"type": "integer"}, "l": {"type": "array", "items": {"type": "string"}}}}
    return {"type": "object", "properties": {"spec": {**node, **(at or {})}}}


RP = f"{P}.properties[spec].x-kubernetes-validations[0]"


@pytest.mark.parametrize(("rule", "expected"), [
    ({"rule": "self.x > 0"}, None),
    ({"rule": "self.x >"}, f"{RP}.rule: Invalid value: \"self.x >\": compilation failed: ERROR: <input>:1:"),
    ({"rule": "self.nope > 0"}, "compilation failed: ERROR: <input>:1:1: undefined field 'nope'"),
    ({"rule": "self.x"}, None),  # self.x is dyn here: upstream's typed object refuses it at compile time
    ({"rule": "1"}, f"{RP}.rule: Invalid value: \"1\": cel expression must evaluate to a bool"),
    ({"rule": "self.x > 0", "reason": "Bad"}, f'{RP}.reason: Unsupported value: "Bad": supported values: '
                                              f'"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
                                              f'"FieldValueRequired"'),
    ({"rule": "self.x > 0", "message": ""}, f'{RP}.message: Invalid value: "": must be non-empty if specified'),
    ({"rule": "self.x > 0", "optionalOldSelf": True}, f"{RP}.optionalOldSelf: Forbidden: may not be set if "
                                                      f"oldSelf is not used in rule"),
    ({"rule": "self.l.all(a, self.l.all(b, a.matches(b)))"},
     f"{RP}.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the "
     f"rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"),
    ({"rule": "self.l.all(a, a.size() < 5)"}, None),
], ids=["ok", "syntax", "undefined-field", "dyn-result", "non-bool", "reason", "empty-message", "optional-old-self",
        "too-expensive", "cheap-enough"])
def test_rules_at_crd_time(rule: dict[str, Any], expected: str | None) -> None:
    found = errors(crd(rules(rule)))
    if expected is None:
        assert found == []
    else:
        assert any(e.startswith(expected) or expected in e for e in found), found


def test_bounded_lists_make_an_expensive_rule_affordable() -> None:
    bounded = {"properties": {"l": {"type": "array", "maxItems": 10,
                                    "items": {"type": "string", "maxLength": 10}}}}
    assert errors(crd(rules({"rule": "self.l.all(a, self.l.all(b, a.matches(b)))"}, bounded))) == []


def test_transition_rules_are_refused_below_atomic_lists() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"l": {
        "type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}},
                                   "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}}}}
    assert any("oldSelf cannot be used on the uncorrelatable portion of the schema" in e for e in errors(crd(schema)))


SCHEMA = st.parse({"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "x": {"type": "integer"}, "name": {"type": "string"}, "ratio": {"type": "number"},
    "__namespace__": {"type": "string"}}}}})


@pytest.mark.parametrize(("rule", "value", "old", "expected"), [
    ({"rule": "self.x > 0"}, {"x": 1}, None, None),
    ({"rule": "self.x > 0"}, {"x": -1}, None, 'spec: Invalid value: "object": failed rule: self.x > 0'),
    ({"rule": "self.x > 0", "message": "x must be positive"}, {"x": -1}, None,
     'spec: Invalid value: "object": x must be positive'),
    ({"rule": "self.x > 0", "messageExpression": "'x is ' + string(self.x)"}, {"x": -1}, None,
     'spec: Invalid value: "object": x is -1'),
    ({"rule": "self.x > 0", "reason": "FieldValueForbidden", "fieldPath": ".x"}, {"x": -1}, None,
     "spec.x: Forbidden: failed rule: self.x > 0"),
    ({"rule": "self.name == oldSelf.name"}, {"name": "b"}, {"name": "a"},
     'spec: Invalid value: "object": failed rule: self.name == oldSelf.name'),
    ({"rule": "self.ratio > 0.5"}, {"ratio": 1}, None, None),
    ({"rule": "self.x > 0"}, {}, None, 'spec: Invalid value: "object": no such key: x evaluating rule: self.x > 0'),
], ids=["true", "false", "message", "message-expression", "reason-field-path", "transition", "int-as-double",
        "runtime-error"])
def test_rule_evaluation(rule: dict[str, Any], value: dict[str, Any], old: dict[str, Any] | None,
                         expected: str | None) -> None:
    spec = SCHEMA.properties["spec"]
    compiled = cel_rules.compile_rule(rule, spec)
    err = cel_rules.evaluate(compiled, spec, value, old, "spec", has_old=old is not None)
    assert (None if err is None else str(err)) == expected


def test_property_names_are_escaped() -> None:
    assert cel_rules.escape("namespace") == "__namespace__"
    assert cel_rules.escape("a-b.c") == "a__dash__b__dot__c"
    assert cel_rules.escape("9lives") is None


def test_transition_rules_are_allowed_below_map_lists() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"l": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}},
                  "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]}}}}}}
    assert errors(crd(schema)) == []
