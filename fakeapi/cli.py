"""The ``fakeapi`` command: ``serve`` and ``demo`` (wiring; see the CLI contract in the design)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence

from fakeapi.config import FeatureGates, ServerOptions, tune_gc_for_server
from fakeapi.errors import StatusError
from fakeapi.kubeconfig import is_loopback


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fakeapi", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the API server (and the control plane)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind; anything but loopback exposes the unauthenticated API")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--kubeconfig", default=None,
                       help="where to write a kubeconfig (mode 0600) once ready; removed at exit")
    serve.add_argument("--no-control-plane", action="store_true",
                       help="serve the API only: no scheduler, controllers or kubelet emulation")
    serve.add_argument("--feature-gates", default="", help="NAME=true|false,...")
    serve.add_argument("--secure", action="store_true",
                       help="TLS with a fresh CA, client-certificate and ServiceAccount-token authentication, "
                            "RBAC authorization; the kubeconfig is the admin (system:masters)")
    serve.add_argument("--enable-faults", action="store_true",
                       help="serve the fault-injection admin endpoint /fakeapi/v1/ (docs/fault-injection.md)")
    demo = sub.add_parser("demo", help="run the KEP-5729 story end to end and exit")
    demo.add_argument("--feature-gates", default="", help="NAME=true|false,...")
    return parser


_EXPOSED = """\
fakeapi: WARNING: listening on {host}, reachable from the network.
fakeapi: WARNING: this API server has no authentication: anyone who can connect can read, change
fakeapi: WARNING: and delete every object.  Use --host 127.0.0.1 (or --secure) unless exposing it
fakeapi: WARNING: is what you want."""


async def _serve(args: argparse.Namespace) -> int:
    from fakeapi.cluster import FakeCluster

    gates = FeatureGates.parse(args.feature_gates)
    cluster = FakeCluster(host=args.host, port=args.port, control_plane=not args.no_control_plane,
                          feature_gates=gates, kubeconfig_path=args.kubeconfig, secure=args.secure,
                          options=ServerOptions(enable_faults=args.enable_faults))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await cluster.start()
    tune_gc_for_server()
    try:
        if not is_loopback(args.host) and not args.secure:
            print(_EXPOSED.format(host=args.host or "every interface"), file=sys.stderr, flush=True)
        print(f"serving on {cluster.url}", flush=True)
        await stop.wait()
    finally:
        await cluster.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "serve":
            return asyncio.run(_serve(args))
        from fakeapi.demo.story import run_demo

        return asyncio.run(run_demo(FeatureGates.parse(args.feature_gates)))
    except StatusError as exc:
        print(f"fakeapi: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
