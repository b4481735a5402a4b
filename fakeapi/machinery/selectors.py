"""Label and field selectors, parsed, matched and printed as apimachinery does.

Label selectors follow ``k8s.io/apimachinery/pkg/labels/selector.go``: a small lexer, a
recursive-descent parser and ``NewRequirement`` validation of keys (label keys: optional DNS
subdomain prefix, name part of at most 63 bytes) and values (label values).  The error texts are
upstream's, because the API server returns them verbatim in 400 answers and clients match on them.

Field selectors follow ``pkg/fields/selector.go``: comma-separated ``field=value``,
``field==value`` or ``field!=value`` terms, with ``\\,``, ``\\=`` and ``\\\\`` escapes in values.
Which fields a kind supports is the API server's business, not this module's.

Everything here is pure and immutable; parsed selectors are hashable and cached, so watchers
that share a selector string share one parsed object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fakeapi.errors import go_quote

# Operators as spelled by k8s.io/apimachinery/pkg/selection.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
GREATER_THAN = "gt"
LESS_THAN = "lt"
EXISTS = "exists"
DOES_NOT_EXIST = "!"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)

# metav1.LabelSelectorRequirement operators (the object form) mapped onto selection operators.
_OBJECT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


class SelectorError(ValueError):
    """A selector that does not parse or validate; ``str(e)`` is upstream's message."""


# --- label key and value validation (k8s.io/apimachinery/pkg/api/validate/content) ---------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
                  "and must start and end with an alphanumeric character")
_LABEL_KEY_MAX = 63
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character")
_LABEL_VALUE_MAX = 63
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_MAX = 253

