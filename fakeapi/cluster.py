"""``FakeCluster``: the API server (and, unless disabled, the control plane) in this process.

This is wiring: the only module besides the CLI that starts both the server and the
``scheduler`` package (imported lazily, so the server core never depends on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web

from fakeapi.auth.users import CONTROL_PLANE
from fakeapi.config import FeatureGates, ServerOptions
from fakeapi.disruptions import remove_node, set_kubelet_stopped, set_node_ready
from fakeapi.errors import ServiceUnavailable
from fakeapi.kube import KubeHelpers
from fakeapi.kubeconfig import WrittenKubeconfig, kubeconfig_text, server_url, write_kubeconfig
from fakeapi.machinery.faults import FaultSet
from fakeapi.machinery.idle import until_idle
from fakeapi.machinery.pem import KeyPair
from fakeapi.presence import StorePresence, seed_default_service_accounts
from fakeapi.registry.rest import Registry
from fakeapi.scheduler.connection import Connection
from fakeapi.scheduler.controllers import names
from fakeapi.scheduler.controllers.names import controller_entries, enabled_controllers
from fakeapi.server.app import REQUEST_DEADLINES, create_app, route_directly
from fakeapi.server.connections import GuardedSite
from fakeapi.server.faults import FAULTS
from fakeapi.server.pipe import deliveries as pipe_deliveries
from fakeapi.server.state import REGISTRY

if TYPE_CHECKING:
    from fakeapi.auth.tls import SecureServing
    from fakeapi.scheduler.clock import Clock


log = logging.getLogger("fakeapi")
READY_TIMEOUT = 30.0  # seconds the control plane process may take to sync its caches
STOP_TIMEOUT = 10.0  # seconds it may take to stop after SIGTERM before it gets SIGKILL
DRAIN_TIMEOUT = 1.0  # seconds the server may take to see the in-process control plane's connections close


class ControlPlaneExited(RuntimeError):
    """The control plane's child process exited while the cluster needed it."""


