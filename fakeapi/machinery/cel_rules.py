"""CEL validation rules of custom resources (``x-kubernetes-validations``) on cel-expr-python.

Upstream: ``apiextensions-apiserver/pkg/apiserver/schema/cel`` (compilation, validation) and
``pkg/apis/apiextensions/validation`` (CRD-time checks).  ``self`` is the value of the schema
node holding the rule; ``oldSelf`` the correlated old value, for transition rules.

Differences from upstream, by engine limits:

- Objects are ``map(string, dyn)`` (cel-expr-python declares no object types), so an unknown
  field is caught by a static check of ``self.a.b`` chains against the schema instead of the
  type checker; scalars, lists and maps of scalars are typed.
- Strings with ``format: date-time``/``duration`` stay strings (no timestamp conversion).
- The static cost check is an approximation (:func:`estimated_cost`): nested comprehensions are
  charged with the bounds (``maxItems``, ``maxProperties``, ``maxLength``) of the node's subtree,
  unbounded ones with upstream's 3 MiB estimate; it refuses the rules upstream refuses for their
  unbounded lists and strings, but its factors differ from cel-go's.
- ``optionalOldSelf`` rules run only when an old value exists.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from fakeapi.errors import FieldError, duplicate, forbidden, invalid, required
from fakeapi.machinery.cel_messages import engine_message, run
from fakeapi.machinery.structural import Schema, join

# Upstream limits (apiserver/pkg/apis/cel/config.go, apiextensions validation.go).
PER_EXPRESSION_COST_LIMIT = 10_000_000  # StaticEstimatedCostLimit
MAX_REQUEST_SIZE = 3 * 1024 * 1024  # unbounded lists, maps and strings are estimated at this size
REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
UNCHECKED = ("some validation rules were not checked because the object was invalid; correct the existing "
             "errors to complete validation")
_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                       "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                       "void", "while"})
_IDENT = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_STRING_LITERAL = re.compile(r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_OLD_SELF = re.compile(r"\boldSelf\b")
_SELF_CHAIN = re.compile(r"(?<![\w.])self((?:\s*\.\s*[_a-zA-Z][_a-zA-Z0-9]*)+)")
_MACRO = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(")
_STRING_FUNCTIONS = re.compile(r"\.\s*(matches|contains|startsWith|endsWith|indexOf|lastIndexOf|replace|split|"
                               r"lowerAscii|upperAscii|trim|substring)\s*\(")


class RuleError(Exception):
    """A rule that does not compile; ``str()`` is upstream's detail."""


def escape(name: str) -> str | None:
    """A property name as CEL sees it (upstream's ``escaping.Escape``); None if it cannot be."""
    if name in _RESERVED:
        return f"__{name}__"
    out = name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
    out = out.replace("/", "__slash__")
    return out if _IDENT.fullmatch(out) else None


def _cel_type(schema: Schema) -> cel.Type:
    t = cel.Type
    if schema.int_or_string or (not schema.type and schema.preserve_unknown) or schema.nullable:
        return t.DYN
    scalar = {"integer": t.INT, "number": t.DOUBLE, "boolean": t.BOOL, "string": t.STRING}.get(schema.type)
    if scalar is not None:
        return scalar
    if schema.type == "array" and schema.items is not None:
        return t.List(_cel_type(schema.items))
    if schema.type == "object" and not schema.properties and schema.additional is not None:
        return t.Map(t.STRING, _cel_type(schema.additional))
    if schema.type == "object":
        return t.Map(t.STRING, t.DYN)
    return t.DYN


@lru_cache(maxsize=256)
def _env(self_type: str, with_old: bool) -> cel.Env:
    types = _TYPE_BY_NAME[self_type]
    variables = {"self": types}
    if with_old:
        variables["oldSelf"] = types
    return cel.NewEnv(variables=variables, extensions=[
        ext_bindings.ExtBindings(), ext_strings.ExtStrings(), ext_math.ExtMath(), ext_encoders.ExtEncoders(),
        ext_optional.ExtOptional()])


_TYPE_BY_NAME: dict[str, cel.Type] = {}


def _type_key(schema: Schema) -> str:
    cel_type = _cel_type(schema)
    key = _describe(schema)
    _TYPE_BY_NAME.setdefault(key, cel_type)
    return key


