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
- Costs: the engine can neither estimate nor interrupt an evaluation, so
  :mod:`fakeapi.machinery.cel_cost` estimates each selector's worst case (upstream's estimator,
  ported; admission rejects what exceeds upstream's limit) and an evaluation runs only when the
  estimate for the device at hand is within the same limit; otherwise it fails with upstream's
  runtime error, "operation cancelled: actual cost limit exceeded".  The engine also stops any
  evaluation after 10,000 loop iterations in total, which gives the same error.
- Kubernetes' lists/regex/URL/IP libraries are not available (the CEL standard library plus the
  ``strings``, ``math``, ``encoders``, ``optional`` and ``cel.bind`` extensions are).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_COST, COST_LIMIT_EXCEEDED, estimate_cost
from fakeapi.machinery.cel_device import API_LIMITS, DeviceSizes
from fakeapi.machinery.cel_messages import engine_message, runtime_message
from fakeapi.machinery.cel_messages import type_name as cel_type_name
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
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\Z"
)
_LOOSE_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\Z")


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

    __slots__ = ("data", "domains", "sizes", "within_limits")

    def __init__(self, data: dict[str, Any], domains: frozenset[str], sizes: DeviceSizes) -> None:
        self.data = data
        self.domains = domains
        self.sizes = sizes  # bounds the cost of evaluating a selector on this device
        self.within_limits = API_LIMITS.covers(sizes)


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
    longest_domain = longest_id = longest_value = longest_quantity = 0  # they bound a selector's cost
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = _attribute_value(attr)
        except ValueError as err:
            raise CelError(f"attribute {name}: {err}") from err
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = value
        longest_domain, longest_id = max(longest_domain, len(domain)), max(longest_id, len(ident))
        text = attr.get("string", attr.get("version"))  # what upstream's size() counts
        if isinstance(text, str):
            longest_value = max(longest_value, len(text))
    capacity: dict[str, dict[str, bytes]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split(name, driver)
        try:
            encoded = capacity.setdefault(domain, {})[ident] = _quantity(str(cap.get("value", "0")))
        except ValueError as err:
            raise CelError(f"capacity {name}: {err}") from err
        longest_domain, longest_id = max(longest_domain, len(domain)), max(longest_id, len(ident))
        longest_quantity = max(longest_quantity, len(encoded))
    data = {
        "driver": driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
    }
    sizes = DeviceSizes(
        driver=len(driver),
        domains=max(len(attributes), len(capacity)),
        entries=max(map(len, (*attributes.values(), *capacity.values())), default=0),
        domain=longest_domain,
        id=longest_id,
        value=longest_value,
        quantity=longest_quantity,
    )
    return DeviceEnv(data, frozenset(attributes) & frozenset(capacity), sizes)


# ---------------------------------------------------------------------------------------------
# Compilation and evaluation

_STRING_LITERAL = re.compile(r"""(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')""")


# About 4 ms of evaluation at the ~0.4 µs per cost unit measured for callback-heavy selectors.
_PROBE_MAX_COST = 10_000


class CompiledSelector:
    """A compiled selector expression; evaluate it against :func:`device_env` values.

    ``max_cost`` is the estimated worst-case cost on any device within upstream's API limits.
    """

    __slots__ = ("_costs", "_literals", "_longest_literal", "_program", "expression", "max_cost")

    def __init__(self, expression: str, program: cel.Expression, literals: frozenset[str]) -> None:
        self.expression = expression
        self._program = program
        self._literals = literals
        self._longest_literal = max(map(len, literals), default=0)
        self.max_cost = estimate_cost(program.serialize())
        self._costs: dict[DeviceSizes, int] = {}

    def cost(self, sizes: DeviceSizes) -> int:
        """The estimated worst-case cost on a device whose sizes are within ``sizes``."""
        if sizes == API_LIMITS:
            return self.max_cost
        cost = self._costs.get(sizes)
        if cost is None:
            if len(self._costs) >= 64:  # one entry per device shape seen; keep it small
                self._costs.clear()
            cost = self._costs[sizes] = estimate_cost(self._program.serialize(), sizes)
        return cost

    def _run(self, data: dict[str, Any], sizes: DeviceSizes | None) -> cel.Value:
        """Evaluate unless the worst case on input of these sizes exceeds the runtime budget
        (None: the input is known to be affordable)."""
        if sizes is not None and self.cost(sizes) > CEL_SELECTOR_EXPRESSION_MAX_COST:
            raise CelError(COST_LIMIT_EXCEEDED)
        try:
            return self._program.eval(data={"device": data})
        except RuntimeError as err:  # an engine status rather than a CEL error value
            raise CelError(runtime_message(str(err))) from None

    def _reject_non_bool(self) -> None:
        """Catch what upstream's typed ``device`` rejects at compile time (``device.driver``).

        ``device`` is untyped here, so the result type is only known by evaluating: a probe
        device with no attributes gives a value for expressions that do not depend on them; a
        non-bool value is a compile error.  Expressions that fail on the probe, or cost more
        than a few milliseconds to run (admission runs in the server's event loop), stay for
        runtime to judge.
        """
        empty: dict[str, dict[str, Any]] = {domain: {} for domain in self._literals}
        probe = {"driver": "", "attributes": empty, "capacity": dict(empty), "allowMultipleAllocations": False}
        sizes = DeviceSizes(driver=0, domains=len(empty), entries=0, domain=self._longest_literal, id=0, value=0,
                            quantity=0)
        if (self.max_cost if API_LIMITS.covers(sizes) else self.cost(sizes)) > _PROBE_MAX_COST:
            return
        try:
            result = self._run(probe, None)
        except CelError:
            return
        type_name = result.type().name()
        if type_name not in ("BOOL", "ERROR"):
            raise CelError(f"must evaluate to bool or the unknown type, not {cel_type_name(type_name)}")

    def evaluate(self, env: DeviceEnv) -> bool:
        """True/False for the device; CelError for runtime errors and non-bool results."""
        data, sizes = env.data, env.sizes
        # Within the API limits the admission estimate holds; otherwise estimate for this device.
        affordable = env.within_limits and self.max_cost <= CEL_SELECTOR_EXPRESSION_MAX_COST
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
            domains = sizes.domains + len(missing)
            affordable = affordable and domains <= API_LIMITS.domains and self._longest_literal <= API_LIMITS.domain
            if not affordable:
                sizes = sizes.grown(domains=domains, domain=self._longest_literal)
        result = self._run(data, None if affordable else sizes)
        value = result.value()
        if isinstance(value, bool):
            return value
        type_name = result.type().name()
        if type_name == "ERROR":
            raise CelError(runtime_message(str(value)))
        raise CelError(f"CEL result of type {type_name.lower()} could not be converted to bool")


@lru_cache(maxsize=1024)
def compile_selector(expression: str) -> CompiledSelector:
    """Compile a device selector; raise CelError("compilation failed: ...") like upstream.

    Results are cached by expression text, so callers need no cache of their own.
    """
    try:
        program = _env().compile(expression)
    except RuntimeError as err:
        raise CelError(f"compilation failed: {engine_message(err)}") from None
    _reject_unknown_device_fields(expression)
    out = program.return_type().name()
    if out not in ("BOOL", "DYN"):
        raise CelError(f"must evaluate to bool or the unknown type, not {cel_type_name(out)}")
    literals = frozenset(a or b for a, b in _STRING_LITERAL.findall(expression))
    selector = CompiledSelector(expression, program, literals)
    if out == "DYN":
        selector._reject_non_bool()
    return selector


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
