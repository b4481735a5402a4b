"""The CEL adapter (``fakeapi.machinery.cel``): environment, Kubernetes quantity/semver functions,
missing-data semantics and errors."""

from __future__ import annotations

import pytest

from fakeapi.machinery.cel import CelError, compile_selector, device_env

DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"},
        "index": {"int": 3},
        "ready": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
        "other.example.com/numa": {"int": 1},
    },
    "capacity": {"memory": {"value": "40Gi"}},
    "allowMultipleAllocations": True,
}


def evaluate(expression: str) -> bool:
    return compile_selector(expression).evaluate(device_env("gpu.example.com", DEVICE))


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].index > 2', True),
        ('device.attributes["gpu.example.com"].ready', True),
        ('device.attributes["other.example.com"].numa == 1', True),
        ("device.allowMultipleAllocations", True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) > 0', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))', False),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("41Gi"))', True),
        ('device.capacity["gpu.example.com"].memory == quantity("42949672960")', True),
        ('quantity("1.5").add(quantity("500m")) == quantity("2")', True),
        ('quantity("2").sub(1).asInteger() == 1', True),
        ('quantity("500m").isInteger()', False),
        ('quantity("-3").sign() == -1', True),
        ('isQuantity("1Gi") && !isQuantity("abc")', True),
        ('device.attributes["gpu.example.com"].driverVersion.major() == 1', True),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3-rc.1"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.10.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3+build.5")', True),
        ('semver("v1.2", true).compareTo(semver("1.2.0")) == 0', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1"))', True),
        ('semver("1.0.0-2").isLessThan(semver("1.0.0-10"))', True),
        ('isSemver("1.2.3") && !isSemver("1.2")', True),
        ('device.attributes["unknown.example.com"].size() == 0', True),
        ('"x" in device.capacity["unknown.example.com"]', False),
        ('cel.bind(a, device.attributes["gpu.example.com"], a.model == "a100" && a.index == 3)', True),
        ('device.attributes["gpu.example.com"].model.startsWith("a1")', True),
        ('has(device.attributes["gpu.example.com"].missing) || true', True),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_evaluate(expression: str, expected: bool) -> None:
    assert evaluate(expression) is expected


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ('device.attributes["gpu.example.com"].missing == 1', "no such key: missing"),
        ('quantity("abc") == quantity("1")', "quantities must match"),
        ('device.attributes["gpu.example.com"].model', "could not be converted to bool"),
        ('semver("1.0.0").compareTo(quantity("1")) == 0', "no such overload"),
    ],
    ids=["missing-key", "bad-quantity", "non-bool-dyn", "mixed-types"],
)
def test_runtime_errors(expression: str, fragment: str) -> None:
    with pytest.raises(CelError, match=fragment):
        evaluate(expression)


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [("noSuchVar", "undeclared reference to 'noSuchVar'"), ("1 +", "Syntax error"), ('"a"', "must evaluate to bool"),
     ("device.driver", "must evaluate to bool or the unknown type, not string"),
     ("device.foo == 1", "undefined field 'foo'"), ('device.driver == "device.foo"', None)],
    ids=["undeclared", "syntax", "non-bool", "non-bool-device-field", "unknown-device-field", "field-in-string"],
)
def test_compile_errors(expression: str, fragment: str | None) -> None:
    if fragment is None:
        compile_selector(expression)  # text inside string literals is not a field selection
        return
    with pytest.raises(CelError, match=fragment) as err:
        compile_selector(expression)
    assert str(err.value).startswith(("compilation failed: ", "must evaluate to bool"))
    assert "parsetree" not in str(err.value)


def test_compiled_programs_are_cached() -> None:
    assert compile_selector("true") is compile_selector("true")


def test_unsupported_attribute_value_is_an_error() -> None:
    with pytest.raises(CelError, match="attribute list: unsupported attribute value"):
        device_env("d", {"name": "x", "attributes": {"list": {"ints": [1]}}})
