"""managedFields on the writes of the DRA workload: every ``track_update`` call recorded, then replayed.

    python bench/bench_managedfields.py [--quick] [--calls FILE] [--runs N] [--callgrind] [--profile]

Recording runs ``bench_scheduler.py``'s workload in this process (``FakeCluster`` with its
control plane; 50 nodes x 10 devices, 100 + 200 pods, or 20 x 4 and 20 + 40 with ``--quick``) with
``managedfields.track_update`` wrapped: each call's old and new object as JSON, its arguments, the
managedFields it returned, and which entries of the old and new object were entries an earlier
call returned (stored entries are carried over uncopied from write to write; the field sets of
those entries are remembered by identity, so the replay must share them as the server did).
``--calls FILE`` reuses a recording (written there when missing), so two trees replay the same
calls.  The replay feeds the calls again, in order, each seeing the entries the replayed calls
returned, and checks every result's managedFields byte for byte against the recording.

Figures: CPU µs per call (median of ``--runs``, collector off), or with ``--callgrind``
instructions per call in a child process under valgrind's callgrind, counting switched on around
the replay only (deterministic, so usable on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench.` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.callgrind import callgrind_counting, callgrind_instructions
from bench.common import machine_description

FULL = (50, 10, 100, 200)   # nodes, devices per node, init pods, measured pods
QUICK = (20, 4, 20, 40)


class Recorder:
    """A stand-in for ``managedfields.track_update`` that calls it and keeps each call as a JSON line."""

    def __init__(self) -> None:
        from fakeapi.machinery import managedfields

        self.real = managedfields.track_update
        self.lines: list[bytes] = []
        # id of a returned entry -> (the entry, [call, position]): which later inputs share it.
        self._seen: dict[int, tuple[dict, list[int]]] = {}

    def _origins(self, obj: dict | None) -> list[list[int] | None] | None:
        from fakeapi.machinery.managedfields import stored_managed_fields

        entries = stored_managed_fields(obj) if obj is not None else None
        if entries is None:
            return None
        return [hit[1] if (hit := self._seen.get(id(entry))) is not None and hit[0] is entry else None
                for entry in entries]

    def __call__(self, old: dict | None, new: dict, **kw: Any) -> dict:
        from fakeapi.machinery.managedfields import stored_managed_fields
        from fakeapi.models.listtypes import list_types_for

        api_version, kind = new["apiVersion"], new["kind"]
        group = api_version.rpartition("/")[0]
        assert kw["types"] is list_types_for(group, kind), "the workload writes built-in kinds only"
        call = {"old": old, "new": new, "old_entries": self._origins(old), "new_entries": self._origins(new),
                "group": group, "kind": kind, **{k: v for k, v in kw.items() if k != "types"}}
        encoded = orjson.dumps(call)
        result = self.real(old, new, **kw)
        entries = stored_managed_fields(result) or []
        for position, entry in enumerate(entries):
            self._seen.setdefault(id(entry), (entry, [len(self.lines), position]))
        self.lines.append(encoded[:-1] + b',"result":' + orjson.dumps(entries) + b"}")
        return result

    def write(self, path: Path) -> int:
        """Write the calls to ``path``; returns how many."""
        path.write_bytes(b"".join(line + b"\n" for line in self.lines))
        return len(self.lines)


def record(path: Path, workload: tuple[int, int, int, int]) -> int:
    """Run the DRA workload in this process and write its ``track_update`` calls to ``path``
    (one JSON line each); returns how many."""
    from bench.bench_scheduler import run_once
    from fakeapi.machinery import managedfields

    recorder = Recorder()
    managedfields.track_update = recorder
    try:
        asyncio.run(run_once(*workload, profiler=None))
    finally:
        managedfields.track_update = recorder.real
    return recorder.write(path)


@dataclass
class Replay:
    """Recorded calls, decoded (and the code they run imported) ahead of the measured loop."""

    calls: list[dict[str, Any]]
    track_update: Callable[..., dict]

    @classmethod
    def load(cls, path: Path, creates_of: str | None = None) -> Replay:
        """The calls recorded in ``path``; with ``creates_of`` only the creates of that kind."""
        from fakeapi.machinery.managedfields import track_update
        from fakeapi.models.listtypes import list_types_for

        calls = [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
        if creates_of is not None:
            calls = [call for call in calls if call["kind"] == creates_of and call["old"] is None]
        for call in calls:
            call["types"] = list_types_for(call.pop("group"), call.pop("kind"))
        return cls(calls, track_update)

    def run(self) -> list[dict]:
        """Replay every call in order; returns each result."""
        track_update = self.track_update
        results: list[dict] = []
        for call in self.calls:
            old, new = call["old"], call["new"]
            if call["old_entries"] is not None:
                old = _with_entries(old, call["old_entries"], results)
            if call["new_entries"] is not None:
                new = _with_entries(new, call["new_entries"], results)
            results.append(track_update(old, new, manager=call["manager"], api_version=call["api_version"],
                                        types=call["types"], now=call["now"], subresource=call["subresource"]))
        return results

    def check(self, results: list[dict]) -> None:
        """Every result's managedFields are the recorded ones, byte for byte."""
        for index, (call, result) in enumerate(zip(self.calls, results, strict=True)):
            got = orjson.dumps((result.get("metadata") or {}).get("managedFields") or [])
            if got != orjson.dumps(call["result"]):
                raise SystemExit(f"call {index} ({call['manager']}, {call['subresource'] or 'main'}): "
                                 f"managedFields differ from the recording:\n{got.decode()}\n"
                                 f"{orjson.dumps(call['result']).decode()}")

    @property
    def creates(self) -> int:
        return sum(call["old"] is None for call in self.calls)


