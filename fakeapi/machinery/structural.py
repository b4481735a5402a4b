"""Structural schemas of custom resources: the parsed schema, and what the API server does with
it to every custom object — pruning unknown fields, dropping nulls, defaulting, and value
validation with kube-openapi's messages.

Upstream: ``apiextensions-apiserver/pkg/apiserver/schema`` (``structural.go``, ``pruning``,
``defaulting``, ``listtype``) and ``k8s.io/kube-openapi/pkg/validation`` (the value validator).
Pure functions over JSON values; a :class:`Schema` is parsed once per CRD version.

Why not a JSON-Schema library (``jsonschema`` is installed)?  A structural schema is a small,
fixed subset of OpenAPI v3 with Kubernetes extensions the libraries do not know
(``nullable``, ``x-kubernetes-int-or-string``, ``x-kubernetes-preserve-unknown-fields``,
integral floats counting as integers as in Go), and clients match kube-openapi's messages and
paths, which the libraries' errors do not carry: each error would have to be re-rendered
keyword by keyword, so the library would only save the comparisons, which are one line each.
Pruning and defaulting have no library at all.  Patterns are RE2 (``google-re2``), as Go's.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import re2

from fakeapi.errors import FieldError, duplicate, go_quote, invalid, not_supported, required, too_long, too_many
from fakeapi.machinery.jsoncopy import deep_copy

_NO_DEFAULT = object()
TYPES = ("array", "boolean", "integer", "number", "object", "string")
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class PatternError(ValueError):
    """A pattern RE2 (Go's regexp) does not accept."""


def compile_pattern(pattern: str) -> Any:
    """Compile a schema ``pattern`` as Go does (RE2); raise :class:`PatternError` otherwise."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as err:
        detail = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        raise PatternError(f"error parsing regexp: {detail}") from None


@dataclass(eq=False, slots=True)
class Schema:
    """One node of a structural schema (``JSONSchemaProps`` as the server uses it)."""

    type: str = ""
    format: str = ""
    description: str = ""
    properties: dict[str, Schema] = field(default_factory=dict)
    items: Schema | None = None
    additional: Schema | None = None  # additionalProperties as a schema
    additional_any: bool = False  # additionalProperties: true
    nullable: bool = False
    default: Any = _NO_DEFAULT
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    list_type: str = ""
    list_keys: tuple[str, ...] = ()
    map_type: str = ""
    enum: list[Any] | None = None
    required: tuple[str, ...] = ()
    maximum: float | None = None
    exclusive_maximum: bool = False
    minimum: float | None = None
    exclusive_minimum: bool = False
    max_length: int | None = None
    min_length: int | None = None
    pattern: str | None = None
    max_items: int | None = None
    min_items: int | None = None
    max_properties: int | None = None
    min_properties: int | None = None
    multiple_of: float | None = None
    all_of: tuple[Schema, ...] = ()
    any_of: tuple[Schema, ...] = ()
    one_of: tuple[Schema, ...] = ()
    not_: Schema | None = None
    rules: tuple[dict[str, Any], ...] = ()
    has_defaults: bool = False  # this node or a node below has a default
    has_rules: bool = False  # this node or a node below has x-kubernetes-validations
    has_embedded: bool = False  # a node below is an x-kubernetes-embedded-resource
    _regex: Any = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def regex(self) -> Any:
        if self._regex is None and self.pattern is not None:
            self._regex = compile_pattern(self.pattern)
        return self._regex

    def child(self, key: str) -> Schema | None:
        """The schema of an object's property ``key`` (a named property or the map values)."""
        return self.properties.get(key) or self.additional


def parse(raw: Any) -> Schema:
    """Parse an ``openAPIV3Schema`` dict (CRD validation has checked it is structural)."""
    if not isinstance(raw, dict):
        return Schema(preserve_unknown=True)
    s = Schema(type=raw.get("type") or "", format=raw.get("format") or "", description=raw.get("description") or "")
    s.properties = {k: parse(v) for k, v in (raw.get("properties") or {}).items()}
    if isinstance(raw.get("items"), dict):
        s.items = parse(raw["items"])
    additional = raw.get("additionalProperties")
    if isinstance(additional, dict):
        s.additional = parse(additional)
    elif additional is True:
        s.additional_any = True
    s.nullable = bool(raw.get("nullable"))
    if "default" in raw:
        s.default = raw["default"]
    s.preserve_unknown = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
    s.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
    s.int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
    s.list_type = raw.get("x-kubernetes-list-type") or ""
    s.list_keys = tuple(raw.get("x-kubernetes-list-map-keys") or ())
    s.map_type = raw.get("x-kubernetes-map-type") or ""
    s.enum = raw.get("enum")
    s.required = tuple(raw.get("required") or ())
    for name, key in (("maximum", "maximum"), ("minimum", "minimum"), ("multiple_of", "multipleOf")):
        if isinstance(raw.get(key), int | float):
            setattr(s, name, raw[key])
    for name, key in (("max_length", "maxLength"), ("min_length", "minLength"), ("max_items", "maxItems"),
                      ("min_items", "minItems"), ("max_properties", "maxProperties"),
                      ("min_properties", "minProperties")):
        if isinstance(raw.get(key), int):
            setattr(s, name, raw[key])
    s.exclusive_maximum = bool(raw.get("exclusiveMaximum"))
    s.exclusive_minimum = bool(raw.get("exclusiveMinimum"))
    s.pattern = raw.get("pattern")
    s.all_of = tuple(parse(x) for x in raw.get("allOf") or ())
    s.any_of = tuple(parse(x) for x in raw.get("anyOf") or ())
    s.one_of = tuple(parse(x) for x in raw.get("oneOf") or ())
    if isinstance(raw.get("not"), dict):
        s.not_ = parse(raw["not"])
    s.rules = tuple(r for r in raw.get("x-kubernetes-validations") or () if isinstance(r, dict))
    children = [*s.properties.values(), *(c for c in (s.items, s.additional) if c is not None)]
    s.has_defaults = s.has_default or any(c.has_defaults for c in children)
    s.has_rules = bool(s.rules) or any(c.has_rules for c in children)
    s.has_embedded = any(c.embedded or c.has_embedded for c in children)
    return s


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- pruning and nulls ---------------------------------------------------------------------

META_KEYS = ("apiVersion", "kind", "metadata")


def prune(obj: dict[str, Any], schema: Schema, meta_keys: frozenset[str] | None = None, *,
          patch: bool = False) -> list[str]:
    """Remove what the schema does not specify from a whole object, in place (upstream's
    ``pruning.PruneWithOptions``), and nulls the schema does not allow; returns the pruned paths.

    ``apiVersion``, ``kind`` and ``metadata`` of the object are never pruned here (the caller
    coerces metadata to ObjectMeta); the metadata of embedded resources keeps ``meta_keys``
    (ObjectMeta's fields) when given.  A merge ``patch`` keeps its nulls: they delete.
    """
    pruned: list[str] = []
    _prune_object(obj, schema, "", pruned, embedded=True, patch=patch)
    if meta_keys is not None and schema.has_embedded:
        _prune_embedded_meta(obj, schema, "", pruned, meta_keys)
    return pruned


def _prune_embedded_meta(value: Any, schema: Schema, path: str, pruned: list[str], meta_keys: frozenset[str]) -> None:
    if isinstance(value, dict):
        if schema.embedded and path and isinstance(value.get("metadata"), dict):
            meta = value["metadata"]
            for key in [k for k in meta if k not in meta_keys]:
                del meta[key]
                pruned.append(join(path, f"metadata.{key}"))
        for key, item in value.items():
            sub = schema.child(key)
            if sub is not None and not (not path and key in META_KEYS):
                _prune_embedded_meta(item, sub, join(path, key), pruned, meta_keys)
    elif isinstance(value, list) and schema.items is not None:
        for i, item in enumerate(value):
            _prune_embedded_meta(item, schema.items, f"{path}[{i}]", pruned, meta_keys)


def _prune_object(obj: dict[str, Any], schema: Schema, path: str, pruned: list[str], *, embedded: bool,
                  patch: bool = False) -> None:
    for key in list(obj):
        if embedded and key in META_KEYS:
            continue
        value = obj[key]
        sub = schema.properties.get(key) or schema.additional
        if sub is None:
            if not (schema.additional_any or schema.preserve_unknown):
                del obj[key]
                pruned.append(join(path, key))
            continue
        if value is None:
            if not patch and not sub.nullable and not sub.has_default:
                del obj[key]  # PruneNonNullableNullsWithoutDefaults
            continue
        obj[key] = _prune_value(value, sub, join(path, key), pruned, patch)


def _prune_value(value: Any, schema: Schema, path: str, pruned: list[str], patch: bool = False) -> Any:
    if isinstance(value, dict):
        if schema.properties or schema.additional is not None or schema.type == "object" or schema.embedded:
            _prune_object(value, schema, path, pruned, embedded=schema.embedded, patch=patch)
    elif isinstance(value, list):
        if schema.items is not None:  # lists are replaced whole by a merge patch: no nulls to keep
            for i, item in enumerate(value):
                if item is not None:
                    value[i] = _prune_value(item, schema.items, f"{path}[{i}]", pruned)
    elif isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)  # Go decodes integral JSON numbers as int64
    return value


