"""CRD-time checks of a version's ``openAPIV3Schema``: structural, extensions in their places,
defaults that survive pruning and validate, CEL rules that compile within their cost.

Upstream: ``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``
(``ValidateCustomResourceDefinitionOpenAPISchema``) and ``pkg/apiserver/schema/validation.go``
(``ValidateStructural``), with their messages.  Structural errors come first; when there are
any, defaults and CEL rules are not checked (as upstream).
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required
from fakeapi.machinery import cel_rules
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.structural import (
    TYPES,
    PatternError,
    Schema,
    compile_pattern,
    parse,
    prune,
    validate_value,
)

UNSUPPORTED = ("id", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions")
JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_ROOT_STATUS_ALLOWED = frozenset({
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required", "items",
    "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations"})
_JUNCTOR_EMPTY = ("type", "title", "description", "x-kubernetes-list-map-keys")
_JUNCTOR_UNDEFINED = ("additionalProperties", "default", "x-kubernetes-list-type", "x-kubernetes-map-type")
_JUNCTOR_FALSE = ("nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                  "x-kubernetes-int-or-string")
RULE_MAX_LENGTH = 5 * 1024  # message line length is not limited; rules are


def _items(raw: dict[str, Any]) -> dict[str, Any] | None:
    items = raw.get("items")
    return items if isinstance(items, dict) else None


def _additional(raw: dict[str, Any]) -> dict[str, Any] | None:
    extra = raw.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


class _Checker:
    def __init__(self, status_enabled: bool) -> None:
        self.errors: list[FieldError] = []
        self.status_enabled = status_enabled

    def node(self, raw: Any, path: str, *, root: bool = False, item: bool = False, in_meta: bool = False) -> None:
        errs = self.errors
        if not isinstance(raw, dict):
            errs.append(invalid(path, raw, "must be a schema object"))
            return
        for key in UNSUPPORTED:
            if key in raw:
                errs.append(forbidden(f"{path}.{key}", f"{key} is not supported"))
        if raw.get("uniqueItems") is True:
            errs.append(forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime "
                                                         "complexity becomes quadratic"))
        if isinstance(raw.get("items"), list):
            errs.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
        type_ = raw.get("type") or ""
        int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
        preserve = raw.get("x-kubernetes-preserve-unknown-fields")
        embedded = bool(raw.get("x-kubernetes-embedded-resource"))
        if type_ == "null":
            errs.append(invalid(f"{path}.type", type_, "type cannot be set to null, use nullable as an alternative"))
        elif type_ and type_ not in TYPES:
            errs.append(not_supported(f"{path}.type", type_, list(TYPES)))
        if not type_ and not int_or_string and not preserve:
            where = ("must not be empty at the root" if root else
                     "must not be empty for specified array items" if item else
                     "must not be empty for specified object fields")
            errs.append(required(f"{path}.type", where))
        if root and type_ and type_ != "object":
            errs.append(invalid(f"{path}.type", type_, "must be object at the root"))
        if root and raw.get("nullable"):
            errs.append(forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
        if preserve is False:
            errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
        if preserve and int_or_string:
            errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True,
                                "must be false if x-kubernetes-int-or-string is true"))
        if int_or_string and type_:
            errs.append(invalid(f"{path}.type", type_, "must be empty if x-kubernetes-int-or-string is true"))
        if embedded:
            if in_meta:
                errs.append(forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of "
                                                                                "resource meta"))
            if type_ != "object":
                errs.append(invalid(f"{path}.type", type_, "must be object if x-kubernetes-embedded-resource is true"))
            if not raw.get("properties") and not preserve:
                errs.append(required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is "
                                                           "true without x-kubernetes-preserve-unknown-fields"))
        additional = raw.get("additionalProperties")
        if additional is not None and additional is not True:
            if root or embedded:
                errs.append(forbidden(f"{path}.additionalProperties",
                                      "must not be used at the root" if root else
                                      "must not be used if x-kubernetes-embedded-resource is set"))
            elif raw.get("properties"):
                errs.append(forbidden(f"{path}.additionalProperties",
                                      "additionalProperties and properties are mutual exclusive"))
        if type_ == "array" and "items" not in raw:
            errs.append(required(f"{path}.items", "must be specified"))
        if isinstance(raw.get("pattern"), str):
            try:
                compile_pattern(raw["pattern"])
            except PatternError as err:
                errs.append(invalid(f"{path}.pattern", raw["pattern"],
                                    f"must be a valid regular expression, but isn't: {err}"))
        self.list_extensions(raw, path, type_)
        map_type = raw.get("x-kubernetes-map-type")
        if map_type is not None:
            if type_ != "object":
                errs.append(invalid(f"{path}.type", type_, "must be object if x-kubernetes-map-type is specified"))
            if map_type not in ("atomic", "granular"):
                errs.append(not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
        for junctor in JUNCTORS:
            if junctor in raw:
                parts = raw[junctor] if junctor != "not" else [raw[junctor]]
                for i, part in enumerate(parts if isinstance(parts, list) else []):
                    sub = f"{path}.{junctor}" if junctor == "not" else f"{path}.{junctor}[{i}]"
                    self.junctor(part, sub)
        if root:
            self.root_meta(raw, path)
            if self.status_enabled:
                for key in sorted(set(raw) - _ROOT_STATUS_ALLOWED):
                    errs.append(forbidden(f"{path}.{key}", "must not be used at the root of the schema if the "
                                                           "status subresource is enabled"))
        for key in ("apiVersion", "kind"):
            if root or embedded:
                prop = (raw.get("properties") or {}).get(key)
                if isinstance(prop, dict) and prop.get("type") != "string":
                    errs.append(invalid(f"{path}.properties[{key}].type", prop.get("type"), "must be string"))
        for name, sub in (raw.get("properties") or {}).items():
            if root and name == "metadata":
                continue
            self.node(sub, f"{path}.properties[{name}]",
                      in_meta=in_meta or ((root or embedded) and name in ("metadata", "apiVersion", "kind")))
        if _items(raw) is not None:
            self.node(raw["items"], f"{path}.items", item=True, in_meta=in_meta)
        if _additional(raw) is not None:
            self.node(raw["additionalProperties"], f"{path}.additionalProperties", in_meta=in_meta)

    def list_extensions(self, raw: dict[str, Any], path: str, type_: str) -> None:
        errs = self.errors
        list_type = raw.get("x-kubernetes-list-type")
        keys = raw.get("x-kubernetes-list-map-keys")
        if list_type is not None:
            if type_ != "array":
                errs.append(invalid(f"{path}.type", type_, "must be array if x-kubernetes-list-type is specified"))
            elif list_type not in ("atomic", "set", "map"):
                errs.append(not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
        items = _items(raw) or {}
        if list_type == "set":
            item_type = items.get("type")
            if item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
                errs.append(invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-map-type"),
                                    "must be atomic as item of a list with x-kubernetes-list-type=set"))
            if item_type == "array" and items.get("x-kubernetes-list-type", "atomic") != "atomic":
                errs.append(invalid(f"{path}.items.x-kubernetes-list-type", items.get("x-kubernetes-list-type"),
                                    "must be atomic as item of a list with x-kubernetes-list-type=set"))
        if list_type in ("set", "map") and items.get("nullable"):
            errs.append(forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is "
                                                           f"{list_type}"))
        if keys and list_type != "map":
            errs.append(required(f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is "
                                                                   "non-empty"))
        if list_type == "map":
            if not keys:
                errs.append(required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if "
                                                                           "x-kubernetes-list-type is map"))
            if items.get("type") != "object":
                errs.append(invalid(f"{path}.items.type", items.get("type"),
                                    "must be object if parent array's x-kubernetes-list-type is map"))
            props = items.get("properties") or {}
            for key in keys or []:
                prop = props.get(key)
                if not isinstance(prop, dict) or prop.get("type") not in ("string", "integer", "number", "boolean"):
                    errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys,
                                        "entries must all be names of item properties"))
                    break
                if key not in (items.get("required") or []) and "default" not in prop:
                    errs.append(required(f"{path}.items.properties[{key}].default",
                                         "this property is in x-kubernetes-list-map-keys, so it must have a default "
                                         "or be a required property"))
            if keys and len(set(keys)) != len(keys):
                errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"))

    def junctor(self, raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            return
        errs = self.errors
        for key in _JUNCTOR_EMPTY:
            if raw.get(key):
                errs.append(forbidden(f"{path}.{key}", "must be empty to be structural"))
        for key in _JUNCTOR_UNDEFINED:
            if key in raw:
                errs.append(forbidden(f"{path}.{key}", "must be undefined to be structural"))
        for key in _JUNCTOR_FALSE:
            if raw.get(key):
                errs.append(forbidden(f"{path}.{key}", "must be false to be structural"))
        if raw.get("x-kubernetes-validations"):
            errs.append(forbidden(f"{path}.x-kubernetes-validations", "must be empty to be structural"))
        for name, sub in (raw.get("properties") or {}).items():
            self.junctor(sub, f"{path}.properties[{name}]")
        if _items(raw) is not None:
            self.junctor(raw["items"], f"{path}.items")

    def root_meta(self, raw: dict[str, Any], path: str) -> None:
        meta = (raw.get("properties") or {}).get("metadata")
        if meta is None:
            return
        allowed = isinstance(meta, dict) and set(meta) <= {"type", "properties"} and meta.get("type") in (
            None, "object") and set(meta.get("properties") or {}) <= {"name", "generateName"}
        if not allowed:
            self.errors.append(forbidden(f"{path}.properties[metadata]", "must not specify anything other than name "
                                                                         "and generateName, but metadata is "
                                                                         "implicitly specified"))


def check_schema(raw: Any, path: str, *, status_enabled: bool) -> list[FieldError]:
    """Structural checks, then (if structural) defaults and CEL rules of one version's schema."""
    checker = _Checker(status_enabled)
    checker.node(raw, path, root=True)
    errors = sorted(checker.errors, key=lambda e: str(e))
    if errors:
        return errors
    schema = parse(raw)
    return _check_defaults(raw, schema, path) + _check_rules(raw, schema, path)