def _exit_reason(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


def _exited(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it: signalling a dead child through
    ``Process.terminate`` reaps it behind asyncio's back, which then reports exit code 255."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already; asyncio is about to report it
        return True


class _ControlPlaneProcess:
    """``python -m fakeapi.scheduler`` against the server, watched for an unexpected exit."""

    def __init__(self, url: str, gates: FeatureGates, *, kubelet: bool = True,
                 kubeconfig: str | None = None, controllers: str | Iterable[str] | None = names.ALL) -> None:
        """``kubeconfig``: the text of a kubeconfig with the CA and token of a secure server; it
        reaches the child on its standard input, never on disk or in its arguments."""
        flags = ",".join(f"{name}={str(on).lower()}" for name, on in gates.as_dict().items())
        self._kubeconfig = kubeconfig
        self._args = ["--kubeconfig", "-"] if kubeconfig else ["--server", url]
        self._args += ["--feature-gates", flags, "--controllers", ",".join(controller_entries(controllers)),
                       "--exit-with-parent"]
        if not kubelet:
            self._args.append("--no-kubelet")
        self._spawn: asyncio.Future[asyncio.subprocess.Process] | None = None
        self._supervisor: asyncio.Task[None] | None = None
        # Exit codes that mean "stopped by us": none while it should be running.
        self._expected: tuple[int, ...] = ()
        self.failure: ControlPlaneExited | None = None

    async def start(self) -> None:
        """Start the child; return once its caches are synced (it prints one line then)."""
        # A future of its own, so that stop() finds the child even while it is being spawned.
        self._spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            sys.executable, "-m", "fakeapi.scheduler", *self._args, stdout=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.PIPE if self._kubeconfig else None))
        proc = await asyncio.shield(self._spawn)
        if proc.stdin is not None and self._kubeconfig:
            proc.stdin.write(self._kubeconfig.encode())
            await proc.stdin.drain()
            proc.stdin.close()
        assert proc.stdout is not None
        async with asyncio.timeout(READY_TIMEOUT):
            line = await proc.stdout.readline()
        if not line:
            how = "was stopped" if self._expected else _exit_reason(await proc.wait())
            raise ControlPlaneExited(f"the control plane process {how} before it was ready")
        self._supervisor = asyncio.create_task(self._supervise(proc))

    async def _supervise(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        # Reading to EOF both notices the exit and keeps the pipe drained: a child blocked on a
        # full pipe would hang silently.
        while await proc.stdout.read(1 << 16):
            pass
        returncode = await proc.wait()
        if returncode not in self._expected:
            self.failure = ControlPlaneExited(
                f"the control plane process (pid {proc.pid}) {_exit_reason(returncode)}: nothing schedules "
                "pods, allocates claims or runs pods any more; FakeCluster does not restart it")
            log.error("%s", self.failure)

    async def stop(self) -> None:
        """Stop the child however far it got (spawning, starting, running, dead); never raises."""
        if self._spawn is None:
            return
        try:
            proc = await asyncio.shield(self._spawn)
        except Exception:  # it never ran
            return
        if proc.returncode is None and not _exited(proc.pid):
            # On SIGTERM it exits 0, or dies of the signal if it has no handler yet.
            self._expected = (0, -signal.SIGTERM)
            with contextlib.suppress(ProcessLookupError):  # it exited since the check
                proc.send_signal(signal.SIGCONT)  # a paused child handles SIGTERM only once continued
                proc.terminate()
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await proc.wait()
            except TimeoutError:
                self._expected += (-signal.SIGKILL,)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        await proc.wait()
        if self._supervisor is not None:
            await self._supervisor

    def send_signal(self, sig: signal.Signals) -> None:
        """Signal the running child (SIGSTOP and SIGCONT pause and resume it)."""
        if self._spawn is None or not self._spawn.done() or self._spawn.exception() is not None:
            raise RuntimeError("the control plane process is not running")
        self._spawn.result().send_signal(sig)


class FakeCluster(KubeHelpers):
    """An in-process Kubernetes API server on a free loopback port.

    ``control_plane`` runs the scheduler, controllers and kubelet emulation in this event loop
    (True), not at all (False), or in a child process (``"process"``: both cores work, which
    roughly 1.5x's scheduling throughput on 2 cores).  In this event loop it speaks HTTP to the
    server through in-memory pipes (``GuardedSite.connect``: the same HTTP bytes, handlers and
    limits without a socket; TCP when the server is secure), while :attr:`url` stays TCP.

    ``controllers`` selects the controller loops as kube-controller-manager's ``--controllers``
    does (``["resourceclaim-controller"]``, ``"*,-deployment-controller"``; see
    :mod:`fakeapi.scheduler.controllers.names`): fewer controllers open fewer watches, which are
    most of an enter + exit.  ``kubelet=False`` leaves out the kubelet emulation, ``clock=`` sets
    the control plane's clock.

    A child control plane that exits unexpectedly is not restarted: a restart would hide the
    crash from the test that caused it (upstream restarts kube-scheduler from its supervisor,
    a tool outside the cluster).  Instead the exit is logged at once, every API request from
    then on is answered 503 with the reason, and :meth:`stop` raises
    :class:`ControlPlaneExited` after cleaning up.

    The kubeconfig is written 0600 and removed at :meth:`stop`, unless something replaced it:
    at start when ``kubeconfig_path`` is given, else into a temporary directory the first time
    :attr:`kubeconfig_path` is read (most tests never read it, and the file and its directory
    cost ~0.6 ms of CPU of a ~5 ms enter + exit on the benchmark machine, BENCHMARKS.md).

    The helpers of :class:`~fakeapi.kube.KubeHelpers` (``apply``, ``get``, ``list``, ``delete``,
    ``wait_for``, ``events``) work on the running cluster; fault injection (:attr:`faults`,
    :meth:`close_watches`, :meth:`compact`, :meth:`pause_control_plane`, :meth:`node_not_ready`,
    :meth:`delete_node`) breaks it on purpose (``docs/fault-injection.md``).

    >>> async with FakeCluster() as cluster:
    ...     cluster.url, cluster.kubeconfig_path
    """

    _kubeconfig: WrittenKubeconfig | None = None
    # What the kubeconfig writes, between start and stop: (url, CA, client key pair).
    _kubeconfig_args: tuple[str, bytes | None, KeyPair | None] | None = None
    _paused = False
    _unsettle: Callable[[], None] | None = None  # takes settle() back from a ManualClock

    def __init__(self, *, host: str | None = None, port: int | None = None,
                 control_plane: bool | Literal["process"] = True, feature_gates: FeatureGates | str | None = None,
                 kubeconfig_path: str | Path | None = None, options: ServerOptions | None = None,
                 secure: bool | None = None, **control_plane_options: Any) -> None:
        base = options or ServerOptions()
        if isinstance(feature_gates, str):
            feature_gates = FeatureGates.parse(feature_gates)
        # The options pass whole, so a field added to ServerOptions reaches the server without
        # touching this class; the keyword arguments only override what they name.
        self.options = replace(base, host=base.host if host is None else host,
                               port=base.port if port is None else port,
                               feature_gates=base.feature_gates if feature_gates is None else feature_gates,
                               secure=base.secure if secure is None else secure)
        self.control_plane_enabled = control_plane
        # A list naming an unknown controller fails here, before anything starts.
        controller_entries(control_plane_options.get("controllers", names.ALL))
        self._control_plane_options = control_plane_options
        self._kubeconfig_arg = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._runner: web.AppRunner | None = None
        self._site: GuardedSite | None = None
        self._control_plane: Any = None
        self.url = ""
        self._kubeconfig_path = Path()
        self._kubeconfig_lock = threading.Lock()

    @property
    def kubeconfig_path(self) -> Path:
        """The cluster's kubeconfig (the admin's client certificate on a secure cluster): the
        ``kubeconfig_path`` given, else a file in a temporary directory, written now if this is
        the first time it is asked for; ``Path()`` before the cluster starts."""
        if self._kubeconfig is None and self._kubeconfig_args is not None:
            # A plain test reads it from its own thread while the cluster runs on the fixture's.
            with self._kubeconfig_lock:
                if self._kubeconfig is None and self._kubeconfig_args is not None:
                    self._tmpdir = tempfile.TemporaryDirectory(prefix="fakeapi-")
                    self._write_kubeconfig(Path(self._tmpdir.name) / "kubeconfig")
        return self._kubeconfig_path

    def _write_kubeconfig(self, path: Path) -> None:
        assert self._kubeconfig_args is not None
        url, ca_pem, client = self._kubeconfig_args
        self._kubeconfig = write_kubeconfig(path, url, ca_pem=ca_pem, client=client)
        self._kubeconfig_path = path

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

    @property
    def faults(self) -> FaultSet:
        """The faults the server injects, e.g. ``with cluster.faults.fail(verb="update",
        resource="resourceclaims/status", code=409, count=3): ...`` (ended with the block)."""
        assert self._runner is not None, "cluster not started"
        return self._runner.app[FAULTS]

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait until the server and the in-process control plane have nothing left to do: what
        happened so far has run to its end (scheduling, the controllers' writes and the watch
        events they cause, the kubelet emulation), and what remains waits for the control plane's
        clock, a backoff or new input.  A ``ManualClock`` settles the cluster this way before
        time moves and after each timer it runs.  TimeoutError after ``timeout`` seconds, naming
        what is still busy; RuntimeError when the control plane runs in a child process, whose
        work this process cannot see."""
        if self.control_plane_enabled == "process":
            raise RuntimeError("settle() needs the control plane in this process (control_plane=True)")
        if self._runner is None:
            raise RuntimeError("cluster not started")
        requests = self._runner.app[REQUEST_DEADLINES]
        await until_idle(lambda: f"{n} API request(s) in flight" if (n := len(requests)) else None, timeout,
                         activity=pipe_deliveries)

    def close_watches(self) -> None:
        """End every open watch, as an apiserver restart does: clients resume from their revision."""
        self.registry.reads.close_all_watches()

    def compact(self) -> int:
        """Compact the history at a fresh revision, so that the next resume of any watch (or list
        from an earlier revision) gets 410 Expired and must re-list; returns that revision."""
        return self.registry.reads.compact_history()

    async def pause_control_plane(self) -> None:
        """Nothing schedules, allocates, reconciles or runs pods until :meth:`resume_control_plane`:
        the in-process control plane stops (resuming starts it afresh: it re-lists, like a restarted
        kube-controller-manager); a child process is stopped (SIGSTOP) and continued."""
        if self._control_plane is None:
            raise RuntimeError("this cluster runs no control plane")
        if self._paused:
            return
        self._paused = True
        if isinstance(self._control_plane, _ControlPlaneProcess):
            self._control_plane.send_signal(signal.SIGSTOP)
        else:
            await self._control_plane.stop()

    async def resume_control_plane(self) -> None:
        """Undo :meth:`pause_control_plane` (waits until the control plane's caches are synced);
        nothing to do when it is not paused."""
        if not self._paused or self._control_plane is None:
            return
        self._paused = False
        if isinstance(self._control_plane, _ControlPlaneProcess):
            self._control_plane.send_signal(signal.SIGCONT)
        else:
            self._seed_for_control_plane()  # a default account deleted while paused comes back
            await self._control_plane.start()

    def _seed_for_control_plane(self) -> None:
        """The serviceaccount loop's work at its start, done by the server so that the loop can
        wait for a namespace or account to change (see ``seed_default_service_accounts``)."""
        if names.SERVICE_ACCOUNT in enabled_controllers(self._control_plane_options.get("controllers")):
            seed_default_service_accounts(self.registry)

    async def node_not_ready(self, name: str) -> None:
        """Make Node ``name`` NotReady, as the node lifecycle controller marks a node whose kubelet
        reports NotReady: condition ``Ready=False`` and the ``node.kubernetes.io/not-ready``
        NoSchedule and NoExecute taints.  New pods avoid the node; the taint-eviction controller
        evicts the pods there once their tolerations of the taint run out (300 s by default)."""
        await set_node_ready(self, name, ready=False, now=self.clock.rfc3339())

    async def node_ready(self, name: str) -> None:
        """Undo :meth:`node_not_ready`."""
        await set_node_ready(self, name, ready=True, now=self.clock.rfc3339())

    async def stop_kubelet(self, name: str) -> None:
        """Stop Node ``name``'s kubelet, as a crash or a network partition would: its lease is no
        longer renewed and its pods are left as they are (deleted ones stay terminating).  50 s
        later on the control plane's clock (the stop's time is in the annotation, so a
        ``ManualClock`` test may advance at once) the node lifecycle controller marks the node
        ``Unknown`` and its pods not ready and taints it ``unreachable``; the taint-eviction
        controller evicts the pods after their tolerations (300 s by default)."""
        await set_kubelet_stopped(self, name, stopped_at=self.clock.rfc3339())

    async def start_kubelet(self, name: str) -> None:
        """Undo :meth:`stop_kubelet`: the kubelet posts the node healthy and catches up with its pods."""
        await set_kubelet_stopped(self, name, stopped_at=None)

    async def delete_node(self, name: str) -> None:
        """Remove Node ``name`` as the node's removal, its DRA driver and pod GC together do: its
        ResourceSlices and the pods bound to it are deleted, then the Node."""
        await remove_node(self, name)

    async def start(self) -> FakeCluster:
        """Serve, write the kubeconfig, start the control plane; on failure undo all of it."""
        try:
            await self._start()
        except BaseException:
            await self._shut_down()
            raise
        return self

    async def _start(self) -> None:
        serving: SecureServing | None = None
        if self.options.secure:
            # Imported here: cryptography adds ~20 ms to the start of every process that imports
            # fakeapi, and clusters are served over plain HTTP unless asked.
            from fakeapi.auth.tls import SecureServing
            serving = SecureServing.generate(self.options.host)
        app = create_app(self.options, static_tokens={serving.control_plane_token: CONTROL_PLANE} if serving else None,
                         gate=self._refuse_without_control_plane if self.control_plane_enabled == "process" else None)
        # A client that goes away cancels its handler: abandoned watches close at once.
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0, handler_cancellation=True)
        await self._runner.setup()
        route_directly(self._runner)
        self._site = GuardedSite(self._runner, self.options, serving.server if serving else None)
        await self._site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = server_url(host, port, secure=serving is not None)
        if serving is None:
            self._kubeconfig_args = (self.url, None, None)
            self.open_helpers(Connection(self.url))
        else:  # the admin's client certificate, as kubeadm's admin.conf
            self._kubeconfig_args = (self.url, serving.ca.cert_pem, serving.admin)
            # What that kubeconfig says, without reading it back.
            self.open_helpers(Connection(self.url, serving.ca.cert_pem, client_cert_pem=serving.admin.cert_pem,
                                         client_key_pem=serving.admin.key_pem))
        if self._kubeconfig_arg is not None:
            self._write_kubeconfig(self._kubeconfig_arg)
        # The control plane's own identity: a bearer token with the CA to trust.
        ca_pem, token = (serving.ca.cert_pem, serving.control_plane_token) if serving else (None, None)
        if self.control_plane_enabled == "process":
            secret = None if token is None else kubeconfig_text(self.url, ca_pem=ca_pem, token=token)
            self._control_plane = _ControlPlaneProcess(self.url, self.gates, kubeconfig=secret,
                                                       **self._control_plane_options)
            await self._control_plane.start()
        elif self.control_plane_enabled:
            from fakeapi.scheduler.clock import ManualClock
            from fakeapi.scheduler.controlplane import ControlPlane

            # Its watch connections skip the socket's set-up through in-memory pipes to the site
            # (the same HTTP); tests' clients keep the TCP address, and TLS keeps TCP too.
            piped = self._site.connect if serving is None else None
            # The server's word on which objects changed lets the loops with nothing to do yet
            # wait for their first (fakeapi.presence).
            self._seed_for_control_plane()
            self._control_plane = ControlPlane(Connection(self.url, ca_pem, token, connect=piped),
                                               gates=self.gates, presence=StorePresence(self.registry),
                                               **self._control_plane_options)
            await self._control_plane.start()
            if isinstance(clock := self._control_plane_options.get("clock"), ManualClock):
                self._unsettle = clock.settle_with(self.settle)

    def _refuse_without_control_plane(self) -> None:
        # Fail the test's next request loudly rather than let it wait for scheduling that
        # will never happen.
        if isinstance(self._control_plane, _ControlPlaneProcess) and self._control_plane.failure:
            raise ServiceUnavailable(str(self._control_plane.failure))

    async def stop(self) -> None:
        """Stop everything started; raise :class:`ControlPlaneExited` if the child died on its own."""
        control_plane = self._control_plane
        await self._shut_down()
        if isinstance(control_plane, _ControlPlaneProcess) and control_plane.failure:
            raise control_plane.failure

    async def _shut_down(self) -> None:
        if self._unsettle is not None:
            self._unsettle()
            self._unsettle = None
        # Each part is taken before awaiting, so a stop() racing a failing start() undoes it once.
        control_plane, self._control_plane = self._control_plane, None
        if control_plane is not None:
            await control_plane.stop()
            if self._site is not None:  # its requests end as their client left, not by the shutdown
                await self._site.pipes_closed(DRAIN_TIMEOUT)
        await self.close_helpers()
        runner, self._runner, self._site = self._runner, None, None
        if runner is not None:
            await runner.cleanup()
        with self._kubeconfig_lock:  # no first read writes one after this
            self._kubeconfig_args = None
            kubeconfig, self._kubeconfig = self._kubeconfig, None
            tmpdir, self._tmpdir = self._tmpdir, None
        if kubeconfig is not None:
            kubeconfig.remove()
        if tmpdir is not None:
            tmpdir.cleanup()

    async def __aenter__(self) -> FakeCluster:
        return await self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()
