"""The callgrind helpers: the caches valgrind simulates, read from sysfs, and counts that grow with
the work counted (a child that imports only bench.callgrind, as a counted child may)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.callgrind import callgrind_cache_counts, cpu_cache


def test_cpu_cache_reads_sysfs(tmp_path: Path) -> None:
    for index, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "64K"), (2, "Unified", "1M")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size), ("ways_of_associativity", 8),
                            ("coherency_line_size", 64)):
            (folder / name).write_text(f"{value}\n")
    assert cpu_cache(1, "Instruction", tmp_path) == "65536,8,64"
    assert cpu_cache(2, "Unified", tmp_path) == "1048576,8,64"
    with pytest.raises(SystemExit, match="no level 3 Unified"):
        cpu_cache(3, "Unified", tmp_path)


@pytest.mark.skipif(shutil.which("valgrind") is None or not Path("/sys/devices/system/cpu/cpu0/cache").exists(),
                    reason="needs valgrind and sysfs")
def test_cache_counts_grow_with_the_counted_work() -> None:
    def counts(n: int) -> tuple[int, int, int]:
        code = ("from bench.callgrind import callgrind_counting\n"
                f"data = list(range({n}))\n"
                "with callgrind_counting():\n    sum(data)\n")
        c = callgrind_cache_counts([sys.executable, "-c", code], env={"PYTHONPATH": str(Path(__file__).parents[3])})
        return c.instructions, c.l1_misses, c.ll_misses
    small, large = counts(1_000), counts(400_000)
    assert 0 < small[0] < large[0]
    assert large[1] > small[1]  # 400,000 list slots (3 MiB of pointers) are read through L1
    assert large[2] > small[2]  # and they do not fit in L2 either
