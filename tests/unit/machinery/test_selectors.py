"""Label and field selectors: syntax, matching, printing and upstream error texts."""

from __future__ import annotations

import dataclasses

import pytest

from fakeapi.machinery.selectors import (
    EQUALS,
    IN,
    FieldSelector,
    LabelSelector,
    SelectorError,
    label_key_errors,
    label_selector_from_dict,
    label_value_errors,
    new_requirement,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "front", "gen": "3", "empty": ""}

# (selector, labels, expected match)
LABEL_MATCHES = [
    ("app=web", LABELS, True),
    ("app==web", LABELS, True),
    ("app=db", LABELS, False),
    ("missing=x", LABELS, False),
    ("app!=db", LABELS, True),
    ("app!=web", LABELS, False),
    ("missing!=x", LABELS, True),
    ("app in (db,web)", LABELS, True),
    ("app in (db)", LABELS, False),
    ("missing in (x)", LABELS, False),
    ("app notin (db)", LABELS, True),
    ("app notin (db,web)", LABELS, False),
    ("missing notin (x)", LABELS, True),
    ("app", LABELS, True),
    ("missing", LABELS, False),
    ("!missing", LABELS, True),
    ("!app", LABELS, False),
    ("gen>2", LABELS, True),
    ("gen>3", LABELS, False),
    ("gen<4", LABELS, True),
    ("gen<3", LABELS, False),
    ("app>1", LABELS, False),
    ("missing<1", LABELS, False),
    ("app=web,tier=front", LABELS, True),
    ("app=web,tier=back", LABELS, False),
    ("empty=", LABELS, True),
    ("empty in ()", LABELS, True),
    ("empty in (a,,b)", LABELS, True),
    ("app=", LABELS, False),
    ("  app = web ,\ttier\n", LABELS, True),
    ("app in (in,notin,web)", LABELS, True),
    ("", LABELS, True),
    ("   ", {}, True),
    ("app", None, False),
    ("!app", None, True),
]


@pytest.mark.parametrize(("text", "labels", "expected"), LABEL_MATCHES,
                         ids=[f"{t!r}-{e}" for t, _, e in LABEL_MATCHES])
def test_label_selector_matches(text, labels, expected):
    assert parse_label_selector(text).matches(labels) is expected