def _describe(schema: Schema) -> str:
    if schema.int_or_string or (not schema.type and schema.preserve_unknown) or schema.nullable:
        return "dyn"
    if schema.type == "array" and schema.items is not None:
        return f"list({_describe(schema.items)})"
    if schema.type == "object" and not schema.properties and schema.additional is not None:
        return f"map({_describe(schema.additional)})"
    return schema.type or "dyn"


def uses_old_self(rule: str) -> bool:
    """Whether a rule is a transition rule (mentions ``oldSelf`` outside string literals)."""
    return _OLD_SELF.search(_STRING_LITERAL.sub('""', rule)) is not None


def _check_fields(rule: str, schema: Schema, *, root: bool) -> None:
    """Upstream's typed ``self``: selecting a field the schema lacks is a compile error."""
    code = _STRING_LITERAL.sub(lambda m: " " * len(m.group(0)), rule)
    for match in _SELF_CHAIN.finditer(code):
        node: Schema | None = schema
        names = [n.strip() for n in match.group(1).split(".")[1:]]
        meta_level = root or schema.embedded
        for i, name in enumerate(names):
            if node is None or node.preserve_unknown or node.additional is not None or node.type != "object":
                break
            if meta_level and i == 0 and name in ("apiVersion", "kind"):
                break
            if meta_level and i == 0 and name == "metadata":
                if len(names) > 1 and names[1] not in ("name", "generateName"):
                    column = match.start() + 1
                    raise RuleError(f"compilation failed: ERROR: <input>:1:{column}: undefined field '{names[1]}'")
                break
            children = {escape(k): v for k, v in node.properties.items()}
            if name not in children:
                column = match.start() + 1
                raise RuleError(f"compilation failed: ERROR: <input>:1:{column}: undefined field '{name}'")
            node = children[name]
            meta_level = node.embedded


@dataclass(frozen=True)
class CompiledRule:
    """One compiled rule of a schema node."""

    rule: dict[str, Any]
    program: Any
    message_program: Any
    transition: bool


def compile_rule(rule: dict[str, Any], schema: Schema, *, root: bool = False) -> CompiledRule:
    """Compile ``rule`` for ``schema``'s node; raise :class:`RuleError` with upstream's detail."""
    return _compile(rule.get("rule") or "", rule.get("messageExpression") or "", _type_key(schema),
                    schema, root, rule)


def _compile(text: str, message_expression: str, type_key: str, schema: Schema, root: bool,
             rule: dict[str, Any]) -> CompiledRule:
    transition = uses_old_self(text)
    env = _env(type_key, True)
    try:
        program = env.compile(text)
    except RuntimeError as err:
        raise RuleError(f"compilation failed: {engine_message(err)}") from None
    _check_fields(text, schema, root=root)
    out = program.return_type().name()
    if out not in ("BOOL", "DYN"):
        raise RuleError("cel expression must evaluate to a bool")
    message_program = None
    if message_expression:
        try:
            message_program = env.compile(message_expression)
        except RuntimeError as err:
            raise RuleError(f"messageExpression compilation failed: {engine_message(err)}") from None
        if message_program.return_type().name() not in ("STRING", "DYN"):
            raise RuleError("messageExpression must evaluate to a string")
    return CompiledRule(dict(rule), program, message_program, transition)


# --- values ------------------------------------------------------------------------------------

def to_cel(value: Any, schema: Schema, *, root: bool = False) -> Any:
    """A JSON value as the rule sees it: escaped property names, numbers as their declared type,
    only ``name``/``generateName`` of the metadata of objects and embedded resources."""
    if isinstance(value, dict):
        if schema.type == "object" and schema.properties:
            out: dict[str, Any] = {}
            for key, item in value.items():
                sub = schema.properties.get(key)
                if (root or schema.embedded) and key == "metadata" and isinstance(item, dict):
                    out[key] = {k: v for k, v in item.items() if k in ("name", "generateName")}
                elif (root or schema.embedded) and key in ("apiVersion", "kind"):
                    out[key] = item
                elif sub is not None and (name := escape(key)) is not None and item is not None:
                    out[name] = to_cel(item, sub)
            return out
        if schema.additional is not None:
            return {k: to_cel(v, schema.additional) for k, v in value.items() if v is not None}
        return value
    if isinstance(value, list) and schema.items is not None:
        return [to_cel(v, schema.items) for v in value]
    if schema.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if schema.type == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _failure(path: str, schema: Schema, rule: dict[str, Any], detail: str) -> FieldError:
    field_path = rule.get("fieldPath") or ""
    if field_path:
        path = path + field_path if field_path.startswith(("[", ".")) else join(path, field_path)
    type_name = "object" if not schema.type else schema.type
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        return forbidden(path, detail)
    if reason == "FieldValueRequired":
        return required(path, detail)
    if reason == "FieldValueDuplicate":
        return duplicate(path, type_name)
    return invalid(path, type_name, detail)


