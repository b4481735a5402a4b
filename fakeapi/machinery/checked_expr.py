"""A reader of cel-cpp's checked AST (``cel.expr.CheckedExpr``: cel/expr/checked.proto and
syntax.proto) for the CEL cost estimate (:mod:`fakeapi.machinery.cel_cost`).

Only the fields the estimate uses are read: the overloads each call resolved to, the type of
each expression and the expression tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes, pos: int, end: int) -> list[tuple[int, int, int]]:
    """(field number, value or start, end) per field; ``end`` is -1 for varints."""
    out = []
    while pos < end:
        # Keys, lengths and small values are one byte; a max-length expression has ~10^5 of them.
        key = buf[pos]
        pos += 1
        if key >= 0x80:
            key, pos = _varint(buf, pos - 1)
        wire = key & 7
        if wire == 2:
            length = buf[pos]
            pos += 1
            if length >= 0x80:
                length, pos = _varint(buf, pos - 1)
            out.append((key >> 3, pos, pos + length))
            pos += length
        elif wire == 0:
            value = buf[pos]
            pos += 1
            if value >= 0x80:
                value, pos = _varint(buf, pos - 1)
            out.append((key >> 3, value, -1))
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            out.append((key >> 3, pos, pos + size))
            pos += size
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
    return out


@dataclass(slots=True)
class Expr:
    """One AST node; which of ``value``/``operand``/``args`` are set depends on ``kind``."""

    id: int
    kind: str  # const, ident, select, call, list, map, struct, comprehension
    value: Any = None  # constant value, identifier name, selected field or function name
    operand: Expr | None = None  # select operand or call target
    args: list[Expr] | None = None  # call args, list elements, map keys/values, struct values
    test_only: bool = False
    comp: Comprehension | None = None


@dataclass(slots=True)
class Comprehension:
    """A comprehension node's parts (macros such as ``all``, ``map`` and ``filter`` expand to one)."""

    iter_var: str
    iter_var2: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


EMPTY = Expr(0, "const")


def decode(buf: bytes) -> tuple[dict[int, tuple[str, ...]], dict[int, tuple[Any, ...]], Expr]:
    """(overload ids by expression id, types by expression id, root) of a serialized CheckedExpr."""
    top = _fields(buf, 0, len(buf))
    start, end = next((s, e) for f, s, e in top if f == 2)  # google.protobuf.Any.value
    refs: dict[int, tuple[str, ...]] = {}
    types: dict[int, tuple[Any, ...]] = {}
    root = EMPTY
    decoded: dict[bytes, tuple[Any, ...]] = {}  # a few distinct types repeat for every node
    for number, s, e in _fields(buf, start, end):
        if number in (2, 3):  # map<int64, Reference> reference_map / map<int64, Type> type_map
            key, vs, ve = _map_entry(buf, s, e)
            if number == 2:
                refs[key] = tuple(buf[a:b].decode() for f, a, b in _fields(buf, vs, ve) if f == 3)
            else:
                raw = buf[vs:ve]
                type_ = decoded.get(raw)
                if type_ is None:
                    type_ = decoded[raw] = _decode_type(buf, vs, ve)
                types[key] = type_
        elif number == 4:
            root = _decode_expr(buf, s, e)
    return refs, types, root


def _map_entry(buf: bytes, start: int, end: int) -> tuple[int, int, int]:
    """(key, value start, value end) of a map<int64, message> entry; one per AST node."""
    if buf[start] == 0x08:  # the usual layout: key (field 1, varint), then value (field 2)
        key, pos = _varint(buf, start + 1)
        if pos < end and buf[pos] == 0x12:
            length, pos = _varint(buf, pos + 1)
            return key, pos, pos + length
    key, vs, ve = 0, 0, 0
    for f, fs, fe in _fields(buf, start, end):
        if f == 1:
            key = fs
        elif f == 2:
            vs, ve = fs, fe
    return key, vs, ve


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}


def _decode_type(buf: bytes, start: int, end: int) -> tuple[Any, ...]:
    """A type as ``(kind, *parameters)``; kinds the estimate does not distinguish are "other"."""
    for number, s, e in _fields(buf, start, end):
        if number == 1:
            return ("dyn",)
        if number == 3:
            return (_PRIMITIVES.get(s, "other"),)
        if number == 5:
            return (_WELL_KNOWN.get(s, "other"),)
        if number == 6:  # ListType{elem_type}
            return ("list", *(_decode_type(buf, a, b) for f, a, b in _fields(buf, s, e) if f == 1))
        if number == 7:
            return ("map",)
        if number == 14:  # AbstractType{name, parameter_types}: optional_type(T)
            parts = _fields(buf, s, e)
            name = next((buf[a:b].decode() for f, a, b in parts if f == 1), "")
            return (name, *(_decode_type(buf, a, b) for f, a, b in parts if f == 2))
        return ("other",)
    return ("other",)


def _decode_const(buf: bytes, start: int, end: int) -> Any:
    for number, s, e in _fields(buf, start, end):
        if number == 2:
            return bool(s)
        if number == 3:
            return s - (1 << 64) if s >= 1 << 63 else s
        if number == 6:
            return buf[s:e].decode()
        if number == 7:
            return bytes(buf[s:e])
    return None  # null, uint, double, duration, timestamp: scalars whose value is not needed


def _decode_expr(buf: bytes, start: int, end: int) -> Expr:
    node = Expr(0, "const")
    for number, s, e in _fields(buf, start, end):
        if number == 2:
            node.id = s
        elif number == 3:
            node.value = _decode_const(buf, s, e)
        elif number == 4:  # Ident{name}
            node.kind = "ident"
            node.value = next(buf[a:b].decode() for f, a, b in _fields(buf, s, e) if f == 1)
        elif number in (5, 6):  # Select{operand, field, test_only} / Call{target, function, args}
            node.kind, node.args = ("select", None) if number == 5 else ("call", [])
            for f, a, b in _fields(buf, s, e):
                if f == 1:
                    node.operand = _decode_expr(buf, a, b)
                elif f == 2:
                    node.value = buf[a:b].decode()
                elif node.args is None:
                    node.test_only = bool(a)
                else:
                    node.args.append(_decode_expr(buf, a, b))
        elif number == 7:  # CreateList{elements}
            node.kind = "list"
            node.args = [_decode_expr(buf, a, b) for f, a, b in _fields(buf, s, e) if f == 1]
        elif number == 8:  # CreateStruct{message_name, entries{map_key, value}}: a map without a name
            node.kind, node.args = "map", []
            for f, a, b in _fields(buf, s, e):
                if f == 1 and b > a:
                    node.kind = "struct"
                elif f == 2:
                    node.args += [_decode_expr(buf, ea, eb) for ef, ea, eb in _fields(buf, a, b) if ef in (3, 4)]
        elif number == 9:
            node.kind = "comprehension"
            node.comp = _decode_comprehension(buf, s, e)
    return node


def _decode_comprehension(buf: bytes, start: int, end: int) -> Comprehension:
    names = {1: "", 3: "", 8: ""}
    exprs = {2: EMPTY, 4: EMPTY, 5: EMPTY, 6: EMPTY, 7: EMPTY}
    for f, a, b in _fields(buf, start, end):
        if f in names:
            names[f] = buf[a:b].decode()
        elif f in exprs:
            exprs[f] = _decode_expr(buf, a, b)
    return Comprehension(iter_var=names[1], iter_var2=names[8], iter_range=exprs[2], accu_var=names[3],
                         accu_init=exprs[4], loop_condition=exprs[5], loop_step=exprs[6], result=exprs[7])
