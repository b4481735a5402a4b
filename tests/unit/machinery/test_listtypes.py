"""The list table as a value: lookups by exact path and by ``*`` for map values."""

from __future__ import annotations

import pytest

from fakeapi.machinery.listtypes import ATOMIC, MAP, SET, ListSpec, ListTypes

TABLE = ListTypes({("spec", "attributes", "*", "values"): ListSpec(SET),
                   ("spec", "items"): ListSpec(MAP, ("name",), merge_key="name")})

LOOKUPS = [
    ("exact", ("spec", "items"), (MAP, ("name",)), "name"),
    ("map-value-wildcard", ("spec", "attributes", "model", "values"), (SET, ()), None),
    ("other-map", ("spec", "other", "model", "values"), (ATOMIC, ()), None),
    ("unknown-is-atomic", ("status", "items"), (ATOMIC, ()), None),
]


@pytest.mark.parametrize(("path", "list_type", "merge_key"), [c[1:] for c in LOOKUPS], ids=[c[0] for c in LOOKUPS])
def test_list_types_lookup(path: tuple[str, ...], list_type: tuple[str, tuple[str, ...]],
                           merge_key: str | None) -> None:
    assert TABLE.list_type(path) == list_type
    assert TABLE.merge_key(path) == merge_key
