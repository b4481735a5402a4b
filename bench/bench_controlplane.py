"""The control plane's own cost per DRA pod: its process alone, the API server elsewhere.

This process serves a ``FakeCluster`` without a control plane and runs ``python -m
fakeapi.scheduler`` against it as a child (as ``FakeCluster(control_plane="process")`` does).
Pods with one ResourceClaimTemplate claim are created one at a time, as in bench_latency.py
(claim created by the ResourceClaim controller, allocated and reserved by the scheduler, bound,
started by the kubelet emulation); what is measured is the child's CPU per pod, or with
``--instructions`` its instructions per pod by valgrind's callgrind, counted around the measured
pods only (deterministic, so figures compare across a busy machine's runs).

    python bench/bench_controlplane.py [--quick] [--pods N] [--instructions] [--keep FILE]

``--keep FILE`` keeps callgrind's output for ``callgrind_annotate --inclusive=yes FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeapi.scheduler.client import PODS, ApiClient

from bench.callgrind import callgrind_counting
from bench.common import RunningWatch, cpu_seconds, create_dra_workload, dra_pod, machine_description, run_loop
from fakeapi.cluster import FakeCluster

DEVICES_PER_NODE = 8
WARM_UP = 3  # first sights of every code path (the selector, the first claim, the first bind)
WAIT = 60.0  # per pod; under valgrind the child is ~50 times slower
START_WAIT = 600.0


async def measure(pods: int, callgrind_out: str | None) -> float:
    """Run ``pods`` pods after the warm-up against a child control plane (under callgrind when
    ``callgrind_out`` names its output file); the child's CPU ms per pod."""
    prefix = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={callgrind_out}"]
    async with FakeCluster(control_plane=False) as cluster, ApiClient(cluster.url) as api:
        await create_dra_workload(api, max(8, -(-(WARM_UP + pods) // DEVICES_PER_NODE)), DEVICES_PER_NODE)
        child = await asyncio.create_subprocess_exec(
            *(prefix if callgrind_out else []), sys.executable, "-m", "fakeapi.scheduler",
            "--server", cluster.url, "--exit-with-parent", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env={**os.environ, "PYTHONHASHSEED": "0"})
        try:
            assert child.stdout is not None
            if not await asyncio.wait_for(child.stdout.readline(), START_WAIT):
                raise RuntimeError("the control plane exited before it was ready")
            watch = RunningWatch()
            rv = (await api.list(PODS, "default", limit=1))["metadata"]["resourceVersion"]
            watcher = asyncio.create_task(watch.run(api, PODS, "default", rv))
            counting = callgrind_counting(child.pid) if callgrind_out else contextlib.nullcontext()
            for i in range(WARM_UP + pods):
                if i == WARM_UP:
                    counting.__enter__()
                    cpu = cpu_seconds(child.pid)
                await api.create(PODS, "default", dra_pod(f"cp-{i}"))
                await watch.wait_for(i + 1, WAIT)
            cpu_ms = (cpu_seconds(child.pid) - cpu) * 1000 / pods
            counting.__exit__(None, None, None)
            watcher.cancel()
        finally:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGTERM)
            await child.wait()
    return cpu_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--pods", type=int, default=None, help="measured pods (default 200, quick 20)")
    parser.add_argument("--instructions", action="store_true", help="count the child's instructions with callgrind")
    parser.add_argument("--keep", help="keep callgrind's output in this file")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("counting instructions needs valgrind on PATH")
    pods = args.pods or (20 if args.quick else 200)
    print(f"Control plane in its own process, one DRA pod at a time, {pods} pods, on {machine_description()}:")
    if not args.instructions:
        print(f"CPU ms per pod, control-plane process: {run_loop(measure(pods, None), uvloop=False):.2f}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or Path(tmp) / "callgrind.out").resolve()
        cpu_ms = run_loop(measure(pods, str(out)), uvloop=False)
        totals = re.search(rb"^totals: (\d+)", out.read_bytes(), re.M)
    if totals is None:
        raise RuntimeError("callgrind wrote no totals")
    print(f"CPU ms per pod, control-plane process: {cpu_ms:.2f} (under valgrind)")
    print(f"M instructions per pod, control-plane process: {int(totals.group(1)) / pods / 1e6:.3f}")


if __name__ == "__main__":
    main()
