"""Per-test overhead of the plugin's fixtures, per scope: what setup plus teardown of
``fake_cluster`` costs a test (plain and async), measured from pytest's own phase durations.

A downstream suite of trivial tests (each applies one ConfigMap and reads it back) runs in a
subprocess under ``--fakeapi-scope=function|module|session``; the overhead of a test is its
setup + teardown time (the call itself is the same in every scope); the function scope runs
again with ``fakeapi_controllers = resourceclaim-controller`` (the controllers DRA tests need).  The first test of a
shared scope pays for starting the cluster, so the median is the steady per-test cost and the
mean includes that start.  Results go to BENCHMARKS.md by hand.  ``--quick`` (a smoke run) has
5 tests of each kind instead of 40, and leaves out the installed pytest plugins the suite does not use.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = 40
SUITE = '''
import pytest

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}


@pytest.mark.parametrize("i", range(%(n)d))
def test_plain(fake_cluster, i):
    fake_cluster.apply(CM)
    assert fake_cluster.get("configmap", "cm")["data"] == {"k": "v"}


@pytest.mark.parametrize("i", range(%(n)d))
async def test_async(fake_cluster, i):
    await fake_cluster.apply(CM)
    assert (await fake_cluster.get("configmap", "cm"))["data"] == {"k": "v"}
'''
INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
# (--fakeapi-scope, row label, ini lines): the function scope again with the DRA loops alone.
SCOPES = (("function", "function", ""),
          ("function", "function, DRA only", "fakeapi_controllers = resourceclaim-controller\n"),
          ("module", "module", ""), ("session", "session", ""))
# Installed pytest plugins the suite does not use, which the smoke (--quick) leaves out as
# tests/e2e/plugin does: importing them, assertion-rewritten without bytecode, took ~1.5 s of each
# of its four pytest runs.  A full run keeps them, as the downstream suite it stands for would.
UNRELATED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:schemathesis", "-p", "no:anyio")
RECORDER = '''
import json
import time

import pytest

DURATIONS = {}
CPU = {}  # this process's CPU time in setup + teardown: robust to other load on the machine


def _cpu(item):
    start = time.process_time()
    yield
    CPU[item.nodeid] = CPU.get(item.nodeid, 0.0) + time.process_time() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _cpu(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _cpu(item)


def pytest_runtest_logreport(report):
    if report.when in ("setup", "teardown"):
        DURATIONS[report.nodeid] = DURATIONS.get(report.nodeid, 0.0) + report.duration
    assert report.passed or report.when != "call", report.longreprtext


def pytest_sessionfinish(session):
    with open("durations.json", "w") as out:
        json.dump({"wall": DURATIONS, "cpu": CPU}, out)
'''


def measure(scope: str, tests: int, ini: str = "",
            plugins: tuple[str, ...] = ()) -> dict[str, tuple[list[float], list[float]]]:
    """Per kind of test (plain, async): setup + teardown wall and CPU seconds of each test;
    ``ini`` is added to the suite's pytest.ini, ``plugins`` to its command line."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_suite.py").write_text(SUITE % {"n": tests})
        (root / "conftest.py").write_text(RECORDER)
        (root / "pytest.ini").write_text(INI + ini)
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugins,
                        f"--fakeapi-scope={scope}"], cwd=root, check=True, capture_output=True)
        durations = json.loads((root / "durations.json").read_text())
    return {kind: tuple([d for nodeid, d in durations[which].items() if f"test_{kind}[" in nodeid]  # type: ignore[misc]
                        for which in ("wall", "cpu")) for kind in ("plain", "async")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 5 tests of each kind")
    quick = parser.parse_args().quick
    tests = 5 if quick else TESTS
    print(f"{tests} plain and {tests} async tests per scope; setup + teardown per test, ms")
    print("| scope | test | median | mean | max | CPU median |")
    print("|---|---|---:|---:|---:|---:|")
    for scope, label, ini in SCOPES:
        for kind, (wall, cpu) in measure(scope, tests, ini, UNRELATED_PLUGINS if quick else ()).items():
            ms = [v * 1000 for v in wall]
            print(f"| {label} | {kind} | {statistics.median(ms):.1f} | {statistics.mean(ms):.1f} | {max(ms):.1f} | "
                  f"{statistics.median(cpu) * 1000:.1f} |")


if __name__ == "__main__":
    main()
