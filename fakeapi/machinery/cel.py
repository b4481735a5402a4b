"""CEL for DRA device selectors, behind a small adapter over ``cel-expr-python`` (cel-cpp).

Shared by the API server (admission compiles selectors to reject bad expressions) and the
scheduler's allocator (evaluates them against devices).  Upstream reference:
``k8s.io/dynamic-resource-allocation/cel/compile.go`` plus the Kubernetes quantity and semver
CEL libraries.

The engine cannot carry opaque host values, so Kubernetes' ``Quantity`` and ``Semver`` are
encoded as tagged ``bytes`` (``b"q" + exact fraction`` / ``b"v" + canonical version``).  The
encodings are canonical, so CEL's own ``==`` gives upstream equality (``1Gi == 1073741824``,
build metadata ignored); the member functions decode them.

Differences from upstream, on purpose or by engine limits:

- ``device`` is a ``map(string, dyn)``, so the compiler cannot type ``device.driver``; compiling
  evaluates such expressions once on an empty probe device to reject non-bool results.
- Unknown attribute/capacity domains evaluate to an empty map only for domains spelled as
  string literals in the expression (almost always the case); a computed domain that does not
  exist is a "no such key" error.
- No runtime cost limit; Kubernetes' lists/regex/URL/IP libraries are not available (the CEL
  standard library plus the ``strings``, ``math``, ``encoders``, ``optional`` and ``cel.bind``
  extensions are).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from fakeapi.machinery.quantity import parse_quantity

__all__ = ["CelError", "CompiledSelector", "DeviceEnv", "compile_selector", "device_env"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class CelError(Exception):
    """A CEL compile or runtime error; ``str()`` is the message upstream would show."""


# ---------------------------------------------------------------------------------------------
# Quantity and semver values


def _encode_quantity(value: Fraction) -> bytes:
    return b"q%d/%d" % (value.numerator, value.denominator)


@lru_cache(maxsize=4096)
def _decode_quantity(raw: bytes) -> Fraction:
    num, _, den = raw[1:].partition(b"/")
    return Fraction(int(num), int(den))


_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_LOOSE_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def parse_semver(text: str, normalize: bool = False) -> str:
    """Return the canonical form (no build metadata) of a semver 2.0 string or raise ValueError.

    ``normalize`` accepts what upstream's ``semver(s, true)`` accepts: a ``v`` prefix, missing
    minor/patch and leading zeros.
    """
    if normalize:
        loose = _LOOSE_SEMVER.match(text)
        if loose:
            major, minor, patch, pre, build = loose.groups()
            text = f"{int(major)}.{int(minor or 0)}.{int(patch or 0)}{pre or ''}{build or ''}"
    match = _SEMVER.match(text)
    if not match:
        raise ValueError(f"invalid semver {text!r}")
    major, minor, patch, pre, _build = match.groups()
    return f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")


@lru_cache(maxsize=4096)
def _semver_key(raw: bytes) -> tuple[Any, ...]:
    core, _, pre = raw[1:].decode().partition("-")
    major, minor, patch = (int(part) for part in core.split("."))
    if not pre:
        # A release sorts after all of its pre-releases.
        return (major, minor, patch, 1, ())
    idents = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (major, minor, patch, 0, idents)


def _kind(raw: bytes) -> int:
    return raw[0] if raw else 0


def _compare(a: bytes, b: bytes) -> int:
    kind = _kind(a)
    if kind != _kind(b) or kind not in (ord("q"), ord("v")):
        raise TypeError("no such overload: compareTo needs two quantities or two semvers")
    if kind == ord("q"):
        x: Any = _decode_quantity(bytes(a))
        y: Any = _decode_quantity(bytes(b))
    else:
        x, y = _semver_key(bytes(a)), _semver_key(bytes(b))
    return (x > y) - (x < y)


def _quantity(text: str) -> bytes:
    try:
        return _encode_quantity(parse_quantity(text))
    except (ValueError, TypeError) as err:
        raise ValueError(f"quantities must match the regular expression: {text!r}") from err


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except (ValueError, TypeError):
        return False
    return True


def _semver(text: str, normalize: bool = False) -> bytes:
    return b"v" + parse_semver(text, normalize).encode()


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _as_quantity(raw: bytes) -> Fraction:
    if _kind(raw) != ord("q"):
        raise TypeError("no such overload: expected a quantity")
    return _decode_quantity(bytes(raw))


def _as_semver_part(index: int):
    def part(raw: bytes) -> int:
        if _kind(raw) != ord("v"):
            raise TypeError("no such overload: expected a semver")
        return _semver_key(bytes(raw))[index]

    return part


def _as_integer(raw: bytes) -> int:
    value = _as_quantity(raw)
    if value.denominator != 1 or not _INT64_MIN <= value.numerator <= _INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return value.numerator


def _is_integer(raw: bytes) -> bool:
    value = _as_quantity(raw)
    return value.denominator == 1 and _INT64_MIN <= value.numerator <= _INT64_MAX


def _sign(raw: bytes) -> int:
    value = _as_quantity(raw)
    return (value > 0) - (value < 0)


def _arith(sign: int):
    def apply(a: bytes, b: bytes | int) -> bytes:
        other = Fraction(b) if isinstance(b, int) else _as_quantity(b)
        return _encode_quantity(_as_quantity(a) + sign * other)

    return apply


def _overload(name: str, result: cel.Type, params: list[cel.Type], impl: Any, member: bool) -> cel.Overload:
    return cel.Overload(name, result, params, is_member=member, impl=impl)


def _functions() -> list[cel.FunctionDecl]:
    t = cel.Type
    b, s, i = t.BYTES, t.STRING, t.INT
    decls: dict[str, list[cel.Overload]] = {
        "quantity": [_overload("quantity_string", b, [s], _quantity, False)],
        "isQuantity": [_overload("is_quantity_string", t.BOOL, [s], _is_quantity, False)],
        "semver": [
            _overload("semver_string", b, [s], _semver, False),
            _overload("semver_string_bool", b, [s, t.BOOL], _semver, False),
        ],
        "isSemver": [
            _overload("is_semver_string", t.BOOL, [s], _is_semver, False),
            _overload("is_semver_string_bool", t.BOOL, [s, t.BOOL], _is_semver, False),
        ],
        "compareTo": [_overload("kube_compare_to", i, [b, b], _compare, True)],
        "isGreaterThan": [_overload("kube_greater", t.BOOL, [b, b], lambda x, y: _compare(x, y) > 0, True)],
        "isLessThan": [_overload("kube_less", t.BOOL, [b, b], lambda x, y: _compare(x, y) < 0, True)],
        "add": [
            _overload("quantity_add", b, [b, b], _arith(1), True),
            _overload("quantity_add_int", b, [b, i], _arith(1), True),
        ],
        "sub": [
            _overload("quantity_sub", b, [b, b], _arith(-1), True),
            _overload("quantity_sub_int", b, [b, i], _arith(-1), True),
        ],
        "asInteger": [_overload("quantity_as_integer", i, [b], _as_integer, True)],
        "isInteger": [_overload("quantity_is_integer", t.BOOL, [b], _is_integer, True)],
        "asApproximateFloat": [
            _overload("quantity_as_float", t.DOUBLE, [b], lambda x: float(_as_quantity(x)), True)
        ],
        "sign": [_overload("quantity_sign", i, [b], _sign, True)],
        "major": [_overload("semver_major", i, [b], _as_semver_part(0), True)],
        "minor": [_overload("semver_minor", i, [b], _as_semver_part(1), True)],
        "patch": [_overload("semver_patch", i, [b], _as_semver_part(2), True)],
    }
    return [cel.FunctionDecl(name, overloads) for name, overloads in decls.items()]


@lru_cache(maxsize=1)
def _env() -> cel.Env:
    return cel.NewEnv(
        variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
        extensions=[
            ext_bindings.ExtBindings(),
            ext_strings.ExtStrings(),
            ext_math.ExtMath(),
            ext_encoders.ExtEncoders(),
            ext_optional.ExtOptional(),
        ],
        functions=_functions(),
    )


# ---------------------------------------------------------------------------------------------
# Device input


class DeviceEnv:
    """The ``device`` variable for one device, built once and reused by every selector."""

    __slots__ = ("data", "domains")

    def __init__(self, data: dict[str, Any], domains: frozenset[str]) -> None:
        self.data = data
        self.domains = domains


def _attribute_value(attr: Mapping[str, Any]) -> Any:
    if "int" in attr:
        return int(attr["int"])
    if "bool" in attr:
        return bool(attr["bool"])
    if "string" in attr:
        return str(attr["string"])
    if "version" in attr:
        return _semver(attr["version"])
    raise ValueError("unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_env(driver: str, device: Mapping[str, Any]) -> DeviceEnv:
    """Build the CEL input for a wire-format ``Device``; raises CelError for unusable values."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = _attribute_value(attr)
        except ValueError as err:
            raise CelError(f"attribute {name}: {err}") from err
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, bytes]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split(name, driver)
        try:
            capacity.setdefault(domain, {})[ident] = _quantity(str(cap.get("value", "0")))
        except ValueError as err:
            raise CelError(f"capacity {name}: {err}") from err
    data = {
        "driver": driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
    }
    return DeviceEnv(data, frozenset(attributes) & frozenset(capacity))