def _walk(raw: dict[str, Any], schema: Schema, path: str, correlatable: bool = True
          ) -> list[tuple[dict[str, Any], Schema, str, bool]]:
    """Every schema node with its path and whether old values correlate there (not below the
    items of an atomic or set list; map lists correlate by key)."""
    out = [(raw, schema, path, correlatable)]
    for name, sub in (raw.get("properties") or {}).items():
        if isinstance(sub, dict) and name in schema.properties:
            out += _walk(sub, schema.properties[name], f"{path}.properties[{name}]", correlatable)
    if _items(raw) is not None and schema.items is not None:
        out += _walk(raw["items"], schema.items, f"{path}.items", correlatable and schema.list_type == "map")
    if _additional(raw) is not None and schema.additional is not None:
        out += _walk(raw["additionalProperties"], schema.additional, f"{path}.additionalProperties", correlatable)
    return out


def _check_defaults(raw: dict[str, Any], root: Schema, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for _, schema, node_path, _ in _walk(raw, root, path):
        if node_path == path or not schema.has_default:
            continue
        default = schema.default
        if node_path in (f"{path}.properties[{k}]" for k in ("metadata", "apiVersion", "kind")):
            key = node_path.rsplit("[", 1)[1].rstrip("]")
            errors.append(forbidden(f"{node_path}.default", f"must not be set in top-level {key}"))
            continue
        if isinstance(default, dict) and (schema.properties or schema.additional is not None):
            probe = deep_copy(default)
            if prune(probe, schema) and not schema.preserve_unknown:
                errors.append(invalid(f"{node_path}.default", default, "must not have unknown fields"))
                continue
        if default is not None or not schema.nullable:
            errors += [invalid(f"{node_path}.default", default, str(err))
                       for err in validate_value(default, schema, "<default>")]
    return errors


def _check_rules(raw: dict[str, Any], root: Schema, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for _, schema, node_path, correlatable in _walk(raw, root, path):
        for i, rule in enumerate(schema.rules):
            errors += check_rule(rule, schema, f"{node_path}.x-kubernetes-validations[{i}]",
                                 root=node_path == path, correlatable=correlatable)
    return errors


def check_rule(rule: dict[str, Any], schema: Schema, path: str, *, root: bool, correlatable: bool) -> list[FieldError]:
    """CRD-time checks of one ``x-kubernetes-validations`` entry."""
    errors: list[FieldError] = []
    text = rule.get("rule") or ""
    if not text.strip():
        return [required(f"{path}.rule", "rule is not specified")]
    message = rule.get("message")
    if message is not None:
        if not message.strip():
            errors.append(invalid(f"{path}.message", message, "must be non-empty if specified"))
        elif "\n" in message:
            errors.append(invalid(f"{path}.message", message, "must not contain line breaks"))
    elif "\n" in text and not rule.get("messageExpression"):
        errors.append(required(f"{path}.message", "message must be specified if rule contains line breaks"))
    if rule.get("messageExpression") is not None and not str(rule["messageExpression"]).strip():
        errors.append(required(f"{path}.messageExpression", "messageExpression must be non-empty if specified"))
    reason = rule.get("reason")
    if reason is not None and reason not in cel_rules.REASONS:
        errors.append(not_supported(f"{path}.reason", reason, list(cel_rules.REASONS)))
    field_path = rule.get("fieldPath")
    if field_path is not None and not _valid_field_path(field_path, schema):
        errors.append(invalid(f"{path}.fieldPath", field_path, "fieldPath must be a valid path"))
    transition = cel_rules.uses_old_self(text)
    if rule.get("optionalOldSelf") and not transition:
        errors.append(forbidden(f"{path}.optionalOldSelf", "may not be set if oldSelf is not used in rule"))
    if transition and not correlatable:
        errors.append(invalid(f"{path}.rule", text, f"oldSelf cannot be used on the uncorrelatable portion of the "
                                                    f"schema within {path.rsplit('.x-kubernetes-validations', 1)[0]}"))
    if errors:
        return errors
    try:
        cel_rules.compile_rule(rule, schema, root=root)
    except cel_rules.RuleError as err:
        detail = str(err)
        where = "messageExpression" if detail.startswith("messageExpression") else "rule"
        return [invalid(f"{path}.{where}", rule.get(where), detail)]
    cost = rule_cost(text, schema)
    if cost > cel_rules.PER_EXPRESSION_COST_LIMIT:
        message = cel_rules.cost_factor_message(cost, cel_rules.PER_EXPRESSION_COST_LIMIT)
        errors.append(forbidden(f"{path}.rule", message))
    return errors


def rule_cost(rule: str, schema: Schema) -> int:
    """The static cost estimate a rule is held to (one function, so a better estimator can
    replace the approximation in :func:`fakeapi.machinery.cel_rules.estimated_cost`)."""
    return cel_rules.estimated_cost(rule, schema)


def _valid_field_path(field_path: str, schema: Schema) -> bool:
    from fakeapi.machinery.jsonpath import PathError, parse_path

    try:
        steps = parse_path(field_path)
    except PathError:
        return False
    node: Schema | None = schema
    for step in steps:
        if node is None or isinstance(step, int):
            return False
        node = node.properties.get(step) or node.additional
    return node is not None
