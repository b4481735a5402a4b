"""How deep a JSON value nests, counted without recursion and capped past a limit."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from fakeapi.machinery.jsonlimits import may_nest_too_deep, nesting_depth, too_deep


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


DEPTHS = [
    # (id, value, limit, depth reported)
    ("scalar", 5, 10, 0),
    ("empty-object", {}, 10, 1),
    ("object-in-array", [{"a": 1}], 10, 2),
    ("deepest-branch-counts", {"a": 1, "b": {"c": [[]]}, "d": []}, 10, 4),
    ("at-the-limit", nested(10), 10, 10),
    ("past-the-limit-stops-counting", nested(50), 10, 11),
    ("deeper-than-the-stack", nested(100_000), 100, 101),
]


@pytest.mark.parametrize(("value", "limit", "depth"), [c[1:] for c in DEPTHS], ids=[c[0] for c in DEPTHS])
def test_nesting_depth(value: Any, limit: int, depth: int) -> None:
    assert nesting_depth(value, limit) == depth
    assert too_deep(value, limit) is (depth > limit)


BRACKETS = [
    # (id, JSON text, limit, may nest too deep): the byte count is a bound, never an undercount
    ("flat-object", b'{"a": 1, "b": "x"}', 1, False),
    ("nested-at-the-limit", b'[[["x"]]]', 3, False),
    ("nested-past-the-limit", b'[[[["x"]]]]', 3, True),
    ("wide-but-shallow-overcounts", b'[{}, {}, {}, {}]', 3, True),
    ("brackets-in-strings-overcount", b'{"a": "{{[["}', 3, True),
]


@pytest.mark.parametrize(("raw", "limit", "expected"), [c[1:] for c in BRACKETS], ids=[c[0] for c in BRACKETS])
def test_may_nest_too_deep(raw: bytes, limit: int, expected: bool) -> None:
    assert may_nest_too_deep(raw, limit) is expected
    if not expected:  # the bound is safe: nothing it lets pass is too deep
        assert not too_deep(orjson.loads(raw), limit)
