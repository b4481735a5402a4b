"""Schema facts derived from the models: Go-style decoding and OpenAPI v3 components.

Both functions walk one type tree built from the pydantic annotations (:func:`type_node`), so
the served OpenAPI, the unknown-field check and the JSON type check cannot drift apart.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from fakeapi.errors import BadRequest
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.quantity import QuantityError, canonicalize_quantity
from fakeapi.machinery.timestamps import TimeParseError, normalize_go_time
from fakeapi.models.base import GoType

# --- the type tree -------------------------------------------------------------------------


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar with its Go type (string, bool, int32, int64, resource.Quantity...)."""

    go: str


@dataclass(frozen=True)
class Opaque:
    """Any JSON value, kept verbatim (RawExtension, opaque sub-objects)."""

    go: str = "interface {}"


@dataclass(frozen=True)
class ListOf:
    item: Node


@dataclass(frozen=True)
class MapOf:
    value: Node


@dataclass(frozen=True)
class Struct:
    model: type[BaseModel]


Node = Scalar | Opaque | ListOf | MapOf | Struct


@dataclass(frozen=True)
class FieldSpec:
    """One JSON property of a struct."""

    node: Node
    required: bool
    description: str
    markers: dict[str, Any]


_PLAIN = {str: "string", bool: "bool", int: "int64", float: "float64"}
_OPAQUE_GO = {"runtime.RawExtension"}


def type_node(tp: Any, metadata: tuple[Any, ...] = ()) -> Node:
    """Translate a (resolved) annotation into the type tree."""
    go = next((m.name for m in metadata if isinstance(m, GoType)), None)
    if go is not None:
        return Opaque(go) if go in _OPAQUE_GO else Scalar(go)
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        return type_node(base, tuple(meta))
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {tp!r}: mark it with a GoType")
        return type_node(args[0])
    if origin is list:
        return ListOf(type_node(get_args(tp)[0]))
    if origin is dict:
        return MapOf(type_node(get_args(tp)[1]))
    if tp is Any:
        return Opaque()
    if tp in _PLAIN:
        return Scalar(_PLAIN[tp])
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return Struct(tp)
    raise TypeError(f"unsupported annotation {tp!r}")


@cache
def struct_fields(model: type[BaseModel]) -> dict[str, FieldSpec]:
    """JSON name -> FieldSpec for a model, in declaration order."""
    out: dict[str, FieldSpec] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        out[key] = FieldSpec(type_node(info.annotation, tuple(info.metadata)), info.is_required(),
                             info.description or "", dict(extra))
    return out


def _is_open(model: type[BaseModel]) -> bool:
    return model.model_config.get("extra") == "allow"


# --- decode --------------------------------------------------------------------------------


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _go_name(node: Node) -> str:
    if isinstance(node, (Scalar, Opaque)):
        return node.go
    if isinstance(node, ListOf):
        return "[]" + _go_name(node.item)
    if isinstance(node, MapOf):
        return "map[string]" + _go_name(node.value)
    # Go names a struct by its package, which is the API version (v1, v1beta1, v1alpha1).
    package = sys.modules[node.model.__module__].OPENAPI_PACKAGE.rsplit(".", 1)[-1]
    return f"{package}.{node.model.__name__}"


class _DecodeError(Exception):
    """A body Go's decoder would refuse; the message follows the wrapped Go error."""


class _TypeMismatch(_DecodeError):
    def __init__(self, value: Any, struct: str, path: str, node: Node) -> None:
        kind = _json_kind(value)
        if kind == "number" and isinstance(node, Scalar) and node.go.startswith("int"):
            kind = f"number {value}"
        super().__init__(f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} "
                         f"of type {_go_name(node)}")


