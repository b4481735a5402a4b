"""Counting instructions with valgrind's callgrind: deterministic figures on a shared, busy machine.

A benchmark runs its measured part in a child under :func:`callgrind_instructions` (or
:func:`callgrind_cache_counts`), and the child counts only inside :func:`callgrind_counting`
blocks.  No aiohttp here: a counted child that imports only this module starts in a fraction of
the time, which matters many times over under valgrind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path


@contextlib.contextmanager
def callgrind_counting(pid: int | None = None) -> Iterator[None]:
    """Count instructions in the block only: process ``pid`` (default this one) runs under
    callgrind with counting off at start (as ``callgrind_instructions`` runs it), and
    ``callgrind_control`` switches counting on and off around the block."""
    control, target = ["callgrind_control", "--instr"], str(pid or os.getpid())
    subprocess.run([*control, "on", target], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([*control, "off", target], check=True, capture_output=True)


def callgrind_instructions(argv: Sequence[str], env: dict[str, str] | None = None) -> int:
    """Instructions the command ``argv`` executed inside its ``callgrind_counting`` blocks, run
    under valgrind's callgrind (deterministic, so figures compare across a busy machine's runs;
    the count includes starting the ``off`` call, a few thousand instructions).  ``env`` is added
    to the environment (``PYTHONHASHSEED`` makes set and dict orders repeat)."""
    return _callgrind_totals(argv, env)[0]


@dataclass(frozen=True)
class CacheCounts:
    """What callgrind's cache simulation counted: instructions, and the misses of the first level
    (instruction fetches, data reads and writes) and of the last level it models."""

    instructions: int
    l1_misses: int
    ll_misses: int


def callgrind_cache_counts(argv: Sequence[str], env: dict[str, str] | None = None) -> CacheCounts:
    """:func:`callgrind_instructions` with the caches simulated as one core of this machine has
    them (its L1 caches, and its L2 as the last level): deterministic like the instruction count,
    and it sees what the count cannot, the misses of code and data a request's path touches."""
    l1d, l1i, l2 = (cpu_cache(level, kind) for level, kind in ((1, "Data"), (1, "Instruction"), (2, "Unified")))
    totals = _callgrind_totals(argv, env, ["--cache-sim=yes", f"--D1={l1d}", f"--I1={l1i}", f"--LL={l2}"])
    # The events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
    return CacheCounts(totals[0], sum(totals[3:6]), sum(totals[6:9]))


def cpu_cache(level: int, kind: str, sysfs: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> str:
    """The first CPU's cache of ``level`` and ``kind`` (Data, Instruction, Unified) as valgrind's
    ``size,ways,line``, from ``sysfs``."""
    for index in sorted(sysfs.glob("index*")):
        def read(name: str, index: Path = index) -> str:
            return (index / name).read_text().strip()
        if read("level") == str(level) and read("type") == kind:
            size = read("size")
            size_bytes = int(size[:-1]) * {"K": 1024, "M": 1024 * 1024}[size[-1]] if size[-1] in "KM" else int(size)
            return f"{size_bytes},{read('ways_of_associativity')},{read('coherency_line_size')}"
    raise SystemExit(f"no level {level} {kind} cache described in sysfs")


def _callgrind_totals(argv: Sequence[str], env: dict[str, str] | None, options: Sequence[str] = ()) -> list[int]:
    """The totals of callgrind's events over the command's counted blocks."""
    if shutil.which("valgrind") is None:
        raise SystemExit("counting instructions needs valgrind on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                        *options, *argv], check=True, capture_output=True, env={**os.environ, **(env or {})})
        totals = re.search(rb"^totals: ([\d ]+)$", out.read_bytes(), re.M)
        if totals is None:
            raise RuntimeError("callgrind wrote no totals")
        return [int(n) for n in totals.group(1).split()]
