"""``FakeCluster``: the API server (and, unless disabled, the control plane) in this process.

This is wiring: the only module besides the CLI that starts both the server and the
``scheduler`` package (imported lazily, so the server core never depends on it).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web

from fakeapi.config import FeatureGates, ServerOptions
from fakeapi.kubeconfig import write_kubeconfig
from fakeapi.registry.rest import Registry
from fakeapi.server.app import create_app
from fakeapi.server.state import REGISTRY

if TYPE_CHECKING:
    from fakeapi.scheduler.clock import Clock


async def _start_control_plane_process(url: str, gates: FeatureGates, *, kubelet: bool = True,
                                       gang_scheduling_timeout: float | None = None) -> asyncio.subprocess.Process:
    """``python -m fakeapi.scheduler`` against ``url``; returns once its caches are synced."""
    flags = ",".join(f"{name}={str(on).lower()}" for name, on in gates.as_dict().items())
    args = ["--server", url, "--feature-gates", flags]
    if not kubelet:
        args.append("--no-kubelet")
    if gang_scheduling_timeout is not None:
        args += ["--gang-scheduling-timeout", str(gang_scheduling_timeout)]
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "fakeapi.scheduler", *args,
                                                stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    if not line:
        await proc.wait()
        raise RuntimeError(f"the control plane process exited with {proc.returncode}")
    return proc


class FakeCluster:
    """An in-process Kubernetes API server on a free loopback port.

    ``control_plane`` runs the scheduler, controllers and kubelet emulation in this event loop
    (True), not at all (False), or in a child process (``"process"``: both cores work, which
    roughly 1.5x's scheduling throughput on 2 cores).

    >>> async with FakeCluster() as cluster:
    ...     cluster.url, cluster.kubeconfig_path
    """

    def __init__(self, *, host: str | None = None, port: int | None = None,
                 control_plane: bool | Literal["process"] = True, feature_gates: FeatureGates | str | None = None,
                 kubeconfig_path: str | Path | None = None, options: ServerOptions | None = None,
                 **control_plane_options: Any) -> None:
        base = options or ServerOptions()
        if isinstance(feature_gates, str):
            feature_gates = FeatureGates.parse(feature_gates)
        # The options pass whole, so a field added to ServerOptions reaches the server without
        # touching this class; the keyword arguments only override what they name.
        self.options = replace(base, host=base.host if host is None else host,
                               port=base.port if port is None else port,
                               feature_gates=base.feature_gates if feature_gates is None else feature_gates)
        self.control_plane_enabled = control_plane
        self._control_plane_options = control_plane_options
        self._kubeconfig_arg = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._runner: web.AppRunner | None = None
        self._control_plane: Any = None
        self.url = ""
        self.kubeconfig_path = Path()

    @property
    def registry(self) -> Registry:
        """The server's registry, for in-process inspection (tests prefer the HTTP API)."""
        assert self._runner is not None, "cluster not started"
        return self._runner.app[REGISTRY]

    @property
    def gates(self) -> FeatureGates:
        return self.options.feature_gates

    @property
    def clock(self) -> Clock:
        """The control plane's clock: the ``clock=`` option (a ``ManualClock`` a test advances with
        ``await cluster.clock.advance(seconds)``), else real time.  In-process control plane only:
        a child process (``control_plane="process"``) keeps real time."""
        from fakeapi.scheduler.clock import Clock

        clock = self._control_plane_options.get("clock")
        return clock if clock is not None else Clock()

    async def start(self) -> FakeCluster:
        app = create_app(self.options)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                                     # a client that goes away cancels its handler: abandoned
                                     # watches are closed at once instead of lingering.
                                     handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.options.host, self.options.port)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        if self._kubeconfig_arg is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="fakeapi-")
            self.kubeconfig_path = Path(self._tmpdir.name) / "kubeconfig"
        else:
            self.kubeconfig_path = self._kubeconfig_arg
        write_kubeconfig(self.kubeconfig_path, self.url)
        if self.control_plane_enabled == "process":
            self._control_plane = await _start_control_plane_process(self.url, self.gates,
                                                                     **self._control_plane_options)
        elif self.control_plane_enabled:
            from fakeapi.scheduler.controlplane import ControlPlane

            self._control_plane = ControlPlane(self.url, gates=self.gates, **self._control_plane_options)
            await self._control_plane.start()
        return self

    async def stop(self) -> None:
        if isinstance(self._control_plane, asyncio.subprocess.Process):
            self._control_plane.terminate()
            await self._control_plane.wait()
        elif self._control_plane is not None:
            await self._control_plane.stop()
        self._control_plane = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    async def __aenter__(self) -> FakeCluster:
        return await self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()
