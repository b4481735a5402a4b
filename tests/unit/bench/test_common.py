"""The benchmarks' timing helpers: percentiles, repetition, markdown tables."""

from __future__ import annotations

import pytest

from bench.common import machine_description, markdown_table, median_of, percentile


@pytest.mark.parametrize(("samples", "q", "expected"), [
    ([5.0], 50, 5.0),
    ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
    ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
    ([4.0, 1.0, 3.0, 2.0], 50, 2.5),
    (list(range(101)), 99, 99.0),
    ([0.0, 10.0], 99, 9.9),
], ids=["single", "min", "max", "unsorted-median-interpolated", "exact-rank", "interpolated-p99"])
def test_percentile(samples: list[float], q: float, expected: float) -> None:
    assert percentile(samples, q) == pytest.approx(expected)


@pytest.mark.parametrize(("samples", "q"), [([], 50), ([1.0], -1), ([1.0], 101)],
                         ids=["empty", "below-0", "above-100"])
def test_percentile_rejects(samples: list[float], q: float) -> None:
    with pytest.raises(ValueError):
        percentile(samples, q)


async def test_median_of_runs_in_sequence() -> None:
    values = iter([3.0, 1.0, 2.0])

    async def measure() -> float:
        return next(values)

    assert await median_of(3, measure) == (2.0, [3.0, 1.0, 2.0])


def test_markdown_table_aligns_numbers_right_and_escapes_pipes() -> None:
    table = markdown_table(["load", "req/s"], [["a|b", 10], ["c", 2.5]])
    assert table.splitlines() == ["| load | req/s |", "|---|---:|", "| a\\|b | 10 |", "| c | 2.5 |"]


def test_markdown_table_rejects_ragged_rows() -> None:
    with pytest.raises(ValueError, match="expected 2"):
        markdown_table(["a", "b"], [[1]])


def test_machine_description_names_python_and_cpus() -> None:
    import platform

    text = machine_description()
    assert platform.python_version() in text and "CPUs" in text
