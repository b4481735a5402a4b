"""``resource.Quantity`` with exact arithmetic: values are :class:`fractions.Fraction`.

Parsing follows ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (its hand-written scanner,
not the looser regular expression it quotes in errors): an optional sign, digits with an optional
``.``, then a suffix — binary ``Ki Mi Gi Ti Pi Ei``, decimal ``n u m "" k M G T P E`` or an
exponent ``e3``/``E-2``.  Like upstream, magnitudes are rounded *up* to whole nano-units (a request
for a tiny amount still asks for something) and binary quantities are capped at 2^63-1.

Formatting gives upstream's canonical form: no fractional digits, the largest suffix that loses
nothing (``1.5`` -> ``1500m``, ``1.5Gi`` -> ``1536Mi``, ``2000`` -> ``2k``).  A quantity keeps the
format of the suffix it was written with, which :func:`canonicalize_quantity` reproduces.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
_SUFFIX_WRONG = "unable to parse quantity's suffix"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {power // 10: suffix for suffix, power in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_EXPONENT_RE = re.compile("[+-]?[0-9]+")  # what Go's strconv.ParseInt accepts

_NANO = 10**9
_MAX_BINARY = 2**63 - 1
# Upstream keeps huge exponents symbolically; exact fractions cannot, so refuse absurd ones.
_MAX_EXPONENT = 1000


class QuantityError(ValueError):
    """Text that is not a quantity; ``str(e)`` is upstream's message."""


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Split ``text`` into (positive, integer digits, fraction digits, suffix) like upstream."""
    end = len(text)
    pos = 1 if text[:1] in ("+", "-") else 0
    positive = text[:1] != "-"
    while pos < end and text[pos] == "0":
        pos += 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(_FORMAT_WRONG)
    return positive, whole, fraction, text[suffix_start:]


def _interpret_suffix(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) for a suffix."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if suffix[:1] in ("e", "E") and _EXPONENT_RE.fullmatch(suffix[1:]):
        value = int(suffix[1:])
        if abs(value) > _MAX_EXPONENT:
            raise QuantityError(f"quantity exponent {value} is out of the supported range")
        return 10, value, DECIMAL_EXPONENT
    raise QuantityError(_SUFFIX_WRONG)


def _round_up_to_nano(value: Fraction) -> Fraction:
    # Away from zero, as upstream's inf.RoundUp on the magnitude.
    scaled = abs(value) * _NANO
    if scaled.denominator == 1:
        return value
    magnitude = Fraction(math.ceil(scaled), _NANO)
    return magnitude if value > 0 else -magnitude


@lru_cache(maxsize=4096, typed=True)  # the same few strings recur across devices and pods
def parse_quantity_with_format(text: str | int | float) -> tuple[Fraction, str]:
    """Parse a quantity and return (value, format the suffix implies).

    ``int``/``float`` are read as a JSON number would be.  Raises :class:`QuantityError`.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise QuantityError(_FORMAT_WRONG)
    if not isinstance(text, str):
        text = repr(text)
    if not text:
        raise QuantityError(_FORMAT_WRONG)
    positive, whole, fraction, suffix = _scan(text)
    base, exponent, fmt = _interpret_suffix(suffix)
    value = Fraction(int(whole + fraction or "0"), 10 ** len(fraction)) * Fraction(base) ** exponent
    value = _round_up_to_nano(value)
    if fmt == BINARY_SI:
        value = min(value, Fraction(_MAX_BINARY))
        if 0 < value < 1:
            fmt = DECIMAL_SI
    return (value if positive else -value), fmt


def parse_quantity(text: str | int | float) -> Fraction:
    """Parse a quantity (``"1Gi"``, ``"500m"``, ``"1e3"``, ``2``) into its exact value."""
    return parse_quantity_with_format(text)[0]


def _decimal_parts(magnitude: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with an integer mantissa and the largest exponent divisible by 3."""
    mantissa, exponent = int(magnitude * _NANO), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def format_quantity(value: Fraction | int, fmt: str = DECIMAL_SI) -> str:
    """Canonical string of ``value`` in ``fmt`` (``DecimalSI``, ``BinarySI``, ``DecimalExponent``).

    Values finer than a nano-unit are rounded up first.  BinarySI falls back to DecimalSI for
    magnitudes below 1024 or with fractions, as upstream does.
    """
    if fmt not in (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT):
        raise ValueError(f"unknown quantity format {fmt!r}")
    value = _round_up_to_nano(Fraction(value))
    if value == 0:
        return "0"
    sign, magnitude = ("-" if value < 0 else ""), abs(value)
    if fmt == BINARY_SI and magnitude >= 1024 and magnitude.denominator == 1:
        number, power = int(magnitude), 0
        while number % 1024 == 0 and power < max(_BINARY_BY_POWER):
            number //= 1024
            power += 1
        return f"{sign}{number}{_BINARY_BY_POWER.get(power, '')}"
    mantissa, exponent = _decimal_parts(magnitude)
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    # Beyond exa there is no suffix: keep the digits in the mantissa (upstream drops the suffix).
    top = max(_DECIMAL_BY_EXPONENT)
    if exponent > top:
        mantissa, exponent = mantissa * 10 ** (exponent - top), top
    return f"{sign}{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


def canonicalize_quantity(text: str | int | float) -> str:
    """Re-emit a quantity the way the API server stores it (``"1.5Gi"`` -> ``"1536Mi"``)."""
    return format_quantity(*parse_quantity_with_format(text))


def quantity_milli(text: str | int | float | Fraction) -> int:
    """The value in milli-units, rounded away from zero (upstream ``MilliValue``), e.g. CPU."""
    value = text if isinstance(text, Fraction) else parse_quantity(text)
    scaled = value * 1000
    magnitude = math.ceil(abs(scaled))
    return magnitude if scaled >= 0 else -magnitude
