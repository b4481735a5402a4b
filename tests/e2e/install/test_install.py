"""fakeapi as a user installs it: one import root, nothing of the user's environment overwritten.

A wheel is built from this checkout and installed into a fresh virtualenv next to PyPI's
``fixtures`` library; a downstream project with its own ``scheduler`` and ``fixtures`` packages
then runs a test on the ``fake_cluster`` fixture.  The virtualenv borrows the test
environment's third-party packages through a ``.pth`` line (no second download of aiohttp,
pydantic, ...), but fakeapi and ``fixtures`` are really installed into its own site-packages.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.e2e import UNRELATED_PLUGINS

REPO = Path(__file__).resolve().parents[3]
# The repository's folders and the import names they install as.
SOURCES = {"fakeapi": "fakeapi", "scheduler": "fakeapi/scheduler", "fixtures": "fakeapi/fixtures"}
PYPI_FIXTURES = "fixtures==4.3.2"


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, REPO)
    (built,) = out.glob("fakeapi-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh virtualenv holding PyPI's ``fixtures`` and then fakeapi, installed as users do."""
    root = tmp_path_factory.mktemp("venv")
    _run(sys.executable, "-m", "venv", "--without-pip", root)
    python = root / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())
    # Third-party dependencies come from the test environment; fakeapi itself must not: that
    # environment's fakeapi is an editable install whose finder a plain path entry never loads.
    (site / "borrowed-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps"]
    _run(*pip, PYPI_FIXTURES)
    _run(*pip, wheel)
    return root


def test_the_wheel_installs_one_import_root_with_every_module(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        top_level = next(n for n in names if n.endswith("top_level.txt"))
        assert zf.read(top_level).decode().split() == ["fakeapi"]
    roots = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert roots == {"fakeapi"}
    expected = {f"{target}/{path.relative_to(REPO / folder).as_posix()}"
                for folder, target in SOURCES.items()
                for path in (REPO / folder).rglob("*")
                if path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts
                and not (folder == "fakeapi" and path.relative_to(REPO / folder).parts[0] in SOURCES)}
    missing = expected - names
    assert not missing, f"not installed (add the package to [tool.setuptools] packages): {sorted(missing)}"


def test_pypi_fixtures_keeps_working_beside_fakeapi(venv: Path, tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import fixtures, fakeapi.fixtures.plugin, fakeapi.scheduler.controlplane
        assert hasattr(fixtures, "Fixture"), fixtures.__file__
        assert fixtures.__file__ != fakeapi.fixtures.__file__
        print(fixtures.__file__)
    """)
    out = _run(venv / "bin" / "python", "-c", script, cwd=tmp_path)
    assert "site-packages/fixtures/__init__.py" in out


DOWNSTREAM_TEST = '''
import sys

import aiohttp
import pytest

import fixtures
import scheduler
from fakeapi.fixtures import wait_for

POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
NODE = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


async def _runs_a_pod(cluster):
    async with aiohttp.ClientSession(base_url=cluster.url) as s:
        assert (await s.post("/api/v1/nodes", json=NODE)).status == 201
        assert (await s.post("/api/v1/namespaces/default/pods", json=POD)).status == 201

        async def running():
            async with s.get("/api/v1/namespaces/default/pods/p") as resp:
                pod = await resp.json()
            return pod["status"].get("phase") == "Running" and pod

        pod = await wait_for(running, timeout=10, message="pod p Running")
        assert pod["spec"]["nodeName"] == "n1"


async def test_our_scheduler_runs_the_pod_and_the_users_packages_stay_theirs(fake_cluster):
    await _runs_a_pod(fake_cluster)
    assert scheduler.WHOSE == "the user's" and fixtures.WHOSE == "the user's"
    assert sys.modules["scheduler"] is scheduler


@pytest.mark.fakeapi(control_plane="process")
async def test_the_control_plane_process_ignores_the_users_scheduler(fake_cluster):
    await _runs_a_pod(fake_cluster)
'''


def test_a_downstream_project_with_its_own_scheduler_and_fixtures(venv: Path, tmp_path: Path) -> None:
    for package in ("scheduler", "fixtures"):
        (tmp_path / package).mkdir()
        # A user's package that would break ours if it were imported in its place.
        (tmp_path / package / "__init__.py").write_text(
            'WHOSE = "the user\'s"\ndef __getattr__(name):\n    raise ImportError(f"user package has no {name}")\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n"
                                         "asyncio_default_fixture_loop_scope = function\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_downstream.py").write_text(DOWNSTREAM_TEST)
    out = _run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *UNRELATED_PLUGINS, "tests",
               cwd=tmp_path)
    assert "2 passed" in out, out
