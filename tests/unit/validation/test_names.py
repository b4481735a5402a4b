"""Format checks turned into field errors: remembered answers stay per checker and per path."""

from __future__ import annotations

import pytest

from fakeapi.validation import names

CHECKS = [
    # (id, value, checker, expected number of messages)
    ("valid-label-value", "bench", names.label_value, 0),
    ("same-value-other-checker", "Bench", names.dns1123_label, 1),
    ("same-value-label-value", "Bench", names.label_value, 0),
    ("invalid-subdomain", "Not_A_Subdomain", names.dns1123_subdomain, 1),
    ("prefixed-qualified-name", "example.com/app", names.qualified_name, 0),
    ("empty-prefix", "/app", names.qualified_name, 1),
]


@pytest.mark.parametrize(("value", "checker", "count"), [c[1:] for c in CHECKS], ids=[c[0] for c in CHECKS])
def test_check_twice_gives_the_checkers_own_answer_at_each_path(value: str, checker: names.Checker,
                                                                 count: int) -> None:
    first = names.check("spec.a", value, checker)
    second = names.check("spec.b", value, checker)  # answered from memory the second time
    assert [e.field for e in first] == ["spec.a"] * count
    assert [e.field for e in second] == ["spec.b"] * count
    assert [e.detail for e in first] == [e.detail for e in second] == checker(value)