# ---------------------------------------------------------------------------------------------
# Compilation and evaluation

_STRING_LITERAL = re.compile(r"""(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')""")
_KEY_NOT_FOUND = re.compile(r'Key not found in map : "?([^"]*)"?')


def _runtime_message(message: str) -> str:
    # cel-cpp prefixes an absl status code; keep the message in cel-go's words where they differ.
    found = _KEY_NOT_FOUND.search(message)
    if found:
        return f"no such key: {found.group(1)}"
    code, sep, rest = message.partition(": ")
    return rest if sep and code.isupper() else message


class CompiledSelector:
    """A compiled selector expression; evaluate it against :func:`device_env` values."""

    __slots__ = ("_literals", "_program", "expression")

    def __init__(self, expression: str, program: cel.Expression, literals: frozenset[str]) -> None:
        self.expression = expression
        self._program = program
        self._literals = literals

    def evaluate(self, env: DeviceEnv) -> bool:
        """True/False for the device; CelError for runtime errors and non-bool results."""
        data = env.data
        missing = self._literals - env.domains
        if missing:
            # Upstream returns an empty map for unknown domains; the engine has no such hook,
            # so add empty maps for the domains this expression can name.
            attributes = dict(data["attributes"])
            capacity = dict(data["capacity"])
            for domain in missing:
                attributes.setdefault(domain, {})
                capacity.setdefault(domain, {})
            data = {**data, "attributes": attributes, "capacity": capacity}
        result = self._program.eval(data={"device": data})
        value = result.value()
        if isinstance(value, bool):
            return value
        type_name = result.type().name()
        if type_name == "ERROR":
            raise CelError(_runtime_message(str(value)))
        raise CelError(f"CEL result of type {type_name.lower()} could not be converted to bool")


