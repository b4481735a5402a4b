"""The ``fakeapi`` command: ``serve`` and ``demo`` (wiring; see the CLI contract in the design)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from fakeapi.config import FeatureGates, ServerOptions, run_main, tune_gc_for_server
from fakeapi.errors import StatusError
from fakeapi.kubeconfig import is_loopback
from fakeapi.scheduler.controllers.names import ALL, FLAG_HELP, controllers_argument


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fakeapi", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the API server (and the control plane)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind; anything but loopback exposes the unauthenticated API")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--kubeconfig", default=None,
                       help="where to write a kubeconfig (mode 0600) once ready; removed at exit")
    layout = serve.add_mutually_exclusive_group()
    layout.add_argument("--control-plane", choices=("process", "inline", "none"), default="process",
                        help="process (default): scheduler, controllers and kubelet emulation in a child process, "
                             "so the API server and the control plane each have a core; inline: both in this "
                             "process's event loop; none: serve the API only")
    layout.add_argument("--no-control-plane", dest="control_plane", action="store_const", const="none",
                        help="the same as --control-plane none")
    serve.add_argument("--feature-gates", default="", help="NAME=true|false,...")
    serve.add_argument("--controllers", type=controllers_argument, default=ALL, metavar="LIST", help=FLAG_HELP)
    serve.add_argument("--secure", action="store_true",
                       help="TLS with a fresh CA, client-certificate and ServiceAccount-token authentication, "
                            "RBAC authorization; the kubeconfig is the admin (system:masters)")
    serve.add_argument("--enable-faults", action="store_true",
                       help="serve the fault-injection admin endpoint /fakeapi/v1/ (docs/fault-injection.md)")
    serve.add_argument("--admission-webhooks", action="store_true",
                       help="call the admission webhooks that Mutating/ValidatingWebhookConfigurations name "
                            "(off by default: a fake cluster runs no webhook pods)")
    demo = sub.add_parser("demo", help="play a scenario end to end on an embedded cluster, live")
    demo.add_argument("--scenario", default="kep5729", choices=("kep5729", "gang", "constraint", "deployment"),
                      help="kep5729: claims for PodGroups; gang: two gangs compete, one wins; constraint: the "
                           "seed's block constraint; deployment: the seed's corrected example")
    demo.add_argument("--nodes", type=int, default=2, help="GPU nodes (4 GPUs, one block each)")
    demo.add_argument("--groups", type=int, default=1, help="pod groups (kep5729) or instances (constraint)")
    demo.add_argument("--pods-per-group", type=int, default=None, help="pods per group (gang: per gang; "
                                                                        "deployment: replicas)")
    demo.add_argument("--no-live", action="store_true",
                      help="a plain log (the default when standard output is not a terminal)")
    demo.add_argument("--pace", type=float, default=None,
                      help="seconds to pause after each step (default 0.8 live, 0 otherwise)")
    demo.add_argument("--html", default=None, help="where to write the placement page (default: the temp dir)")
    demo.add_argument("--keep-serving", action="store_true",
                      help="leave the server up afterwards with its kubeconfig, for kubectl, until Ctrl-C")
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
    control_plane = {"process": "process", "inline": True, "none": False}[args.control_plane]
    options = ServerOptions(enable_faults=args.enable_faults, admission_webhooks=args.admission_webhooks)
    cluster = FakeCluster(host=args.host, port=args.port, control_plane=control_plane,
                          feature_gates=gates, kubeconfig_path=args.kubeconfig, secure=args.secure,
                          options=options, controllers=args.controllers)
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


def _demo(args: argparse.Namespace) -> int:
    from fakeapi.demo.scenarios import build
    from fakeapi.demo.story import DemoOptions, run_demo

    try:
        scenario = build(args.scenario, nodes=args.nodes, groups=args.groups, pods_per_group=args.pods_per_group)
    except ValueError as exc:
        print(f"fakeapi demo: {exc}", file=sys.stderr)
        return 2
    live = not args.no_live and sys.stdout.isatty()
    pace = args.pace if args.pace is not None else (0.8 if live else 0.0)
    return asyncio.run(run_demo(DemoOptions(scenario, live, pace, Path(args.html) if args.html else None,
                                            args.keep_serving, FeatureGates.parse(args.feature_gates))))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "serve":
            return run_main(_serve(args))
        return _demo(args)
    except StatusError as exc:
        print(f"fakeapi: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
