"""Small timing helpers shared by the benchmarks: repetition, percentiles, markdown output.

Pure functions (no I/O besides reading the machine description), so any benchmark script can
import them and the unit tests can check them without a server.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections.abc import Awaitable, Callable, Sequence


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``samples``, linearly interpolated between ranks.

    Interpolation (numpy's default) keeps p99 meaningful for a few hundred samples, where
    nearest-rank would just return the maximum.
    """
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} outside 0..100")
    ordered = sorted(samples)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


async def median_of(runs: int, measure: Callable[[], Awaitable[float]]) -> tuple[float, list[float]]:
    """Await ``measure()`` ``runs`` times in sequence; return the median and every value."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    values = [await measure() for _ in range(runs)]
    return statistics.median(values), values


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; numbers are right-aligned, everything else left-aligned."""
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|")

    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}: {row!r}")
    numeric = [bool(rows) and all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_description() -> str:
    """One line naming the machine a figure was measured on: CPUs, Python, OS, date."""
    today = datetime.date.today().isoformat()
    return (f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}, {today}")