@lru_cache(maxsize=1024)
def compile_selector(expression: str) -> CompiledSelector:
    """Compile a device selector; raise CelError("compilation failed: ...") like upstream.

    Results are cached by expression text, so callers need no cache of their own.
    """
    try:
        program = _env().compile(expression)
    except RuntimeError as err:
        message = str(err)
        code, sep, rest = message.partition(": ")
        if sep and code.isupper():
            message = rest
        message = message.removesuffix(" [INVALID_ARGUMENT]").replace(_PARSETREE_ARTIFACT, "")
        raise CelError(f"compilation failed: {message}") from None
    _reject_unknown_device_fields(expression)
    out = program.return_type().name()
    if out not in ("BOOL", "DYN"):
        raise CelError(f"must evaluate to bool or the unknown type, not {out.lower()}")
    literals = frozenset(a or b for a, b in _STRING_LITERAL.findall(expression))
    if out == "DYN":
        _reject_non_bool(expression, program, literals)
    return CompiledSelector(expression, program, literals)


# cel-cpp adds this line after a syntax error; cel-go (upstream's messages) does not.
_PARSETREE_ARTIFACT = "\nERROR: <input>:-1:-1: <<nil>> parsetree"
DEVICE_FIELDS = frozenset({"driver", "attributes", "capacity", "allowMultipleAllocations"})
_DEVICE_FIELD = re.compile(r"\bdevice\s*(\.)\s*([A-Za-z_][A-Za-z0-9_]*)")


def _reject_unknown_device_fields(expression: str) -> None:
    """Upstream's ``device`` is a typed object: selecting a field it lacks is a compile error."""
    code = _STRING_LITERAL.sub(lambda m: " " * len(m.group(0)), expression)  # ignore text in quotes
    for match in _DEVICE_FIELD.finditer(code):
        if match.group(2) not in DEVICE_FIELDS:
            line = code.count("\n", 0, match.start(1)) + 1
            column = match.start(1) - (code.rfind("\n", 0, match.start(1)) + 1) + 1
            raise CelError(f"compilation failed: ERROR: <input>:{line}:{column}: undefined field "
                           f"'{match.group(2)}'")


def _reject_non_bool(expression: str, program: cel.Expression, literals: frozenset[str]) -> None:
    """Catch what upstream's typed ``device`` rejects at compile time (``device.driver``).

    ``device`` is untyped here, so the result type is only known by evaluating: a probe device
    with no attributes gives a value for expressions that do not depend on them; a non-bool
    value is a compile error.  Expressions that fail on the probe stay for runtime to judge.
    """
    empty = {domain: {} for domain in literals}
    probe = {"driver": "", "attributes": empty, "capacity": dict(empty), "allowMultipleAllocations": False}
    result = program.eval(data={"device": probe})
    type_name = result.type().name()
    if type_name not in ("BOOL", "ERROR"):
        raise CelError(f"must evaluate to bool or the unknown type, not {type_name.lower()}")
