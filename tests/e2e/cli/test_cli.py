"""The command-line contract: ``fakeapi serve`` and ``fakeapi demo`` as scripts outside use them."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
import yaml
from fakeapi.fixtures.plugin import kubectl_binary


async def _serve(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fakeapi", "serve", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
    return proc, line


@pytest.mark.parametrize("control_plane", [False, True], ids=["api-only", "with-control-plane"])
async def test_serve_writes_kubeconfig_prints_url_and_stops_cleanly(tmp_path: Path, control_plane: bool) -> None:
    kubeconfig = tmp_path / "kube" / "config"
    args = ["--port", "0", "--kubeconfig", str(kubeconfig)] + ([] if control_plane else ["--no-control-plane"])
    proc, line = await _serve(*args)
    try:
        assert line.startswith("serving on http://127.0.0.1:")
        url = line.removeprefix("serving on ")
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        context = config["contexts"][0]
        assert config["current-context"] == context["name"] == "default"
        assert context["context"]["namespace"] == "default"
        kubectl = await asyncio.create_subprocess_exec(
            kubectl_binary(), f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}",
            "get", "namespaces", "-o", "json", stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(kubectl.communicate(), 30)
        names = [ns["metadata"]["name"] for ns in json.loads(out)["items"]]
        assert "default" in names
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 15)
    assert code == 0


async def test_serve_sigint_also_exits_zero() -> None:
    proc, line = await _serve("--no-control-plane")
    assert line.startswith("serving on ")
    proc.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(proc.wait(), 15) == 0


async def test_unknown_feature_gate_is_refused() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fakeapi", "serve", "--feature-gates", "NoSuchGate=true",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert "unrecognized feature gate: NoSuchGate" in err.decode()


async def test_demo_runs_the_kep_5729_story_and_exits_zero() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fakeapi", "demo", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "reservedFor: [('podgroups', 'training')]" in text
    assert "KEP-5729 story complete" in text