_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_INT64_RE = re.compile(r"[+-]?[0-9]+")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # Upstream's RegexError, including its "'a',  or 'b', " punctuation.
    shown = "".join((" or " if i else "") + f"'{example}', " for i, example in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def _byte_len(text: str) -> int:
    return len(text.encode())


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(_max_len_error(_DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """Upstream ``IsLabelKey`` (a.k.a. ``IsQualifiedName``): the reasons ``key`` is invalid, or ``[]``."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) > 2:
        return [f"a valid label key {_regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}"
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {msg}" for msg in _dns1123_subdomain_errors(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > _LABEL_KEY_MAX:
        errs.append(f"name part {_max_len_error(_LABEL_KEY_MAX)}")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(f"name part {_regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}")
    return errs


def label_value_errors(value: str) -> list[str]:
    """Upstream ``IsLabelValue``: the reasons ``value`` is not a valid label value, or ``[]``."""
    errs = []
    if _byte_len(value) > _LABEL_VALUE_MAX:
        errs.append(_max_len_error(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _invalid(path: str, value: str | tuple[str, ...], detail: str) -> str:
    # field.Invalid(...).Error(): strings print %q, string lists print as JSON (nil -> null).
    if isinstance(value, str):
        shown = go_quote(value)
    else:
        shown = json.dumps(list(value), separators=(",", ":"), ensure_ascii=False) if value else "null"
    return f"{path}: Invalid value: {shown}: {detail}"


def _aggregate(messages: list[str]) -> str:
    # utilerrors.Aggregate.Error(): one message as is, several de-duplicated inside brackets.
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: the number, or ``None`` if it is not one."""
    if not _INT64_RE.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


# --- label selectors ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` clause of a label selector (build it with :func:`new_requirement`)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, key = self.operator, self.key
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return key in labels and labels[key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return key not in labels or labels[key] not in self.values
        if op == EXISTS:
            return key in labels
        if op == DOES_NOT_EXIST:
            return key not in labels
        if op in (GREATER_THAN, LESS_THAN) and key in labels and len(self.values) == 1:
            have, want = parse_int64(labels[key]), parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({values})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{values}"


def new_requirement(key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
    """Validate and build a requirement as upstream ``labels.NewRequirement`` does.

    ``operator`` is a selection operator (``in``, ``notin``, ``=``, ``==``, ``!=``, ``gt``, ``lt``,
    ``exists``, ``!``).  Raises :class:`SelectorError` listing every problem found.
    """
    vals = tuple(values)
    errs = []
    if key_errs := label_key_errors(key):
        errs.append(_invalid("key", key, "; ".join(key_errs)))
    if operator in (IN, NOT_IN):
        if not vals:
            errs.append(_invalid("values", vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(_invalid("values", vals, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(_invalid("values", vals, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(_invalid("values", vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        errs.extend(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                    for i, v in enumerate(vals) if parse_int64(v) is None)
    else:
        supported = ", ".join(go_quote(op) for op in _VALID_OPERATORS)
        errs.append(f"operator: Unsupported value: {go_quote(operator)}: supported values: {supported}")
    for i, value in enumerate(vals):
        if value_errs := label_value_errors(value):
            errs.append(_invalid(f"values[{i}][{key}]", value, "; ".join(value_errs)))
    if errs:
        raise SelectorError(_aggregate(errs))
    return Requirement(key, operator, vals)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """An AND of requirements, kept sorted by key as upstream does.

    ``selects_nothing`` is upstream's ``labels.Nothing()`` (what a nil ``metav1.LabelSelector``
    converts to); the default, requirement-free selector is ``labels.Everything()``.
    """

    requirements: tuple[Requirement, ...] = ()
    selects_nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.selects_nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (matches every object)."""
        return not self.selects_nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(selects_nothing=True)


def selector_from_requirements(requirements: Iterable[Requirement]) -> LabelSelector:
    """AND the given requirements, sorted by key like upstream ``Selector.Add``."""
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


# Lexer tokens.
_EOS, _ID, _NOT, _EQ, _DEQ, _NEQ, _GT, _LT, _IN, _NOTIN, _OPEN, _CLOSE, _COMMA = range(13)
_TOKENS = {"!": _NOT, "=": _EQ, "==": _DEQ, "!=": _NEQ, ">": _GT, "<": _LT, "(": _OPEN,
           ")": _CLOSE, ",": _COMMA, "in": _IN, "notin": _NOTIN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_TOKENS = {_IN: IN, _NOTIN: NOT_IN, _EQ: EQUALS, _DEQ: DOUBLE_EQUALS, _NEQ: NOT_EQUALS,
                    _GT: GREATER_THAN, _LT: LESS_THAN}


def _lex(text: str) -> list[tuple[int, str]]:
    items: list[tuple[int, str]] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= end:
            items.append((_EOS, ""))
            return items
        stop = pos + 1
        if text[pos] in _SPECIAL:
            # Longest operator, but stop at the first symbol that does not extend a known one
            # (upstream scanSpecialSymbol): "!=(" lexes as "!=" then "(".
            while stop < end and text[stop] in _SPECIAL and text[pos:stop + 1] in _TOKENS:
                stop += 1
            items.append((_TOKENS[text[pos:stop]], text[pos:stop]))
        else:
            while stop < end and text[stop] not in _SPECIAL and text[stop] not in _WHITESPACE:
                stop += 1
            word = text[pos:stop]
            items.append((_TOKENS.get(word, _ID), word))
        pos = stop


class _LabelParser:
    """Upstream's parser; ``values`` context reads the keywords ``in``/``notin`` as identifiers."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def lookahead(self, values: bool = True) -> tuple[int, str]:
        return self._token(self.items[self.pos], values)

    def consume(self, values: bool = True) -> tuple[int, str]:
        item = self.items[self.pos]
        self.pos = min(self.pos + 1, len(self.items) - 1)
        return self._token(item, values)

    @staticmethod
    def _token(item: tuple[int, str], values: bool) -> tuple[int, str]:
        tok, lit = item
        if values and tok in (_IN, _NOTIN):
            return _ID, lit
        return tok, lit

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == _EOS:
                return requirements
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.parse_requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume()
            if tok == _EOS:
                return requirements
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.lookahead()
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def parse_requirement(self) -> Requirement:
        operator = ""
        tok, key = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, key = self.consume()
        if tok != _ID:
            raise SelectorError(f"found '{key}', expected: identifier")
        if key_errs := label_key_errors(key):
            # The parser validates with a nil field path, which Go prints as "<nil>".
            raise SelectorError(_invalid("<nil>", key, "; ".join(key_errs)))
        if self.lookahead()[0] in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator)
        tok, lit = self.consume(values=False)
        if tok not in _OPERATOR_TOKENS:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        operator = _OPERATOR_TOKENS[tok]
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == _CLOSE:
            self.consume()
            return {""}
        if tok not in (_ID, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.parse_identifiers()
        self.consume()  # the ')' that ended the list
        return values

    def parse_identifiers(self) -> set[str]:
        # A possibly empty, comma-separated list of possibly empty identifiers: "(a,,b)", "(,a)".
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _ID:
                values.add(lit)
                tok, lit = self.lookahead()
                if tok == _CLOSE:
                    return values
                if tok != _COMMA:
                    raise SelectorError(f"found '{lit}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not values:
                    values.add("")
                tok, _ = self.lookahead()
                if tok == _CLOSE:
                    values.add("")
                    return values
                if tok == _COMMA:
                    self.consume()
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok != _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        return {lit}


@lru_cache(maxsize=1024)
def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse the string form (``?labelSelector=``); ``None`` or blank selects everything.

    Raises :class:`SelectorError` with upstream's message on bad syntax, keys or values.
    """
    if not text:
        return EVERYTHING
    return selector_from_requirements(_LabelParser(text).parse())


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """Convert a ``metav1.LabelSelector`` object as upstream ``LabelSelectorAsSelector`` does.

    ``None`` selects nothing, ``{}`` selects everything.  Raises :class:`SelectorError`.
    """
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [new_requirement(key, EQUALS, [value]) for key, value in match_labels.items()]
    for expr in expressions:
        operator = _OBJECT_OPERATORS.get(expr.get("operator", ""))
        if operator is None:
            raise SelectorError(f"{go_quote(expr.get('operator', ''))} is not a valid label selector operator")
        requirements.append(new_requirement(expr.get("key", ""), operator, expr.get("values") or ()))
    return selector_from_requirements(requirements)


# --- field selectors ----------------------------------------------------------------------------

_FIELD_OPERATORS = ("!=", "==", "=")  # "==" before "=" so no '=' is left on the value


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """An AND of ``(field, op, value)`` terms, ``op`` being ``=`` or ``!=``."""

    requirements: tuple[tuple[str, str, str], ...] = ()

    def matches(self, get: Callable[[str], str | None]) -> bool:
        """``get(field)`` returns the object's value for a field (``None`` or ``''`` if absent)."""
        for field, op, value in self.requirements:
            if ((get(field) or "") == value) != (op == "="):
                return False
        return True

    def fields(self) -> frozenset[str]:
        return frozenset(field for field, _, _ in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal for any object to match, if one ``=`` term fixes it."""
        for name, op, value in self.requirements:
            if name == field and op == "=":
                return value
        return None

    @property
    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(f"{field}{op}{escape_field_value(value)}" for field, op, value in self.requirements)


def escape_field_value(value: str) -> str:
    """Upstream ``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _split_terms(text: str) -> list[str]:
    # Split on commas that are not backslash-escaped; escapes stay in the terms.
    terms, start, escaped = [], 0, False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape_field_value(text: str) -> str:
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            if char not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            # Go formats the rune with %v, which prints its code point ("61" for '=').
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(char)}")
        else:
            out.append(char)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_term(term: str) -> tuple[str, str, str] | None:
    # No escapes on the left: the first operator found splits the term.
    for i in range(len(term)):
        for op in _FIELD_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


@lru_cache(maxsize=1024)
def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse ``?fieldSelector=``; ``None`` or ``''`` selects everything.

    Terms are sorted (as upstream sorts them) and ``==`` is stored as ``=``.  Whitespace is
    significant, as upstream.  Raises :class:`SelectorError` with upstream's message.
    """
    if not text:
        return FieldSelector()
    requirements = []
    for term in sorted(_split_terms(text)):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, raw = split
        requirements.append((field, "!=" if op == "!=" else "=", _unescape_field_value(raw)))
    return FieldSelector(tuple(requirements))
