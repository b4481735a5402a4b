"""The CEL cost estimator (``fakeapi.machinery.cel_cost``): upstream's costs for ordinary
selectors, bounds on everything that can grow, device sizes, and bounded estimation time."""

from __future__ import annotations

import time

import pytest

from fakeapi.machinery.cel import compile_selector
from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_COST, CEL_SELECTOR_EXPRESSION_MAX_LENGTH, MAX
from fakeapi.machinery.cel_device import API_LIMITS, DeviceSizes
from tests.unit.machinery.cel_inputs import ADMISSION_FREEZE, SCHEDULING_BLOWUP

LIMIT = CEL_SELECTOR_EXPRESSION_MAX_COST
ALL_TYPES = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""


def cost(expression: str, sizes: DeviceSizes = API_LIMITS) -> int:
    return compile_selector(expression).cost(sizes)


# Upstream's expected costs, dynamic-resource-allocation/cel/compile_test.go.
@pytest.mark.parametrize(("expression", "expected"), [
    ("true", 0),
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ('"no-such-domain" in device.attributes', 3),
    ('device.driver == ""', 2),
    ('device.driver == "dra.example.com"', 4),
    ('device.attributes["dra.example.com"].name', 4),
    ('device.attributes["dra.example.com"]["name"]', 4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('device.attributes["dra.example.com"].name > 0', 5),
    ('device.attributes["dra.example.com"].name == "fish"', 5),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', 6),
    ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ('"name" in device.capacity["dra.example.com"] && '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ('!("name" in device.capacity["dra.example.com"]) || '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    (ALL_TYPES, 52),
    ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
     'device.attributes["dra.example.com"].c', 12),
], ids=lambda v: v.strip()[:60] if isinstance(v, str) else None)
def test_upstream_costs(expression: str, expected: int) -> None:
    assert cost(expression) == expected


L10 = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
LIST_100 = "[" + ",".join(["1"] * 100) + "]"


@pytest.mark.parametrize("expression", [
    # pkg/apis/resource/validation's "CEL-cost" case: 10^7 iterations.
    "".join(f"{L10}.all(x{i}, " for i in range(7)) + "true" + ")" * 7,
    SCHEDULING_BLOWUP,
    ADMISSION_FREEZE,
    # Upstream charges replace for its input only; the 16.7M characters built here count too.
    'cel.bind(a, "aaaaaaaa", cel.bind(b, a.replace("a", a), cel.bind(c, b.replace("a", b), '
    'cel.bind(d, c.replace("a", c), d.size() > 0))))',
    # format() doubles a string per bind; upstream gives it no size at all.
    'cel.bind(a, "' + "x" * 100 + '", ' + "".join(f'cel.bind(a{i}, "%s%s".format([a{i - 1 if i else ""}, '
                                                  f'a{i - 1 if i else ""}]), ' for i in range(20))
    + "a19.size() > 0" + ")" * 21,
    # base64.encode costs 1 upstream, whatever it encodes (90,000 bytes, 100 times).
    f'cel.bind(b, bytes("{"a" * 300}".replace("a", "{"a" * 300}")), {LIST_100}.all(i, base64.encode(b) != ""))',
    # List concatenation is O(1) upstream; cel-cpp copies (2^25 elements).
    f"cel.bind(a, {LIST_100}, " + "".join(f"cel.bind(a{i}, a{i - 1 if i else ''} + a{i - 1 if i else ''}, "
                                          for i in range(25)) + "a24.size() > 0" + ")" * 26,
    # map() copies its accumulator every step in cel-cpp: quadratic.
    "[" + ",".join(["1"] * 2000) + "].map(x, x).size() > 0",
    # Equality of a value that shares one sublist 2^25 times walks all of it.
    "cel.bind(a, [1, 1], " + "".join(f"cel.bind(a{i}, [a{i - 1 if i else ''}, a{i - 1 if i else ''}], "
                                     for i in range(25)) + "a24 == a24" + ")" * 26,
    # A string of 10^6 characters compared against 1000 elements.
    f'cel.bind(s, "{"a" * 1000}".replace("a", "{"b" * 1000}"), '
    f'cel.bind(l, [s, s, s, s, s, s, s, s, s, s], {LIST_100}.all(i, s in l)))',
], ids=["upstream-CEL-cost", "reported-181", "reported-416", "replace-result", "format-doubling",
        "base64-growth", "list-doubling", "map-quadratic", "deep-equality", "long-in"])
def test_too_expensive(expression: str) -> None:
    assert len(expression) <= CEL_SELECTOR_EXPRESSION_MAX_LENGTH
    assert cost(expression) > LIMIT


@pytest.mark.parametrize(("expression", "at_most"), [
    ('device.attributes["gpu.example.com"].model in ["a100", "h100", "b200"]', 20),
    ('device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', 30),
    ('device.attributes["gpu.example.com"].model.lowerAscii().startsWith("a1")', 20),
    ('device.attributes["x"].tags.split(",").join("-") == "a-b"', 1000),
    ('"%s-%d".format(["a", 1]) == "a-1"', 500),
    ('base64.encode(b"abc") == "YWJj"', 10),
    ('device.attributes["x"].?model.orValue("none") == "none"', 20),
    ('strings.quote(device.driver) == "x"', 20),
    ('device.attributes["x"].exists_one(k, k == "a")', 500),
    ('device.attributes.all(d, device.attributes[d].all(k, k.size() < 100))', 10_000),
    ('["a", "b"].join(",") == "a,b"', 100),
    (f"{LIST_100}.map(x, x * 2).size() == 100", 20_000),
    ('dyn(device.driver) == "x" && string(device.attributes["x"].i) == "3"', 30),
], ids=lambda v: v[:50] if isinstance(v, str) else None)
def test_ordinary_selectors_are_cheap(expression: str, at_most: int) -> None:
    assert 0 < cost(expression) <= at_most


def test_unknown_sizes_make_unknown_costs() -> None:
    # A comprehension over a list whose size nothing bounds (a format() of a non-literal list).
    assert cost('cel.bind(l, device.attributes["x"].list, "%s".format(l).split("").all(c, c != "x"))') == MAX


def test_device_sizes_bound_the_cost() -> None:
    nested = 'device.attributes["d"].all(a, device.attributes["d"].all(b, a + b != ""))'
    within = cost(nested)
    assert within < LIMIT
    assert cost(nested, API_LIMITS.grown(entries=1000)) > LIMIT  # upstream's "expensive" device
    assert cost(nested, DeviceSizes(driver=10, domains=1, entries=4, domain=10, id=5, value=5, quantity=5)) < within
    assert API_LIMITS.covers(DeviceSizes(entries=3)) and not API_LIMITS.covers(API_LIMITS.grown(value=65))


def test_max_length_expression_is_estimated_quickly() -> None:
    unit = "[1].all(x, x > 0)"  # the densest AST per character found
    expression = " && ".join([unit] * (CEL_SELECTOR_EXPRESSION_MAX_LENGTH // (len(unit) + 4)))
    start = time.perf_counter()
    selector = compile_selector(expression)
    elapsed = time.perf_counter() - start
    assert selector.max_cost < LIMIT
    assert elapsed < 1.0, f"compiling and estimating took {elapsed:.2f}s"  # ~50 ms measured
