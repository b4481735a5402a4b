"""The two downstream projects in ``examples/`` run their own test suites, as their CI would:
pytest in the project's folder, with the plugin that installing fakeapi registers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.e2e import UNRELATED_PLUGINS

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


async def pytest_in(project: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *UNRELATED_PLUGINS, cwd=project,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 180)
    return proc.returncode or 0, out.decode()


async def test_both_examples_pass_their_own_tests() -> None:
    controller, operator = await asyncio.gather(pytest_in(EXAMPLES / "workload-controller"),
                                                pytest_in(EXAMPLES / "kopf-operator"))
    assert controller[0] == 0, controller[1]
    assert "3 passed" in controller[1]
    assert operator[0] == 0, operator[1]
    assert "1 passed" in operator[1]
