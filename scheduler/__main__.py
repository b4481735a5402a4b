"""``python -m fakeapi.scheduler --server URL`` (or ``--kubeconfig PATH``): run the control plane
against any API server.

The control plane reaches the server only over HTTP, so it can run in its own process (both
cores busy in benchmarks) or against another cluster.  SIGINT/SIGTERM stop it cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal

from fakeapi.scheduler.connection import Connection, from_kubeconfig
from fakeapi.scheduler.controllers.names import ALL, FLAG_HELP, controllers_argument
from fakeapi.scheduler.controlplane import ControlPlane

from fakeapi.config import FeatureGates, run_main, tune_gc_for_server

# How often a child started with --exit-with-parent checks that its parent is still there.
PARENT_CHECK = 0.5


def _watch_parent(loop: asyncio.AbstractEventLoop, stop: asyncio.Event, parent: int) -> None:
    """Stop once this process is orphaned: a parent killed without cleanup (SIGKILL, an unhandled
    SIGTERM) can no longer stop its control plane, which would otherwise run on against nothing."""
    if os.getppid() != parent:
        stop.set()
    else:
        loop.call_later(PARENT_CHECK, _watch_parent, loop, stop, parent)


async def _run(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.exit_with_parent:
        _watch_parent(loop, stop, os.getppid())
    server = from_kubeconfig(args.kubeconfig) if args.kubeconfig else Connection(args.server)
    async with ControlPlane(server, gates=FeatureGates.parse(args.feature_gates),
                            kubelet=not args.no_kubelet, controllers=args.controllers):
        tune_gc_for_server()
        print(f"control plane running against {server.server}", flush=True)
        await stop.wait()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m fakeapi.scheduler", description=__doc__)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--server", help="API server URL, e.g. http://127.0.0.1:6443")
    where.add_argument("--kubeconfig", help="a kubeconfig naming the server, its CA and a bearer token")
    parser.add_argument("--feature-gates", default="", help="NAME=true|false,...")
    parser.add_argument("--no-kubelet", action="store_true", help="do not emulate kubelets")
    parser.add_argument("--controllers", type=controllers_argument, default=ALL, metavar="LIST", help=FLAG_HELP)
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="stop when the process that started this one is gone (FakeCluster's child)")
    return run_main(_run(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