# --- defaulting ----------------------------------------------------------------------------

def defaulted(value: Any, schema: Schema) -> Any:
    """``value`` with the schema's defaults applied (upstream's ``defaulting.Default``).

    Copy-on-write: returns ``value`` itself when nothing is defaulted, so reads of objects that
    need no defaults cost no copy.  A default applies where a property is absent, or null and not
    nullable; defaults are applied inside existing parents only.
    """
    if not schema.has_defaults:
        return value
    if isinstance(value, dict):
        changes = {key: new for key, sub in schema.properties.items()
                   if sub.has_defaults and (new := _child(value.get(key, _NO_DEFAULT), sub)) is not
                   value.get(key, _NO_DEFAULT)}
        extra = schema.additional
        if extra is not None and extra.has_defaults:
            changes.update({key: new for key, current in value.items()
                            if key not in schema.properties and (new := _child(current, extra)) is not current})
        return {**value, **changes} if changes else value
    if isinstance(value, list) and schema.items is not None and schema.items.has_defaults:
        items = [_child(current, schema.items) for current in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    return value


def _child(current: Any, schema: Schema) -> Any:
    """A defaulted property, map value or item; ``current`` (possibly absent) when unchanged."""
    if current is _NO_DEFAULT or current is None:
        if schema.has_default and (current is _NO_DEFAULT or not schema.nullable):
            return defaulted(deep_copy(schema.default), schema)
        return current
    return defaulted(current, schema)


# --- value validation (kube-openapi) -------------------------------------------------------

def json_type(value: Any) -> str:
    """The JSON type name kube-openapi prints for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(expected: str, value: Any) -> bool:
    actual = json_type(value)
    return actual == expected or (expected == "number" and actual == "integer")


def number_text(value: float) -> str:
    """A number as Go's ``%v`` prints a float64 (``10``, ``2.5``, ``1e+21``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _type_error(path: str, value: Any, expected: str) -> FieldError:
    actual = json_type(value)
    return FieldError("FieldValueTypeInvalid", path, f"{path} in body must be of type {expected}: \"{actual}\"",
                      actual)


class Validator:
    """Value validation of one object against a structural schema, collecting field errors.

    ``name_of`` renders the path used inside messages (``status.num`` on the main resource,
    ``num`` when only status is validated), mirroring kube-openapi's "<name> in body".
    """

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def validate(self, value: Any, schema: Schema, path: str) -> None:
        """Check ``value`` (present at ``path``) against ``schema``."""
        errors = self.errors
        if value is None:
            if not schema.nullable and (schema.type or schema.int_or_string):
                expected = "integer,string" if schema.int_or_string and not schema.type else schema.type
                errors.append(_type_error(path, value, expected))
            return
        if schema.int_or_string:
            if not isinstance(value, int | str) or isinstance(value, bool):
                if not (isinstance(value, float) and value.is_integer()):
                    errors.append(_type_error(path, value, "integer,string"))
                    return
        elif schema.type and not _type_ok(schema.type, value):
            errors.append(_type_error(path, value, schema.type))
            return
        if isinstance(value, dict):
            self._object(value, schema, path)
        elif isinstance(value, list):
            self._array(value, schema, path)
        elif isinstance(value, str):
            self._string(value, schema, path)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self._number(value, schema, path)
        if schema.enum is not None and not any(_json_equal(value, e) for e in schema.enum):
            errors.append(not_supported(path, value, schema.enum))
        if schema.all_of or schema.any_of or schema.one_of or schema.not_ is not None:
            self._junctors(value, schema, path)

    def _object(self, value: dict[str, Any], schema: Schema, path: str) -> None:
        errors = self.errors
        for key in schema.required:
            if key not in value:
                errors.append(required(join(path, key)))
        if schema.max_properties is not None and len(value) > schema.max_properties:
            errors.append(too_many(path, len(value), schema.max_properties))
        if schema.min_properties is not None and len(value) < schema.min_properties:
            errors.append(invalid(path, value, f"{path} in body should have at least {schema.min_properties} "
                                               f"properties"))
        for key, item in value.items():
            sub = schema.properties.get(key) or schema.additional
            if sub is not None and not (path == "" and key == "metadata"):
                self.validate(item, sub, join(path, key))

    def _array(self, value: list[Any], schema: Schema, path: str) -> None:
        errors = self.errors
        if schema.max_items is not None and len(value) > schema.max_items:
            errors.append(too_many(path, len(value), schema.max_items))
        if schema.min_items is not None and len(value) < schema.min_items:
            errors.append(invalid(path, value, f"{path} in body should have at least {schema.min_items} items"))
        if schema.items is not None:
            for i, item in enumerate(value):
                self.validate(item, schema.items, f"{path}[{i}]")

    def _string(self, value: str, schema: Schema, path: str) -> None:
        errors = self.errors
        if schema.max_length is not None and len(value) > schema.max_length:
            errors.append(too_long(path, schema.max_length))
        if schema.min_length is not None and len(value) < schema.min_length:
            errors.append(invalid(path, value, f"{path} in body should be at least {schema.min_length} chars long"))
        if schema.pattern is not None:
            try:
                matched = schema.regex().search(value) is not None
            except PatternError:
                matched = True  # refused at CRD validation; a stored bad pattern checks nothing
            if not matched:
                errors.append(invalid(path, value, f"{path} in body should match '{schema.pattern}'"))
        if schema.format:
            check = FORMATS.get(schema.format)
            if check is not None and not check(value):
                errors.append(FieldError("FieldValueTypeInvalid", path,
                                         f"{path} in body must be of type {schema.format}: {go_quote(value)}", value))

    def _number(self, value: float, schema: Schema, path: str) -> None:
        errors = self.errors
        if schema.maximum is not None:
            limit = number_text(schema.maximum)
            if schema.exclusive_maximum and value >= schema.maximum:
                errors.append(invalid(path, value, f"{path} in body should be less than {limit}"))
            elif value > schema.maximum:
                errors.append(invalid(path, value, f"{path} in body should be less than or equal to {limit}"))
        if schema.minimum is not None:
            limit = number_text(schema.minimum)
            if schema.exclusive_minimum and value <= schema.minimum:
                errors.append(invalid(path, value, f"{path} in body should be greater than {limit}"))
            elif value < schema.minimum:
                errors.append(invalid(path, value, f"{path} in body should be greater than or equal to {limit}"))
        if schema.multiple_of:
            ratio = value / schema.multiple_of
            if not math.isclose(ratio, round(ratio), rel_tol=0, abs_tol=1e-9):
                errors.append(invalid(path, value, f"{path} in body should be a multiple of "
                                                   f"{number_text(schema.multiple_of)}"))

    def _junctors(self, value: Any, schema: Schema, path: str) -> None:
        def passes(sub: Schema) -> bool:
            probe = Validator()
            probe.validate(value, sub, path)
            return not probe.errors

        for sub in schema.all_of:
            self.validate(value, sub, path)
        name = path or "<nil>"
        if schema.any_of and not any(passes(s) for s in schema.any_of):
            self.errors.append(invalid(path, value, f'"{name}" must validate at least one schema (anyOf)'))
        if schema.one_of and sum(passes(s) for s in schema.one_of) != 1:
            self.errors.append(invalid(path, value, f'"{name}" must validate one and only one schema (oneOf)'))
        if schema.not_ is not None and passes(schema.not_):
            self.errors.append(invalid(path, value, f'"{name}" must not validate the schema (not)'))


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def validate_value(value: Any, schema: Schema, path: str = "") -> list[FieldError]:
    """kube-openapi's value validation of ``value`` at ``path`` against ``schema``."""
    validator = Validator()
    validator.validate(value, schema, path)
    return validator.errors


# --- formats (apiextensions-apiserver pkg/apiserver/validation/formats.go) -------------------

_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
_HOSTNAME = re.compile(
    r"^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\Z")
_DURATION = re.compile(r"^((\d+(\.\d+)?)\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def _regex_check(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda v: compiled.fullmatch(v) is not None


def _date_time(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return "T" in value.upper() or " " in value


def _date(value: str) -> bool:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False
    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uri(value: str) -> bool:
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", value) is not None and " " not in value


FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time, "datetime": _date_time, "date": _date,
    "byte": _byte, "password": lambda v: True,
    "uuid": _regex_check(_UUID), "uuid3": _regex_check(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?"
                                                       r"[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
    "uuid4": _regex_check(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?"
                          r"[0-9a-fA-F]{12}"),
    "uuid5": _regex_check(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?"
                          r"[0-9a-fA-F]{12}"),
    "email": _regex_check(r"[^@\s]+@[^@\s]+"),
    "hostname": lambda v: len(v) <= 255 and _HOSTNAME.match(v) is not None,
    "ipv4": _ip(4), "ipv6": _ip(6), "cidr": _cidr,
    "mac": _regex_check(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}"),
    "uri": _uri, "duration": lambda v: _DURATION.match(v) is not None,
    "hexcolor": _regex_check(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": _regex_check(r"rgb\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*\)"),
    "bsonobjectid": _regex_check(r"[0-9a-fA-F]{24}"),
    "isbn": _regex_check(r"(\d[- ]?){9}[\dX]|(\d[- ]?){13}"), "isbn10": _regex_check(r"(\d[- ]?){9}[\dX]"),
    "isbn13": _regex_check(r"(\d[- ]?){13}"),
    "creditcard": _regex_check(r"\d{13,19}"), "ssn": _regex_check(r"\d{3}[- ]?\d{2}[- ]?\d{4}"),
    "k8s-short-name": lambda v: len(v) <= 63 and _DNS_LABEL.match(v) is not None,
    "k8s-long-name": lambda v: len(v) <= 253 and _DNS_SUBDOMAIN.match(v) is not None,
}


# --- list types ------------------------------------------------------------------------------

def validate_list_types(value: Any, schema: Schema, path: str = "") -> list[FieldError]:
    """Uniqueness of ``x-kubernetes-list-type`` set and map lists (``listtype.ValidateListSetsAndMaps``)."""
    errors: list[FieldError] = []
    _list_types(value, schema, path, errors)
    return errors


def _list_types(value: Any, schema: Schema, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            sub = schema.child(key)
            if sub is not None:
                _list_types(item, sub, join(path, key), errors)
    elif isinstance(value, list):
        if schema.list_type == "set":
            seen: list[Any] = []
            reported: list[Any] = []
            for i, item in enumerate(value):
                if any(_json_equal(item, s) for s in seen):
                    if not any(_json_equal(item, r) for r in reported):
                        errors.append(duplicate(f"{path}[{i}]", item))
                        reported.append(item)
                else:
                    seen.append(item)
        elif schema.list_type == "map":
            keys_seen: set[str] = set()
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    errors.append(invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map"))
                    continue
                key = {k: item[k] for k in schema.list_keys if k in item}
                text = repr(sorted(key.items()))
                if text in keys_seen:
                    errors.append(duplicate(f"{path}[{i}]", key))
                keys_seen.add(text)
        if schema.items is not None:
            for i, item in enumerate(value):
                _list_types(item, schema.items, f"{path}[{i}]", errors)