def evaluate(compiled: CompiledRule, schema: Schema, value: Any, old: Any, path: str, *,
             root: bool = False, has_old: bool = False) -> FieldError | None:
    """Run one rule on a node value; the field error it produces, or None."""
    rule = compiled.rule
    variables = {"self": to_cel(value, schema, root=root)}
    variables["oldSelf"] = to_cel(old, schema, root=root) if has_old else None
    result, error = run(compiled.program, variables)
    type_name = "object" if not schema.type else schema.type
    if error is not None:
        return invalid(path, type_name, f"{error} evaluating rule: {rule.get('rule')}")
    if result is True:
        return None
    if result is not False:
        return invalid(path, type_name, f"rule result of type {type(result).__name__} is not a bool, evaluating "
                                        f"rule: {rule.get('rule')}")
    detail = rule.get("message") or f"failed rule: {rule.get('rule')}"
    if compiled.message_program is not None:
        message, message_error = run(compiled.message_program, variables)
        if message_error is None and isinstance(message, str) and message.strip() and "\n" not in message:
            detail = message.strip()
    return _failure(path, schema, rule, detail)


# --- static cost (approximation, see the module docstring) -----------------------------------

def _bound(schema: Schema) -> tuple[int, int]:
    """(largest collection bound, largest string bound) in a subtree; unbounded = 3 MiB based."""
    collection = strings = 0
    stack = [schema]
    while stack:
        node = stack.pop()
        if node.type == "array":
            collection = max(collection, node.max_items if node.max_items is not None else MAX_REQUEST_SIZE // 2)
        elif node.type == "object" and node.additional is not None:
            collection = max(collection, node.max_properties if node.max_properties is not None
                             else MAX_REQUEST_SIZE // 4)
        elif node.type == "string" or node.int_or_string:
            strings = max(strings, node.max_length * 4 if node.max_length is not None else MAX_REQUEST_SIZE)
        elif not node.type and node.preserve_unknown:
            collection = max(collection, MAX_REQUEST_SIZE // 2)
            strings = max(strings, MAX_REQUEST_SIZE)
        stack.extend(node.properties.values())
        stack.extend(c for c in (node.items, node.additional) if c is not None)
    return collection, strings


def estimated_cost(rule: str, schema: Schema) -> int:
    """An estimate of the worst-case cost of ``rule`` on ``schema``'s node (one evaluation)."""
    code = _STRING_LITERAL.sub('""', rule)
    collection, strings = _bound(schema)
    # Nesting of comprehensions: each macro call opens a scope until its parenthesis closes.
    level = max_level = 0
    opened: list[int] = []
    paren = 0
    macros = {m.end() - 1 for m in _MACRO.finditer(code)}
    for i, char in enumerate(code):
        if char == "(":
            paren += 1
            if i in macros:
                opened.append(paren)
                level += 1
                max_level = max(max_level, level)
        elif char == ")":
            if opened and opened[-1] == paren:
                opened.pop()
                level -= 1
            paren -= 1
    string_ops = len(_STRING_FUNCTIONS.findall(code))
    per_element = 1 + math.ceil(string_ops * strings * 0.1)
    best = per_element * (collection ** max_level if max_level else 1)
    return best + len(code)


def cost_factor_message(cost: int, limit: int, what: str = "rule") -> str:
    """Upstream's Forbidden detail for a rule over its cost budget."""
    factor = cost / limit
    text = "more than 100x" if factor > 100 else (f"{factor:f}x" if factor < 1.5 else f"{factor:.1f}x")
    return (f"estimated {what} cost exceeds budget by factor of {text} (try simplifying the rule, or adding "
            f"maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