# (input, canonical string): keys sorted, values sorted, upstream spacing.
CANONICAL = [
    ("b=1,a=2", "a=2,b=1"),
    ("a==1", "a==1"),
    ("a != 1", "a!=1"),
    ("x in (c, a,b)", "x in (a,b,c)"),
    ("x notin (b,a,a)", "x notin (a,b)"),
    ("x in (a,,b)", "x in (,a,b)"),
    ("x in ()", "x in ()"),
    ("!a, b", "!a,b"),
    ("a>5,a<9", "a>5,a<9"),
    ("example.com/key=v", "example.com/key=v"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL, ids=[c[0] or "empty" for c in CANONICAL])
def test_label_selector_string_form_round_trips(text, canonical):
    selector = parse_label_selector(text)
    assert str(selector) == canonical
    assert parse_label_selector(str(selector)) == selector


KEY_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
             "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_REGEX = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
               "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
               "'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
BINARY_OPS = "in, notin, =, ==, !=, gt, lt"

# (input, exact upstream message)
LABEL_ERRORS = [
    ("a b", f"unable to parse requirement: found 'b', expected: {BINARY_OPS}"),
    ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("a!=!", "unable to parse requirement: found '!', expected: identifier"),
    ("a,", "found '', expected: identifier after ','"),
    ("a=b,,c", "found ',', expected: identifier after ','"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("(a)", "found '(', expected: !, identifier, or 'end of string'"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("x in (a)(", "found '(', expected: ',' or 'end of string'"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x in", "unable to parse requirement: found '' expected: '('"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
    ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("a$=b", f'unable to parse requirement: <nil>: Invalid value: "a$": name part {KEY_REGEX}'),
    ("a" * 64, f'unable to parse requirement: <nil>: Invalid value: "{"a" * 64}": '
               "name part must be no more than 63 bytes"),
    ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
    ("a/", f'unable to parse requirement: <nil>: Invalid value: "a/": '
           f"name part must be non-empty; name part {KEY_REGEX}"),
    ("Foo.com/a", 'unable to parse requirement: <nil>: Invalid value: "Foo.com/a": prefix part a lowercase '
                  "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ("a/b/c", f'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key {KEY_REGEX} '
              "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ("a=b$", f'unable to parse requirement: values[0][a]: Invalid value: "b$": {VALUE_REGEX}'),
    ("a=" + "b" * 64, f'unable to parse requirement: values[0][a]: Invalid value: "{"b" * 64}": '
                      "must be no more than 63 bytes"),
    ("a>b", 'unable to parse requirement: values[0]: Invalid value: "b": '
            "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("a<99999999999999999999", 'unable to parse requirement: values[0]: Invalid value: '
                               '"99999999999999999999": for \'Gt\', \'Lt\' operators, the value must be an integer'),
    ("a>b$", 'unable to parse requirement: [values[0]: Invalid value: "b$": for \'Gt\', \'Lt\' operators, '
             f'the value must be an integer, values[0][a]: Invalid value: "b$": {VALUE_REGEX}]'),
]


@pytest.mark.parametrize(("text", "message"), LABEL_ERRORS, ids=[e[0][:20] for e in LABEL_ERRORS])
def test_malformed_label_selector_has_upstream_message(text, message):
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    assert str(info.value) == message


def test_parsed_selectors_are_immutable_and_hashable():
    first, second = parse_label_selector("a=1, b in (x)"), parse_label_selector("b in (x),a=1")
    assert first == second and hash(first) == hash(second)
    assert len({first, second, parse_label_selector("a=2")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.requirements = ()  # type: ignore[misc]


@pytest.mark.parametrize(("text", "empty"), [(None, True), ("", True), ("  ", True), ("a", False)],
                         ids=["none", "blank", "spaces", "key"])
def test_label_selector_empty(text, empty):
    assert parse_label_selector(text).empty is empty


def test_gt_lt_ignore_non_integer_label_values():
    selector = parse_label_selector("gen>1")
    assert not selector.matches({"gen": "x"})
    assert not selector.matches({"gen": "1.5"})
    assert selector.matches({"gen": "+2"})


# --- metav1.LabelSelector objects ---------------------------------------------------------------

def expr(key, operator, *values):
    return {"key": key, "operator": operator, "values": list(values)}


# (selector object, labels, expected)
OBJECT_MATCHES = [
    ({}, {}, True),
    ({"matchLabels": {}, "matchExpressions": []}, LABELS, True),
    ({"matchLabels": {"app": "web"}}, LABELS, True),
    ({"matchLabels": {"app": "db"}}, LABELS, False),
    ({"matchExpressions": [expr("app", "In", "web", "db")]}, LABELS, True),
    ({"matchExpressions": [expr("app", "NotIn", "web")]}, LABELS, False),
    ({"matchExpressions": [expr("app", "Exists")]}, LABELS, True),
    ({"matchExpressions": [expr("app", "DoesNotExist")]}, LABELS, False),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "back")]}, LABELS, False),
]


@pytest.mark.parametrize(("selector", "labels", "expected"), OBJECT_MATCHES,
                         ids=[str(s)[:50] for s, _, _ in OBJECT_MATCHES])
def test_label_selector_from_dict_matches(selector, labels, expected):
    assert label_selector_from_dict(selector).matches(labels) is expected


def test_nil_label_selector_selects_nothing_and_empty_selects_everything():
    nothing, everything = label_selector_from_dict(None), label_selector_from_dict({})
    assert not nothing.matches({}) and not nothing.matches(LABELS)
    assert not nothing.empty and str(nothing) == ""
    assert everything.empty and everything.matches(LABELS)


OBJECT_ERRORS = [
    ({"matchExpressions": [expr("a", "Gt", "1")]}, '"Gt" is not a valid label selector operator'),
    ({"matchExpressions": [expr("a", "In")]},
     "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
    ({"matchExpressions": [expr("a", "Exists", "x")]},
     'values: Invalid value: ["x"]: values set must be empty for exists and does not exist'),
    ({"matchLabels": {"a b": "c"}}, f'key: Invalid value: "a b": name part {KEY_REGEX}'),
    ({"matchLabels": {"a": "c d"}}, f'values[0][a]: Invalid value: "c d": {VALUE_REGEX}'),
]


@pytest.mark.parametrize(("selector", "message"), OBJECT_ERRORS, ids=[m[:30] for _, m in OBJECT_ERRORS])
def test_invalid_label_selector_object(selector, message):
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict(selector)
    assert str(info.value) == message


REQUIREMENT_ERRORS = [
    ("a", "bogus", [], 'operator: Unsupported value: "bogus": supported values: "in", "notin", "=", "==", '
                       '"!=", "gt", "lt", "exists", "!"'),
    ("a", EQUALS, ["x", "y"], 'values: Invalid value: ["x","y"]: exact-match compatibility requires one single value'),
    ("a", "gt", [], "values: Invalid value: null: for 'Gt', 'Lt' operators, exactly one value is required"),
]


@pytest.mark.parametrize(("key", "operator", "values", "message"), REQUIREMENT_ERRORS,
                         ids=["operator", "exact-many", "gt-none"])
def test_new_requirement_validation(key, operator, values, message):
    with pytest.raises(SelectorError) as info:
        new_requirement(key, operator, values)
    assert str(info.value) == message


def test_selector_object_and_string_agree():
    from_object = label_selector_from_dict({"matchLabels": {"b": "1"}, "matchExpressions": [expr("a", "In", "y", "x")]})
    assert from_object == LabelSelector((new_requirement("a", IN, ["y", "x"]), new_requirement("b", EQUALS, ["1"])))
    assert str(from_object) == "a in (x,y),b=1"


@pytest.mark.parametrize(("key", "valid"), [("a", True), ("a.b-c_d", True), ("k8s.io/a", True),
                                            ("-a", False), ("a_", False), ("", False), ("a/b/c", False),
                                            ("x" * 253 + "/a", True), ("x" * 254 + "/a", False)],
                         ids=["plain", "punct", "prefixed", "lead-dash", "trail-underscore", "empty",
                              "two-slashes", "prefix-253", "prefix-254"])
def test_label_key_validation(key, valid):
    assert (label_key_errors(key) == []) is valid


@pytest.mark.parametrize(("value", "valid"), [("", True), ("a", True), ("A.b_c-1", True), ("-a", False),
                                              ("a" * 63, True), ("a" * 64, False), ("é", False)],
                         ids=["empty", "plain", "punct", "lead-dash", "63", "64", "non-ascii"])
def test_label_value_validation(value, valid):
    assert (label_value_errors(value) == []) is valid


# --- field selectors ----------------------------------------------------------------------------

POD_FIELDS = {"metadata.name": "p1", "metadata.namespace": "ns", "spec.nodeName": "", "note": "a,b=c\\d"}

FIELD_MATCHES = [
    ("metadata.name=p1", True),
    ("metadata.name==p1", True),
    ("metadata.name=p2", False),
    ("metadata.name!=p2", True),
    ("metadata.name!=p1", False),
    ("spec.nodeName=", True),
    ("spec.nodeName!=", False),
    ("status.phase=", True),
    ("metadata.name=p1,metadata.namespace=ns", True),
    ("metadata.name=p1,metadata.namespace=other", False),
    ("metadata.name=p1,", True),
    (",,", True),
    ("note=a\\,b\\=c\\\\d", True),
    ("metadata.name=!p1", False),
    ("metadata.name= p1", False),
    ("", True),
    (None, True),
]


@pytest.mark.parametrize(("text", "expected"), FIELD_MATCHES, ids=[str(t) for t, _ in FIELD_MATCHES])
def test_field_selector_matches(text, expected):
    assert parse_field_selector(text).matches(POD_FIELDS.get) is expected


def test_field_selector_terms_are_sorted_and_normalised():
    selector = parse_field_selector("spec.nodeName==n1,metadata.name!=p")
    assert selector.requirements == (("metadata.name", "!=", "p"), ("spec.nodeName", "=", "n1"))
    assert selector.fields() == frozenset({"metadata.name", "spec.nodeName"})
    assert not selector.empty and parse_field_selector("").empty
    assert selector.requires_exact_match("spec.nodeName") == "n1"
    assert selector.requires_exact_match("metadata.name") is None


@pytest.mark.parametrize("value", ["plain", "a,b", "a=b", "back\\slash", ""],
                         ids=["plain", "comma", "equals", "backslash", "empty"])
def test_field_selector_string_escapes_round_trip(value):
    selector = FieldSelector((("note", "=", value),))
    assert parse_field_selector(str(selector)) == selector


FIELD_ERRORS = [
    ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
    ("a=b=c", "invalid field selector: unescaped character in value: 61"),
    ("a!==b", "invalid field selector: unescaped character in value: 61"),
    ("a=b\\x", "invalid field selector: invalid escape sequence: \\x"),
    ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
]


@pytest.mark.parametrize(("text", "message"), FIELD_ERRORS, ids=[t for t, _ in FIELD_ERRORS])
def test_malformed_field_selector_has_upstream_message(text, message):
    with pytest.raises(SelectorError) as info:
        parse_field_selector(text)
    assert str(info.value) == message
