"""Format checks turned into field errors: remembered answers stay per checker and per path."""

from __future__ import annotations

import pytest

from fakeapi.validation import names
from fakeapi.validation.strategy import Strategy

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


class _Label(Strategy):
    def validate_name(self, name: str) -> list[str]:
        return names.dns1123_label(name)


def test_strategies_name_checks_keep_their_own_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    # A strategy's checker is a new bound method on every access: equal ones share a memo, another
    # strategy's has its own, and a memo that filled up and forgot answers gives them again.
    monkeypatch.setattr(names, "CHECKED_PER_CHECKER", 3)
    monkeypatch.setattr(names, "_CHECKED", type(names._CHECKED)(256))
    subdomain, label = Strategy(), _Label()
    for round_ in range(3):
        for value in ("a.b", "a-b", "A", f"x{round_}", "a.b"):
            assert [e.detail for e in names.check("metadata.name", value, subdomain.validate_name)] == \
                names.dns1123_subdomain(value)
            assert [e.detail for e in names.check("metadata.name", value, label.validate_name)] == \
                names.dns1123_label(value)
    assert len(names._CHECKED) == 2
