"""The scaling benchmark's pure parts: the plotted series and the table."""

from __future__ import annotations

import pytest

from bench.bench_scaling import PLOT, Point, report, series, table
from bench.common import BENCHMARKS_MD


def point(nodes: int, devices: int, rate: float, latencies: list[float]) -> Point:
    return Point(nodes=nodes, devices=devices, pods=10, setup_s=1.0, background_cpu_percent=3.0, pods_per_s=rate,
                 latencies_ms=latencies,
                 server_cpu_ms_per_pod=2.0, control_plane_cpu_ms_per_pod=3.0,
                 server_kib_per_pod=100.0 + nodes, control_plane_kib_per_pod=50.0)


# Given out of order on purpose: lines come out per devices-per-node, each in node order.
POINTS = [point(500, 8, 90.0, [4.0, 6.0]), point(100, 32, 80.0, [1.0, 3.0]), point(100, 8, 100.0, [2.0, 2.0])]


@pytest.mark.parametrize(("value", "expected"), [
    ("pods_per_s", {8: ([100, 500], [100.0, 90.0]), 32: ([100], [80.0])}),
    ("p50", {8: ([100, 500], [2.0, 5.0]), 32: ([100], [2.0])}),
    ("p99", {8: ([100, 500], [2.0, pytest.approx(5.98)]), 32: ([100], [pytest.approx(2.98)])}),
    ("server_kib_per_pod", {8: ([100, 500], [200.0, 600.0]), 32: ([100], [200.0])}),
], ids=["field", "p50", "p99", "memory"])
def test_series_one_line_per_devices_in_node_order(value: str, expected: dict) -> None:
    assert series(POINTS, value) == expected


def test_table_has_a_row_per_point_in_the_given_order() -> None:
    lines = table(POINTS).splitlines()
    assert lines[0].startswith("| nodes | devices/node | pods | pods/s | server CPU ms/pod |")
    assert [line.split(" | ")[:2] for line in lines[2:]] == [["| 500", "8"], ["| 100", "32"], ["| 100", "8"]]


def test_report_links_the_plot_relative_to_benchmarks_md() -> None:
    link = report(POINTS, "python bench/bench_scaling.py", 10, 2, image=True).rsplit("](", 1)[1].rstrip(")")
    assert BENCHMARKS_MD.parent / link == PLOT
    assert "](" not in report(POINTS, "python bench/bench_scaling.py --quick", 10, 2, image=False)
