"""A response's Warning header is bounded as upstream's warning recorder bounds it."""

from __future__ import annotations

from fakeapi.server.handlers import WARNING_ITEM_RUNES, WARNINGS_TOTAL_RUNES, bounded_warnings


def test_warnings_within_the_budget_are_kept_whole_and_once() -> None:
    assert bounded_warnings(["a", "", "b", "a"]) == ["a", "b"]
    whole = ["x" * 1024] * 1 + ["y" * 1024, "z" * 1024, "w" * 1024]
    assert bounded_warnings(whole) == whole  # exactly 4 Ki runes


def test_past_the_budget_every_warning_is_cut_and_the_rest_dropped() -> None:
    warnings = [f"{i:03d}" + "é" * 997 for i in range(40)]  # 1,000 runes each (more bytes)
    kept = bounded_warnings(warnings)
    # The fifth overflows: it and the four before are cut to 256 runes; then more are added,
    # each cut, until 4 Ki runes are written (16 x 256), the one that reaches it included.
    assert kept == [w[:WARNING_ITEM_RUNES] for w in warnings[:16]]
    assert sum(map(len, kept)) == WARNINGS_TOTAL_RUNES
