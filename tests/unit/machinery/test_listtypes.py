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


def test_lookups_are_remembered_per_table() -> None:
    # Answers are memoized per table: asking again, or asking another table the same path,
    # must give each table's own answer.
    first = ListTypes({("spec", "items"): ListSpec(MAP, ("name",))})
    second = ListTypes({("spec", "*", "items"): ListSpec(SET)})
    for _ in range(2):
        assert first.list_type(("spec", "items")) == (MAP, ("name",))
        assert second.list_type(("spec", "items")) == (ATOMIC, ())
        assert first.list_type(("spec", "x", "items")) == (ATOMIC, ())
        assert second.list_type(("spec", "x", "items")) == (SET, ())


def test_many_user_map_keys_still_answer() -> None:
    # Walked paths carry user map keys; past the memo's bound lookups are computed, not wrong.
    for i in range(5000):
        assert TABLE.list_type(("spec", "attributes", f"key-{i}", "values")) == (SET, ())
        assert TABLE.list_type(("spec", "other", f"key-{i}", "values")) == (ATOMIC, ())
