"""Structural schemas: value validation with kube-openapi's messages, pruning, nulls, defaulting,
list-type uniqueness (upstream's apiextensions-apiserver schema packages and validation tests)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery import structural as st

SPEC = st.parse({"type": "object", "properties": {"spec": {"type": "object", "required": ["alpha", "beta"],
                                                           "properties": {
    "alpha": {"type": "string", "pattern": "^[a-zA-Z0-9_]*$"},
    "beta": {"type": "number", "minimum": 10},
    "gamma": {"type": "string", "enum": ["foo", "bar", "baz"]},
    "replicas": {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
    "name": {"type": "string", "maxLength": 5, "minLength": 1},
    "tags": {"type": "array", "maxItems": 2, "minItems": 1, "items": {"type": "string"}},
    "port": {"x-kubernetes-int-or-string": True},
    "when": {"type": "string", "format": "date-time"},
    "opt": {"type": "object", "nullable": True, "properties": {"x": {"type": "string"}}},
    "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
}}}})


def errors_of(spec: dict[str, Any]) -> list[str]:
    return [str(e) for e in st.validate_value({"spec": {"alpha": "a", "beta": 10, **spec}}, SPEC)]


@pytest.mark.parametrize(("spec", "expected"), [
    ({"alpha": "a b"}, ["spec.alpha: Invalid value: \"a b\": spec.alpha in body should match '^[a-zA-Z0-9_]*$'"]),
    ({"beta": 5}, ["spec.beta: Invalid value: 5: spec.beta in body should be greater than or equal to 10"]),
    ({"gamma": "qux"}, ['spec.gamma: Unsupported value: "qux": supported values: "foo", "bar", "baz"']),
    ({"replicas": "3"}, ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
                         '"string"']),
    ({"replicas": 10}, ["spec.replicas: Invalid value: 10: spec.replicas in body should be less than 10"]),
    ({"replicas": 3.0}, []),
    ({"replicas": 3.5}, ['spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: '
                         '"number"']),
    ({"name": "abcdef"}, ["spec.name: Too long: may not be more than 5 bytes"]),
    ({"name": ""}, ['spec.name: Invalid value: "": spec.name in body should be at least 1 chars long']),
    ({"tags": ["a", "b", "c"]}, ["spec.tags: Too many: 3: must have at most 2 items"]),
    ({"tags": []}, ["spec.tags: Invalid value: []: spec.tags in body should have at least 1 items"]),
    ({"tags": [1]}, ['spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: '
                     '"integer"']),
    ({"port": 8080}, []),
    ({"port": "http"}, []),
    ({"port": True}, ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: '
                      '"boolean"']),
    ({"when": "yesterday"}, ['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: '
                             '"yesterday"']),
    ({"when": "2026-01-01T00:00:00Z"}, []),
    ({"opt": None}, []),
    ({"labels": {"a": "1", "b": "2"}}, ["spec.labels: Too many: 2: must have at most 1 items"]),
    ({"labels": {"a": 1}}, ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: '
                            '"integer"']),
], ids=["pattern", "minimum", "enum", "type", "exclusive-maximum", "integral-float", "float-not-integer",
        "max-length", "min-length", "max-items", "min-items", "item-type", "int-or-string-int",
        "int-or-string-string", "int-or-string-bool", "format", "format-ok", "nullable", "max-properties",
        "map-value-type"])
def test_value_validation_messages(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(spec) == expected


def test_required_properties() -> None:
    errs = [str(e) for e in st.validate_value({"spec": {}}, SPEC)]
    assert errs == ["spec.alpha: Required value", "spec.beta: Required value"]


def test_null_on_a_non_nullable_object_is_a_type_error() -> None:
    schema = st.parse({"type": "object", "properties": {"spec": {"type": "object"}}})
    assert [str(e) for e in st.validate_value({"spec": None}, schema)] == [
        'spec: Invalid value: "null": spec in body must be of type object: "null"']


PRUNING = st.parse({"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "keep": {"type": "string"},
        "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                       "properties": {"pruning": {"type": "object", "properties": {"x": {"type": "string"}}}}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "nullable": {"type": "string", "nullable": True},
        "notNullable": {"type": "string"},
    }}}})


def test_pruning_removes_unknown_fields_and_reports_their_paths() -> None:
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "unknown": 1,
           "spec": {"keep": "k", "drop": 1,
                    "preserving": {"unspecified": 1, "pruning": {"x": "1", "unspecified": 2}},
                    "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "other": 1,
                                 "spec": {"a": "1", "b": 2}},
                    "items": [{"n": 1.0, "m": 2}],
                    "nullable": None, "notNullable": None}}
    obj["spec"]["embedded"]["metadata"]["unknownMeta"] = 1
    pruned = st.prune(obj, PRUNING, frozenset({"name", "labels"}))
    assert sorted(pruned) == ["spec.drop", "spec.embedded.metadata.unknownMeta", "spec.embedded.other",
                              "spec.embedded.spec.b", "spec.items[0].m", "spec.preserving.pruning.unspecified",
                              "unknown"]
    assert obj == {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"},
                   "spec": {"keep": "k", "preserving": {"unspecified": 1, "pruning": {"x": "1"}},
                            "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                         "spec": {"a": "1"}},
                            "items": [{"n": 1}], "nullable": None}}
    assert isinstance(obj["spec"]["items"][0]["n"], int)  # Go decodes integral numbers as int64


DEFAULTS = st.parse({"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "image": {"type": "string", "default": "busybox"},
        "replicas": {"type": "integer", "default": 1},
        "zero": {"type": "number", "default": 0.0},
        "nested": {"type": "object", "default": {}, "properties": {"a": {"type": "string", "default": "A"}}},
        "nullableDefault": {"type": "string", "nullable": True, "default": "d"},
        "ports": {"type": "array", "items": {"type": "object", "properties": {
            "protocol": {"type": "string", "default": "TCP"}}}},
    }},
    "status": {"type": "object", "properties": {"phase": {"type": "string", "default": "Pending"}}}}})


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, {"image": "busybox", "replicas": 1, "zero": 0.0, "nested": {"a": "A"}, "nullableDefault": "d"}),
    ({"image": "nginx", "replicas": None, "nullableDefault": None, "ports": [{}, {"protocol": "UDP"}]},
     {"image": "nginx", "replicas": 1, "zero": 0.0, "nested": {"a": "A"}, "nullableDefault": None,
      "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}]}),
], ids=["absent", "null-and-items"])
def test_defaulting(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = {"spec": spec}
    out = st.defaulted(obj, DEFAULTS)
    assert out == {"spec": expected}  # status is absent: its defaults need a parent
    assert obj == {"spec": spec}  # copy-on-write: the input is untouched


def test_defaulting_returns_the_same_object_when_nothing_changes() -> None:
    obj = {"spec": {"image": "x", "replicas": 2, "zero": 1.5, "nested": {"a": "b"}, "nullableDefault": "y"}}
    assert st.defaulted(obj, DEFAULTS) is obj


LISTS = st.parse({"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
}}}})


def test_list_type_uniqueness() -> None:
    obj = {"spec": {"tags": ["a", "b", "a", "a"], "ports": [{"name": "x"}, {"name": "y"}, {"name": "x"}]}}
    assert [str(e) for e in st.validate_list_types(obj, LISTS)] == [
        'spec.tags[2]: Duplicate value: "a"', 'spec.ports[2]: Duplicate value: {"name":"x"}']


def test_patterns_are_re2() -> None:
    with pytest.raises(st.PatternError, match="error parsing regexp"):
        st.compile_pattern("(?=lookahead)")
