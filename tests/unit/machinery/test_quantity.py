"""resource.Quantity: parsing, exact comparison, canonical formatting and upstream errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fakeapi.machinery.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    QuantityError,
    canonicalize_quantity,
    format_quantity,
    parse_quantity,
    parse_quantity_with_format,
    quantity_milli,
)

F = Fraction

# (text, exact value, format the suffix implies)
PARSED = [
    ("0", F(0), DECIMAL_SI),
    ("1", F(1), DECIMAL_SI),
    ("+1", F(1), DECIMAL_SI),
    ("-1", F(-1), DECIMAL_SI),
    ("007", F(7), DECIMAL_SI),
    ("0.5", F(1, 2), DECIMAL_SI),
    (".5", F(1, 2), DECIMAL_SI),
    ("5.", F(5), DECIMAL_SI),
    ("1n", F(1, 10**9), DECIMAL_SI),
    ("1u", F(1, 10**6), DECIMAL_SI),
    ("1m", F(1, 1000), DECIMAL_SI),
    ("1k", F(1000), DECIMAL_SI),
    ("1M", F(10**6), DECIMAL_SI),
    ("1G", F(10**9), DECIMAL_SI),
    ("1T", F(10**12), DECIMAL_SI),
    ("1P", F(10**15), DECIMAL_SI),
    ("1E", F(10**18), DECIMAL_SI),
    ("1Ki", F(2**10), BINARY_SI),
    ("1Mi", F(2**20), BINARY_SI),
    ("1Gi", F(2**30), BINARY_SI),
    ("1Ti", F(2**40), BINARY_SI),
    ("1Pi", F(2**50), BINARY_SI),
    ("1Ei", F(2**60), BINARY_SI),
    ("1.5Gi", F(3 * 2**29), BINARY_SI),
    ("0.5Ki", F(512), BINARY_SI),
    ("0.0001Ki", F(1024, 10**4), DECIMAL_SI),  # binary below one is decimal, as upstream
    ("8Ei", F(2**63 - 1), BINARY_SI),  # binary quantities are capped at int64
    ("1e3", F(1000), DECIMAL_EXPONENT),
    ("1E3", F(1000), DECIMAL_EXPONENT),
    ("1e+3", F(1000), DECIMAL_EXPONENT),
    ("1e-3", F(1, 1000), DECIMAL_EXPONENT),
    ("1.5e3", F(1500), DECIMAL_EXPONENT),
    ("0.1n", F(1, 10**9), DECIMAL_SI),  # rounded up to a whole nano-unit
    ("-0.1n", F(-1, 10**9), DECIMAL_SI),  # away from zero
    ("1.0000000001", F(1_000_000_001, 10**9), DECIMAL_SI),
    ("-", F(0), DECIMAL_SI),  # upstream's scanner accepts a lone sign or dot as zero
    (".", F(0), DECIMAL_SI),
    (3, F(3), DECIMAL_SI),
    (1.5, F(3, 2), DECIMAL_SI),
    (0.1, F(1, 10), DECIMAL_SI),
    (1e16, F(10**16), DECIMAL_EXPONENT),
]


@pytest.mark.parametrize(("text", "value", "fmt"), PARSED, ids=[repr(p[0]) for p in PARSED])
def test_parse_quantity(text, value, fmt):
    assert parse_quantity_with_format(text) == (value, fmt)
    assert parse_quantity(text) == value


# (left, relation, right): exact comparisons across suffix families.
COMPARISONS = [
    ("1Gi", ">", "1G"),
    ("0.5", "==", "500m"),
    ("1e3", "==", "1k"),
    ("1Ki", "==", "1024"),
    ("1024Mi", "==", "1Gi"),
    ("1000M", "==", "1G"),
    ("1m", "==", "1000u"),
    ("1u", "==", "1000n"),
    ("999m", "<", "1"),
    ("1Mi", ">", "1M"),
    ("-1", "<", "0"),
    ("100m", "==", "0.1"),
]


@pytest.mark.parametrize(("left", "relation", "right"), COMPARISONS, ids=[" ".join(c) for c in COMPARISONS])
def test_quantities_compare_exactly(left, relation, right):
    a, b = parse_quantity(left), parse_quantity(right)
    assert {"<": a < b, ">": a > b, "==": a == b}[relation]


# (input, what the API server would store)
CANONICAL = [
    ("0", "0"),
    ("0Gi", "0"),
    ("1.5", "1500m"),
    ("0.5", "500m"),
    ("100m", "100m"),
    ("1000", "1k"),
    ("1500", "1500"),
    ("1.5k", "1500"),
    ("2000m", "2"),
    ("1G", "1G"),
    ("1000E", "1000E"),  # nothing beyond exa: digits stay in the mantissa
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1025Mi", "1025Mi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Ki", "512"),
    ("1536", "1536"),
    ("8Ei", "9223372036854775807"),
    ("-1Ki", "-1Ki"),
    ("-500m", "-500m"),
    ("+1k", "1k"),
    ("1e3", "1e3"),
    ("12e6", "12e6"),
    ("1.5e3", "1500"),
    ("1e-3", "1e-3"),
    ("1e16", "10e15"),
    ("0.1n", "1n"),
    ("1.0000000001", "1000000001n"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_form(text, canonical):
    assert canonicalize_quantity(text) == canonical
    # The canonical form parses back to the same value and prints the same way.
    assert parse_quantity(canonical) == parse_quantity(text)
    assert canonicalize_quantity(canonical) == canonical


# (value, format, text)
FORMATTED = [
    (F(3, 2), DECIMAL_SI, "1500m"),
    (F(3, 2), DECIMAL_EXPONENT, "1500e-3"),
    (F(3, 2), BINARY_SI, "1500m"),
    (F(2048), BINARY_SI, "2Ki"),
    (F(2048), DECIMAL_SI, "2048"),
    (F(2049, 2), BINARY_SI, "1024500m"),
    (F(1, 3), DECIMAL_SI, "333333334n"),
    (F(-1, 3), DECIMAL_SI, "-333333334n"),
    (F(2**70), BINARY_SI, "1024Ei"),
    (5000, DECIMAL_SI, "5k"),
    (0, BINARY_SI, "0"),
]


@pytest.mark.parametrize(("value", "fmt", "text"), FORMATTED, ids=[f"{v}-{f}" for v, f, _ in FORMATTED])
def test_format_quantity(value, fmt, text):
    assert format_quantity(value, fmt) == text


def test_format_quantity_rejects_unknown_format():
    with pytest.raises(ValueError, match="unknown quantity format"):
        format_quantity(F(1), "Octal")


FORMAT_WRONG = ("quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
SUFFIX_WRONG = "unable to parse quantity's suffix"

INVALID = [
    ("", FORMAT_WRONG),
    (" 1", FORMAT_WRONG),
    ("1 ", FORMAT_WRONG),
    ("1 Gi", FORMAT_WRONG),
    ("1.1.M", FORMAT_WRONG),
    ("1+1.0M", FORMAT_WRONG),
    ("0.1am", FORMAT_WRONG),
    ("aoeu", FORMAT_WRONG),
    ("0x10", FORMAT_WRONG),
    ("1e3Ki", FORMAT_WRONG),
    ("1KI", FORMAT_WRONG),
    ("0.1mi", SUFFIX_WRONG),
    (".5i", SUFFIX_WRONG),
    ("1i", SUFFIX_WRONG),
    ("-3.01i", SUFFIX_WRONG),
    ("-3.01e-", SUFFIX_WRONG),
    ("1e", SUFFIX_WRONG),
    ("1K", SUFFIX_WRONG),
    ("1mm", SUFFIX_WRONG),
    ("1Gi1", SUFFIX_WRONG),
    (float("nan"), FORMAT_WRONG),
    (float("inf"), FORMAT_WRONG),
    (True, FORMAT_WRONG),
    ("1e1001", "quantity exponent 1001 is out of the supported range"),
]


@pytest.mark.parametrize(("text", "message"), INVALID, ids=[repr(t) for t, _ in INVALID])
def test_invalid_quantity(text, message):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == message


MILLI = [
    ("1", 1000),
    ("0.5", 500),
    ("100m", 100),
    ("1.0001", 1001),  # rounded up
    ("1n", 1),
    ("-1n", -1),  # away from zero, as upstream MilliValue
    ("2Ki", 2_048_000),
    (F(1, 3), 334),
    (0, 0),
]


@pytest.mark.parametrize(("value", "milli"), MILLI, ids=[repr(v) for v, _ in MILLI])
def test_quantity_milli(value, milli):
    assert quantity_milli(value) == milli