def _accepted(go: str) -> tuple[type, ...]:
    """The Python types of the JSON values Go decodes into ``go`` (bools only into ``bool``)."""
    if go == "bool":
        return (bool,)
    if go == "intstr.IntOrString":  # before the int prefix below
        return (str, int)
    if go.startswith(("int", "uint")):
        return (int,)
    if go == "float64":
        return (int, float)
    if go == "resource.Quantity":
        return (str, int, float)
    return (str,)


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _base64_error_offset(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` gives up on ``text`` (it skips CR/LF), or None if valid."""
    positions = [i for i, ch in enumerate(text) if ch not in "\r\n"]
    padding_at = None
    for n, i in enumerate(positions):
        ch = text[i]
        if ch == "=":
            if n % 4 < 2:
                return i  # padding cannot start a quantum's first two characters
            padding_at = n if padding_at is None else padding_at
        elif ch not in _BASE64 or padding_at is not None:
            return i  # not base64, or data after the padding
    if len(positions) % 4:
        return positions[len(positions) - len(positions) % 4]  # an incomplete last quantum
    return None


# Times are checked and stored as the apiserver does: UTC, seconds (Time) or microseconds (MicroTime).
_TIMES = frozenset({"v1.Time", "v1.MicroTime"})


class _IllegalBase64(_DecodeError):
    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


# Paths are built lazily as (parent, key) links and only rendered for an error or an unknown
# field: decoding runs on every write, and formatting each path eagerly dominated its cost.
# List indexes are int links and map keys "\0key"; Go's paths leave both out.
LazyPath = tuple[Any, str | int] | None


def _render(path: LazyPath, go: bool = False) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        if type(key) is int:  # a list index
            if not go:  # Go's field paths name struct fields only
                parts.append(f"[{key}]")
            continue
        if key[:1] == "\0":  # a map key (a field's name may be "")
            if go:
                continue
            key = key[1:]
        parts.append(key)
    text = ""
    for key in reversed(parts):
        text = f"{text}{key}" if key.startswith("[") else _join(text, key)
    return text


# Decoding runs on every write, so each model's decoder is compiled once: per struct, a table of
# its fields' decoders, built on first use; nothing dispatches on the type tree per value.
# A decoder takes (value, path, unknown) and returns the decoded value; ``unknown`` collects the
# rendered paths of unknown fields.  It is compiled for the struct whose field it decodes (Go's
# type errors name that struct) and for plain bodies or patches.
Decoder = Callable[[Any, LazyPath, list[str]], Any]
# What a decoder decodes besides whole bodies ("").
MERGE, STRATEGIC = "merge", "strategic"

# Go types whose JSON strings are checked or converted; other strings are kept verbatim without a call.
_CHECKED_STRINGS = frozenset({"[]byte", "resource.Quantity", *_TIMES})
_JSON_SCALARS = frozenset({str, int, float, bool})
_STRUCTS: dict[tuple[type[BaseModel], str], Decoder] = {}
# Times as written -> as stored, per Go type: a status write carries back the same few timestamps
# (conditions, container starts) every time, and parsing one costs more than the rest of its field.
_NORMALIZED_TIMES: dict[str, Memo[str, str]] = {go: Memo(4096) for go in _TIMES}
# Quantities are stored as Go's decoder leaves them: parsed, and written back in canonical form
# ("1000m" -> "1", "1.5Gi" -> "1536Mi"); the same few come back on every object.
_CANONICAL_QUANTITIES: Memo[str | int | float, str] = Memo(4096)


def _verbatim_string(node: Node) -> bool:
    return isinstance(node, Scalar) and _accepted(node.go)[0] is str and node.go not in _CHECKED_STRINGS


def _kept_type(node: Node) -> type | None:
    """The JSON type whose values of ``node`` are kept as they are, without a call: strings that
    need no check, integers of Go's integer types, bools, floats of ``float64``; None for others."""
    if not isinstance(node, Scalar) or node.go in _CHECKED_STRINGS:
        return None
    if node.go == "float64":
        return float  # (an integer there takes the checked path)
    return _accepted(node.go)[0]  # str, int or bool; the first of IntOrString's is str


def _fast_path(node: Node, patch: str) -> tuple[type | None, Decoder | None]:
    """The JSON type a well-typed value of ``node`` has, if one type says it is well-typed, and
    what decodes it then without checking its type again: None keeps the value."""
    kept = _kept_type(node)
    if kept is not None:
        return kept, None
    if isinstance(node, Struct):
        return dict, _struct_decoder(node.model, patch)
    if isinstance(node, Scalar) and node.go in _TIMES:
        return str, _time_normalizer(node.go)
    return None, None


def _compile(node: Node, struct: str, patch: str) -> Decoder:
    """The decoder of a value of type ``node`` in a field of Go struct ``struct``, in a whole body
    (``patch`` "") or in a "merge" or "strategic" patch."""
    def mismatch(value: Any, path: LazyPath) -> _TypeMismatch:
        return _TypeMismatch(value, struct, _render(path, go=True), node)

    if isinstance(node, Opaque):
        return lambda value, path, unknown: deep_copy(value)
    if isinstance(node, Scalar):
        return _compile_scalar(node.go, mismatch)
    elements = node.item if isinstance(node, ListOf) else node.value if isinstance(node, MapOf) else None
    if isinstance(elements, Opaque):
        # Every element kept verbatim and a null stays null (an opaque zero value is null), so the
        # container is one copy, not one per element (a Pod's containerStatuses are open maps).
        shape = list if isinstance(node, ListOf) else dict

        def decode_opaque_elements(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            if not isinstance(value, shape):
                raise mismatch(value, path)
            return deep_copy(value)
        return decode_opaque_elements
    if isinstance(node, ListOf):
        item_node = node.item
        # A merge patch replaces a list whole, so its items are whole values: their nulls and
        # empties are Go's zero values, as in a body (a strategic one merges items by key).
        items = "" if patch == MERGE else patch
        item, (fast_type, fast) = _compile(item_node, struct, items), _fast_path(item_node, items)

        def decode_list(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            if not isinstance(value, list):
                raise mismatch(value, path)
            # null list items are zero values even in patches (lists are replaced whole, a null
            # item deletes nothing); null map values in a patch delete the key.
            return [(x if fast is None else fast(x, (path, i), unknown)) if type(x) is fast_type else
                    _zero_value(item_node) if x is None else item(x, (path, i), unknown)
                    for i, x in enumerate(value)]
        return decode_list
    if isinstance(node, MapOf):
        value_node = node.value
        each, verbatim = _compile(value_node, struct, patch), _verbatim_string(value_node)
        quantities = isinstance(value_node, Scalar) and value_node.go == "resource.Quantity"

        def decode_map(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            if not isinstance(value, dict):
                raise mismatch(value, path)
            if verbatim and all(type(v) is str for v in value.values()):
                return dict(value)  # labels, annotations, data: nothing to check or convert
            if quantities:  # requests, limits, capacity: a quantity seen before needs no call
                known = _CANONICAL_QUANTITIES
                return {k: known.get(v) or each(v, (path, "\0" + k), unknown) if type(v) is str else
                        (None if patch else _zero_value(value_node)) if v is None else
                        each(v, (path, "\0" + k), unknown) for k, v in value.items()}
            # Go decodes a null map value as the zero value; in a patch, null deletes the key.
            return {k: (None if patch else _zero_value(value_node)) if v is None else
                    each(v, (path, "\0" + k), unknown) for k, v in value.items()}
        return decode_map
    fields = _struct_decoder(node.model, patch)

    def decode_struct(value: Any, path: LazyPath, unknown: list[str]) -> Any:
        if not isinstance(value, dict):
            raise mismatch(value, path)
        return fields(value, path, unknown)
    return decode_struct


def _compile_scalar(go: str, mismatch: Callable[[Any, LazyPath], _TypeMismatch]) -> Decoder:
    accepted = _accepted(go)
    takes_bool = go == "bool"

    def check(value: Any, path: LazyPath) -> None:
        if not isinstance(value, accepted) or (type(value) is bool and not takes_bool):
            raise mismatch(value, path)

    if go in _TIMES:
        normalize = _time_normalizer(go)

        def decode_time(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            check(value, path)
            return normalize(value, path, unknown)
        return decode_time
    if go == "[]byte":
        def decode_bytes(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            check(value, path)
            if (offset := _base64_error_offset(value)) is not None:
                raise _IllegalBase64(offset)
            return value
        return decode_bytes
    if go == "resource.Quantity":
        def decode_quantity(value: Any, path: LazyPath, unknown: list[str]) -> Any:
            check(value, path)
            canonical = _CANONICAL_QUANTITIES.get(value)
            if canonical is None:
                try:  # Go's Quantity decoder trims spaces; its error names no field
                    canonical = canonicalize_quantity(value.strip() if type(value) is str else value)
                except QuantityError as exc:
                    raise _DecodeError(str(exc)) from None
                _CANONICAL_QUANTITIES.keep(value, canonical)
            return canonical
        return decode_quantity

    def decode_scalar(value: Any, path: LazyPath, unknown: list[str]) -> Any:
        check(value, path)
        return value
    return decode_scalar


@cache
def _time_normalizer(go: str) -> Decoder:
    """The decoder of a string known to be one into the time type ``go``: stored in UTC, to the
    second (``v1.Time``) or microsecond (``v1.MicroTime``)."""
    micro, seen = go == "v1.MicroTime", _NORMALIZED_TIMES[go]

    def normalize_time(value: str, path: LazyPath, unknown: list[str]) -> str:
        normalized = seen.get(value)
        if normalized is None:
            try:
                normalized = normalize_go_time(value, micro=micro)
            except TimeParseError as exc:
                raise _DecodeError(str(exc)) from None
            seen.keep(value, normalized)
        return normalized
    return normalize_time


def _struct_decoder(model: type[BaseModel], patch: str) -> Decoder:
    """The decoder of a JSON object known to be a dict into ``model``'s fields (compiled once)."""
    found = _STRUCTS.get((model, patch))
    if found is not None:
        return found
    # key -> (the fast path's JSON type and decoder, the field's decoder); filled below
    fields: dict[str, tuple[type | None, Decoder | None, Decoder]] = {}
    # key -> the JSON type of values kept as they are (most fields): one lookup decides them
    kept: dict[str, type] = {}
    # A patch keeps its empty maps and lists: merging one changes nothing, and what a merge patch
    # leaves empty is left out of its result by drop_emptied.
    omit_empty = {} if patch else omitted_when_empty(model)
    is_open = _is_open(model)
    directives = patch == STRATEGIC

    def decode_fields(obj: dict[str, Any], path: LazyPath, unknown: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if kept.get(key) is type(value):
                out[key] = value
                continue
            field = fields.get(key)
            if patch and (value is None or (directives and key.startswith("$"))):
                out[key] = value  # a deletion or a strategic-merge directive, applied later
            elif field is None:
                if is_open:
                    # Scalars are immutable, and every body's are JSON's (bodies are parsed as JSON).
                    out[key] = value if type(value) in _JSON_SCALARS else deep_copy(value)
                else:
                    unknown.append(_render((path, key)))
            elif value is not None:  # null clears an optional field, as omitempty re-encoding would
                if not value and omit_empty.get(key) is type(value):
                    continue
                fast_type, fast, decode = field
                if type(value) is fast_type:
                    out[key] = value if fast is None else fast(value, (path, key), unknown)
                else:
                    out[key] = decode(value, (path, key), unknown)
        return out

    _STRUCTS[model, patch] = decode_fields  # registered first: models may be recursive
    for key, spec in struct_fields(model).items():
        fast_type, fast = _fast_path(spec.node, patch)
        fields[key] = (fast_type, fast, _compile(spec.node, model.__name__, patch))
        if fast_type is not None and fast is None:
            kept[key] = fast_type
    return decode_fields


@cache
def omitted_when_empty(model: type[BaseModel]) -> dict[str, type]:
    """``model``'s optional maps and lists by JSON name and type: Go's omitempty leaves an empty
    one out of what is stored and returned."""
    return {key: list if isinstance(spec.node, ListOf) else dict for key, spec in struct_fields(model).items()
            if not spec.required and isinstance(spec.node, ListOf | MapOf)}


def drop_emptied(model: type[BaseModel], patch: dict[str, Any], result: dict[str, Any], *,
                 strategic: bool) -> None:
    """Leave out of ``result`` (in place) the optional maps and lists of ``model`` that a merge or
    ``strategic`` merge ``patch`` left empty, as Go's omitempty does when the apiserver re-encodes
    the patched object: a nodeSelector whose last key was deleted, a toleration list replaced by [].

    Only what the patch reaches is walked: the stored object has no empty ones (the decoder leaves
    them out of whole bodies), so only a patched value can be one.  A merge patch's lists were
    decoded as whole values, so they hold none; a strategic patch's lists of structs it reaches
    are walked whole, as their items are merged by key, empties kept."""
    plan = _emptying_plan(model)
    emptied: list[str] = []
    for key, change in patch.items():
        if key[:1] == "$":  # $deleteFromPrimitiveList/<f> and $setElementOrder/<f> reach <f>
            key = key.partition("/")[2]
        entry = plan.get(key)
        if entry is None:
            continue
        omitted, inner = entry
        value = result.get(key)
        if not value:
            if value is not None and omitted is type(value):
                emptied.append(key)
        elif inner is not None and type(change) in (dict, list):
            _drop_emptied_in(inner, change, value, strategic)
    for key in emptied:
        del result[key]


def _drop_emptied_in(node: Node, change: Any, value: Any, strategic: bool) -> None:
    if isinstance(node, Struct):
        if type(change) is dict and type(value) is dict:
            drop_emptied(node.model, change, value, strategic=strategic)
    elif isinstance(node, MapOf):  # map values stay even when empty: omitempty is a struct field's
        if type(change) is dict and type(value) is dict:
            for key, each in change.items():
                if key in value and type(each) in (dict, list):
                    _drop_emptied_in(node.value, each, value[key], strategic)
    elif isinstance(node, ListOf) and strategic and type(value) is list:
        for each in value:
            _drop_emptied_in(node.item, each, each, strategic)


@cache
def _emptying_plan(model: type[BaseModel]) -> dict[str, tuple[type | None, Node | None]]:
    """JSON name -> (the empty type omitempty leaves out, or None; the type to walk into, or None)
    for the fields of ``model`` where :func:`drop_emptied` has anything to do: a status patch's
    conditions or pod IPs, structs of scalars, are not walked."""
    omitted = omitted_when_empty(model)
    plan: dict[str, tuple[type | None, Node | None]] = {}
    for key, spec in struct_fields(model).items():
        inner = spec.node if _holds_structs_with_containers(spec.node) else None
        if key in omitted or inner is not None:
            plan[key] = (omitted.get(key), inner)
    return plan


def _holds_structs_with_containers(node: Node) -> bool:
    while isinstance(node, ListOf | MapOf):
        node = node.item if isinstance(node, ListOf) else node.value
    return isinstance(node, Struct) and any(isinstance(spec.node, ListOf | MapOf | Struct)
                                            for spec in struct_fields(node.model).values())


def _zero_value(node: Node) -> Any:
    """What Go's encoding/json makes of ``null`` for an element of this type."""
    if isinstance(node, Struct):
        return {}
    if isinstance(node, Scalar):
        if node.go == "bool":
            return False
        if node.go.startswith(("int", "uint", "float")):
            return 0
        if node.go == "resource.Quantity":
            return "0"
        return ""
    return None  # nil slices, maps and raw JSON stay null


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def decode(model: type[BaseModel], obj: dict[str, Any], field_validation: str = "Strict", *,
           patch: str = "") -> tuple[dict[str, Any], list[str]]:
    """Check JSON types against ``model`` and handle unknown fields per ``fieldValidation``.

    Returns a pruned deep copy (unknown fields and nulls removed, numeric quantities as
    strings) and the warnings for ``Warn``.  Raises :class:`BadRequest` on a type mismatch
    and, for ``Strict``, on unknown fields.  Defaults are not applied.  With ``patch`` ("merge"
    or "strategic") the object is such a patch: nulls (deletions) stay, and a strategic one's
    ``$`` directives; a merge patch's lists are decoded as whole values.
    """
    if not isinstance(obj, dict):
        raise BadRequest(_refusal(model) + f"json: cannot unmarshal {_json_kind(obj)} into Go value of type "
                                           f"{_go_name(Struct(model))}")
    unknown: list[str] = []
    try:
        pruned = _struct_decoder(model, patch)(obj, None, unknown)
    except _DecodeError as err:
        raise BadRequest(_refusal(model) + str(err)) from None
    if not unknown:  # nearly every body: no message to format
        return pruned, []
    messages = [f'unknown field "{p}"' for p in unknown]
    if field_validation == "Strict":
        raise BadRequest(_refusal(model) + "strict decoding error: " + ", ".join(messages))
    return pruned, messages if field_validation == "Warn" else []


def _refusal(model: type[BaseModel]) -> str:
    """The start of the message refusing a body decoded into ``model``."""
    kind, version = _kind_version(model)
    return f'{kind} in version "{version}" cannot be handled as a {kind}: '


def _kind_version(model: type[BaseModel]) -> tuple[str, str]:
    gvk = getattr(model, "gvk", None)
    return (gvk[2], gvk[1]) if gvk else (model.__name__, "v1")


# --- Go value structs ------------------------------------------------------------------------


@cache
def _value_struct_plan(model: type[BaseModel]) -> tuple[tuple[str, bool, type[BaseModel] | None], ...]:
    """(key, is a value struct, model to descend into) for the fields that are or hold value structs."""
    plan: list[tuple[str, bool, type[BaseModel] | None]] = []
    for key, spec in struct_fields(model).items():
        if not isinstance(spec.node, Struct):
            continue
        is_value = spec.markers.get("default") == {}
        inner = spec.node.model if _value_struct_plan(spec.node.model) else None
        if is_value or inner is not None:
            plan.append((key, is_value, inner))
    return tuple(plan)


def fill_value_structs(model: type[BaseModel], obj: dict[str, Any]) -> None:
    """Add ``{}`` for every absent value struct of ``obj`` (a Node without ``spec`` reads back
    with ``spec: {}``, as Go's encoder writes it), in place."""
    for key, is_value, inner in _value_struct_plan(model):
        child = obj.get(key)
        if child is None and is_value:
            child = obj[key] = {}
        if inner is not None and isinstance(child, dict):
            fill_value_structs(inner, child)


# --- OpenAPI -------------------------------------------------------------------------------

_BUILTIN_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "resource.Quantity": ("io.k8s.apimachinery.pkg.api.resource.Quantity", {
        "type": "string",
        "description": "A fixed-point number with a suffix, e.g. 100m, 2, 1Gi; numbers are accepted."}),
    "v1.Time": ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", {
        "type": "string", "format": "date-time", "description": "RFC 3339 time, second precision."}),
    "v1.MicroTime": ("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", {
        "type": "string", "format": "date-time", "description": "RFC 3339 time, microsecond precision."}),
    "intstr.IntOrString": ("io.k8s.apimachinery.pkg.util.intstr.IntOrString", {
        "type": "string", "format": "int-or-string", "description": "An integer or a string."}),
    "runtime.RawExtension": ("io.k8s.apimachinery.pkg.runtime.RawExtension", {
        "type": "object", "description": "Arbitrary JSON, kept verbatim."}),
}
_SCALAR_SCHEMAS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"}, "bool": {"type": "boolean"},
    "int32": {"type": "integer", "format": "int32"}, "int64": {"type": "integer", "format": "int64"},
    "float64": {"type": "number", "format": "double"}, "[]byte": {"type": "string", "format": "byte"},
}


def schema_name(group: str, version: str, kind: str) -> str:
    """Component name of a served kind, e.g. ``io.k8s.api.resource.v1.ResourceClaim``."""
    return f"io.k8s.api.{group.removesuffix('.k8s.io') if group else 'core'}.{version}.{kind}"


def _component_name(model: type[BaseModel]) -> str:
    gvk = getattr(model, "gvk", None)
    if gvk is not None:
        return schema_name(*gvk)
    package = sys.modules[model.__module__].OPENAPI_PACKAGE
    return f"{package}.{model.__name__}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


class _OpenAPIWriter:
    def __init__(self) -> None:
        self.components: dict[str, dict[str, Any]] = {}

    def node(self, node: Node) -> dict[str, Any]:
        if isinstance(node, Opaque):
            if node.go in _BUILTIN_SCHEMAS:
                return self.builtin(node.go)
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if isinstance(node, Scalar):
            return self.builtin(node.go) if node.go in _BUILTIN_SCHEMAS else dict(_SCALAR_SCHEMAS[node.go])
        if isinstance(node, ListOf):
            return {"type": "array", "items": self.node(node.item)}
        if isinstance(node, MapOf):
            return {"type": "object", "additionalProperties": self.node(node.value)}
        return _ref(self.model(node.model))

    def builtin(self, go: str) -> dict[str, Any]:
        name, schema = _BUILTIN_SCHEMAS[go]
        self.components.setdefault(name, dict(schema))
        return _ref(name)

    def model(self, model: type[BaseModel]) -> str:
        name = _component_name(model)
        if name in self.components:
            return name
        schema: dict[str, Any] = {"type": "object", "description": _doc(model)}
        self.components[name] = schema  # registered first: models may be recursive
        props: dict[str, Any] = {}
        required: list[str] = []
        for key, spec in struct_fields(model).items():
            prop = self.node(spec.node)
            if "$ref" in prop:
                prop = {"allOf": [prop]}
            if spec.description:
                prop["description"] = spec.description
            prop.update(spec.markers)
            props[key] = prop
            if spec.required:
                required.append(key)
        schema["properties"] = props
        if required:
            schema["required"] = required
        if _is_open(model):
            schema["x-kubernetes-preserve-unknown-fields"] = True
        gvk = getattr(model, "gvk", None)
        if gvk is not None:
            schema["x-kubernetes-group-version-kind"] = [
                {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}]
        return name


def _doc(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def openapi_components() -> dict[str, dict[str, Any]]:
    """OpenAPI 3.0 component schemas for every served model and the types they use."""
    from fakeapi.models import MODELS  # the package imports this module's siblings only

    writer = _OpenAPIWriter()
    for model in MODELS.values():
        writer.model(model)
    return writer.components