def _with_entries(obj: dict, origins: list[list[int] | None], results: list[dict]) -> dict:
    """``obj`` whose managedFields entries are, where recorded so, the entries replayed calls returned."""
    entries = obj["metadata"]["managedFields"]
    shared = [results[origin[0]]["metadata"]["managedFields"][origin[1]] if origin is not None else entry
              for entry, origin in zip(entries, origins, strict=True)]
    return {**obj, "metadata": {**obj["metadata"], "managedFields": shared}}


def _fresh(path: Path, creates_of: str | None = None) -> Replay:
    # Each measurement starts without remembered entries, as a new server does.
    from fakeapi.machinery import fieldsv1

    fieldsv1._DECODED.clear()
    return Replay.load(path, creates_of)


def cpu_us(path: Path, creates_of: str | None) -> float:
    """CPU µs per call of one replay, collector off."""
    replay = _fresh(path, creates_of)
    gc.disable()
    try:
        start = time.process_time_ns()
        results = replay.run()
        elapsed = time.process_time_ns() - start
    finally:
        gc.enable()
    replay.check(results)
    return elapsed / 1000 / len(replay.calls)


def _callgrind_child(path: Path, creates_of: str | None) -> None:
    replay = _fresh(path, creates_of)
    gc.disable()
    with callgrind_counting():
        results = replay.run()
    replay.check(results)


def profile(path: Path, creates_of: str | None, top: int) -> str:
    """cProfile of one replay, the top functions by internal and by cumulative time."""
    replay = _fresh(path, creates_of)
    profiler = cProfile.Profile()
    results = profiler.runcall(replay.run)
    replay.check(results)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smaller workload, one replay (CI smoke)")
    parser.add_argument("--calls", type=Path, help="the recording to replay (made there when missing)")
    parser.add_argument("--runs", type=int, default=5, help="replays for the CPU figure (median)")
    parser.add_argument("--callgrind", action="store_true", help="instructions per call under callgrind")
    parser.add_argument("--profile", action="store_true", help="cProfile one replay")
    parser.add_argument("--top", type=int, default=30, help="profile lines to print")
    parser.add_argument("--creates-of", metavar="KIND", help="replay only the creates of KIND (e.g. Pod)")
    parser.add_argument("--callgrind-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.callgrind_child:
        _callgrind_child(args.callgrind_child, args.creates_of)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.calls or Path(tmp) / "calls.jsonl"
        if not path.exists():
            count = record(path, QUICK if args.quick else FULL)
            print(f"recorded {count} track_update calls in {path}")
        replay = Replay.load(path, args.creates_of)
        calls, creates = len(replay.calls), replay.creates
        if args.profile:
            print(profile(path, args.creates_of, args.top))
            return
        if args.callgrind:
            only = ["--creates-of", args.creates_of] if args.creates_of else []
            total = callgrind_instructions([sys.executable, __file__, "--callgrind-child", str(path), *only],
                                           env={"PYTHONHASHSEED": "0"})
            figure = f"{total / calls / 1000:.1f}k instructions per call"
        else:
            values = [cpu_us(path, args.creates_of) for _ in range(1 if args.quick else args.runs)]
            figure = (f"{statistics.median(values):.1f} µs CPU per call "
                      f"(median of {len(values)}: {', '.join(f'{v:.1f}' for v in values)})")
    print(f"managedFields replay on {machine_description()}: {calls} track_update calls "
          f"({creates} creates, {calls - creates} updates), {figure}, every result as recorded")


if __name__ == "__main__":
    main()
