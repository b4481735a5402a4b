"""Server options and feature gates: frozen values passed to constructors, never read from globals;
and how the processes fakeapi owns run (collector tuning, event loop)."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Coroutine
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from fakeapi.errors import BadRequest

T = TypeVar("T")

KUBERNETES_VERSION = (1, 37, 0)


@dataclass(frozen=True)
class FeatureGates:
    """Upstream gate names with their Kubernetes 1.37 defaults.

    Beta and GA gates are on by default, as in a 1.37 kube-apiserver and kube-scheduler; alpha gates are off.
    """

    DRAWorkloadResourceClaims: bool = True
    GenericWorkload: bool = True
    DRAPrioritizedList: bool = True
    DRAPartitionableDevices: bool = True
    DRADeviceTaints: bool = True
    DRAAdminAccess: bool = True
    DRAConsumableCapacity: bool = True
    # KEP-5547: the Job controller compiles spec.scheduling into a Workload and a PodGroup (alpha, off).
    WorkloadWithJob: bool = False
    # KEP-2837: spec.resources of a Pod (beta since 1.34, on): its QoS class, defaulted requests
    # and the scheduler's view of its requests; off, the field is dropped from new pods.
    PodLevelResources: bool = True
    # HorizontalPodAutoscaler: minReplicas 0 with an Object or External metric (alpha, off);
    # spec.behavior.*.tolerance (beta, on; off, new tolerances are dropped).
    HPAScaleToZero: bool = False
    HPAConfigurableTolerance: bool = True

    @classmethod
    def parse(cls, text: str | None) -> FeatureGates:
        """Parse ``Name=true,Other=false`` as ``--feature-gates`` does."""
        gates = cls()
        if not text:
            return gates
        known = {f.name for f in fields(cls)}
        changes: dict[str, bool] = {}
        for item in text.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, value = item.partition("=")
            name = name.strip()
            if not sep or value.strip().lower() not in ("true", "false"):
                raise BadRequest(f"invalid feature gate {item!r}: expected NAME=true|false")
            if name not in known:
                raise BadRequest(f"unrecognized feature gate: {name}")
            changes[name] = value.strip().lower() == "true"
        return replace(gates, **changes)

    def as_dict(self) -> dict[str, bool]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ServerOptions:
    """Everything the API server needs to know at start-up."""

    host: str = "127.0.0.1"
    port: int = 0
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    # Serve the fault-injection admin endpoint (``/fakeapi/v1/faults``, ``fakeapi serve
    # --enable-faults``).  Faults set in-process (``FakeCluster.faults``) apply either way.
    enable_faults: bool = False
    # Call the admission webhooks that Mutating/ValidatingWebhookConfigurations name (``fakeapi
    # serve --admission-webhooks``).  Off by default: a fake cluster runs no webhook pods, so an
    # operator's manifest would otherwise fail every write its webhooks match.
    admission_webhooks: bool = False
    # How many events the log keeps; watches and continue tokens older than that get 410.
    event_window: int = 100_000
    # Events buffered per watcher before a slow watcher is closed with 410.
    watcher_queue_limit: int = 10_000
    # How often watches with allowWatchBookmarks get a BOOKMARK (upstream ~1/min).
    bookmark_interval: float = 60.0
    # Seconds a kept-alive connection may sit between requests before the server closes it
    # (upstream's IdleTimeout, which matches Go clients' 90 s idle-connection timeout).  Open
    # watches are requests in progress, never idle.
    idle_timeout: float = 90.0
    # Seconds a client has to deliver a request's headers, from accepting the connection or from
    # the first byte after an idle gap (upstream's ReadHeaderTimeout): half-sent requests end.
    header_read_timeout: float = 32.0
    # Seconds a request that is not long-running (watches, pods/log, exec, attach, portforward
    # are) may take to send its body and be answered before it gets a 504 Timeout Status
    # (kube-apiserver's --request-timeout): a body that never arrives does not hold a connection.
    request_timeout: float = 60.0
    # Open connections at most.  At the limit a new connection displaces the one that has waited
    # longest for a request, or is refused with 503 when every connection is busy.  None: half
    # the open-file limit left after a reserve (448 of the usual 1,024), since a client in the
    # same process (FakeCluster in a test) spends a descriptor per connection too.
    max_connections: int | None = None
    # Bytes of watch lines the event log keeps at most, besides ``event_window`` events: older
    # revisions are compacted (410), as etcd compacts its history, so churning large objects
    # holds no more memory than small ones.  None: no byte bound.
    event_window_bytes: int | None = 64 * 1024 * 1024
    # Authentication (client certificates, ServiceAccount tokens) and RBAC authorization, as
    # ``fakeapi serve --secure`` runs it; False: every request is allowed.  FakeCluster and the CLI
    # serve TLS with a fresh CA when it is set.
    secure: bool = False
    # kube-apiserver's --service-cluster-ip-range and --service-node-port-range: where Services
    # get their cluster IPs and node ports.
    service_cluster_ip_range: str = "10.96.0.0/12"
    service_node_port_range: str = "30000-32767"


def tune_gc_for_server() -> None:
    """Make CPython's cyclic collector rare, for processes fakeapi owns (``serve``, the control plane).

    API objects are acyclic JSON trees that reference counting frees; full collections over a
    large store only add pauses (measured on 20,000 creates: gen-2 passes 4 -> 1, worst request
    latency ~130-160 ms -> ~45-60 ms).  Never called for ``FakeCluster`` inside a user's process.
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop for a loop fakeapi owns (``serve``, the control-plane process, the plain-test
    fixture's thread): uvloop's when it is installed (about a quarter more pods/s end to end,
    BENCHMARKS.md), else asyncio's.  ``FAKEAPI_UVLOOP=0`` keeps asyncio's, to compare or debug."""
    if os.environ.get("FAKEAPI_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:  # not on Windows, nor on PyPy
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run_main(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion as ``asyncio.run`` does, on :func:`new_event_loop`'s loop."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
