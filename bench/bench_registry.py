"""The registry's write pipeline without HTTP: one create or update through ``Registry.writes``.

    python bench/bench_registry.py [--quick] [--callgrind] [--profile OP] [--ops OP,...]

Each operation runs ``WARM_UP`` times, then ``N`` times measured, with CPython's collector off:
decode against the schema, server metadata, the kind's strategy (defaulting, admission,
validation), managedFields and the commit (watch line, event log), and the response serialized
as the HTTP layer would.  Operations:

- ``create-pod``, ``create-configmap``: the bodies of ``bench_api.py``;
- ``pod-status``: a PUT of ``pods/status`` as the kubelet emulation makes it (phase, conditions,
  container statuses, IPs), alternating between two start times so that every write changes;
- ``claim-status``: a PUT of ``resourceclaims/status`` carrying an allocation, alternating the
  pod it is reserved for;
- the rest of one DRA pod's critical path: ``create-claim`` (the claim controller's claim from a
  template), ``pod-claims-patch`` (its merge patch of a new pod's ``status.resourceClaimStatuses``),
  ``claim-finalizer`` (the scheduler's PreBind PUT adding the finalizer, alternating with one
  without it), ``binding`` (``pods/binding`` of a fresh pod each call), ``create-event`` (the
  Scheduled Event, events.k8s.io/v1) and ``pod-status-patch`` (the kubelet's first merge patch
  of a bound pod's whole status, with a resourceVersion precondition).

Figures: CPU µs per operation (median of ``--runs``), or with ``--callgrind`` instructions per
operation, each operation in its own process under valgrind's callgrind with counting switched
on around the measured loop only (deterministic, so usable on a busy machine).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_api import configmap, pod
from bench.callgrind import callgrind_counting, callgrind_instructions
from bench.common import machine_description, markdown_table

WARM_UP = 200
N = 300
QUICK_N = 50
OPS = ("create-pod", "create-configmap", "pod-status", "claim-status", "create-claim", "pod-claims-patch",
       "claim-finalizer", "binding", "create-event", "pod-status-patch")
NOW = ("2026-12-01T10:00:00Z", "2026-12-01T10:00:01Z")


def _registry() -> Any:
    from fakeapi.config import FeatureGates
    from fakeapi.registry.kinds import KINDS
    from fakeapi.registry.rest import Registry
    from fakeapi.registry.writes import WriteOptions
    from fakeapi.store.objects import ObjectStore

    registry = Registry(ObjectStore(), KINDS, FeatureGates())
    registry.writes.create(registry.kinds.namespaces, "", {"metadata": {"name": "default"}},
                           WriteOptions(manager="bench"))
    return registry


def _kind(registry: Any, plural: str, group: str = "", version: str = "v1") -> Any:
    rt = registry.kinds.resource(group, version, plural)
    assert rt is not None, plural
    return rt


def _trimmed(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object as an informer holds it (managedFields trimmed), the base of a PUT body."""
    body = orjson.loads(orjson.dumps(obj))
    body["metadata"].pop("managedFields", None)
    body["metadata"].pop("resourceVersion", None)
    return body


def _claim(name: str) -> dict[str, Any]:
    """A claim as the claim controller makes it from a template (owner, annotation, one request)."""
    return {"metadata": {"name": name, "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": True,
                                              "blockOwnerDeletion": True,
                                              "uid": "00000000-0000-0000-0000-000000000001"}]},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "gpu"}}]}}}


def _dra_pod(name: str) -> dict[str, Any]:
    """``bench_api``'s pod with a template claim, as bench_latency's pods are."""
    body = pod(name)
    body["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    body["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return body


def _claim_statuses(i: int) -> dict[str, Any]:
    """The claim controller's merge patch of a pod's ``status.resourceClaimStatuses``."""
    return {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"p-{i}-gpu-x7k2q"}]}}


def _binding(name: str) -> dict[str, Any]:
    """The scheduler's Binding of pod ``name`` to ``node-0``."""
    return {"metadata": {"name": name}, "target": {"kind": "Node", "name": "node-0"}}


def _event(name: str) -> dict[str, Any]:
    """The scheduler's Scheduled Event, as its recorder writes it (events.k8s.io/v1)."""
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
            "eventTime": "2026-12-01T10:00:00.123456Z", "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-host", "action": "Binding", "reason": "Scheduled",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "apiVersion": "v1",
                          "uid": "00000000-0000-0000-0000-000000000001", "resourceVersion": "12"},
            "note": "Successfully assigned default/p to node-0", "type": "Normal"}


def operation(name: str, count: int = WARM_UP + N) -> Callable[[int], bytes]:
    """A callable doing operation ``name`` once (its argument numbers the call, below ``count``),
    response encoded."""
    from fakeapi.scheduler.kubelet import running_status

    from fakeapi.registry.subresources import bind_pod
    from fakeapi.registry.writes import WriteOptions
    from fakeapi.store.objects import encoded  # what the HTTP layer answers a write with

    registry = _registry()
    writes = registry.writes
    if name == "create-claim":
        rt = _kind(registry, "resourceclaims", "resource.k8s.io")
        opts = WriteOptions(manager="bench")
        return lambda i: encoded(writes.create(rt, "default", _claim(f"c-{i}"), opts)[0])
    if name == "create-event":
        rt = _kind(registry, "events", "events.k8s.io")
        opts = WriteOptions(manager="bench")
        return lambda i: encoded(writes.create(rt, "default", _event(f"p.{i:016x}"), opts)[0])
    if name == "claim-finalizer":
        rt = _kind(registry, "resourceclaims", "resource.k8s.io")
        stored, _ = writes.create(rt, "default", _claim("c"), WriteOptions(manager="bench"))
        base = _trimmed(stored)
        with_finalizer = {**base, "metadata": {**base["metadata"],
                                               "finalizers": ["resource.kubernetes.io/delete-protection"]}}
        bodies = [with_finalizer, base]
        opts = WriteOptions(manager="scheduler")
        return lambda i: encoded(writes.update(rt, "default", "c", bodies[i % 2], opts)[0])
    if name == "binding":
        rt = _kind(registry, "pods")
        for i in range(count):
            writes.create(rt, "default", _dra_pod(f"b-{i}"), WriteOptions(manager="bench"))
        opts = WriteOptions(manager="scheduler", subresource="binding")
        return lambda i: orjson.dumps(bind_pod(writes, rt, "default", f"b-{i}", _binding(f"b-{i}"), opts))
    if name in ("pod-claims-patch", "pod-status-patch"):
        # Each call writes a fresh pod, as on the path: the claim controller's first status write
        # of a new pod, the kubelet's first of a bound one (a new manager's entry each time).
        rt = _kind(registry, "pods")
        claims = WriteOptions(manager="resourceclaim-controller", subresource="status")
        status = WriteOptions(manager="kubelet", subresource="status")
        prepared: list[dict[str, Any]] = []
        for i in range(count):
            stored, _ = writes.create(rt, "default", _dra_pod(f"p-{i}"), WriteOptions(manager="bench"))
            if name == "pod-status-patch":
                writes.patch(rt, "default", f"p-{i}", "merge", _claim_statuses(i), claims)
                bind_pod(writes, rt, "default", f"p-{i}", _binding(f"p-{i}"),
                         WriteOptions(manager="scheduler", subresource="binding"))
                stored = registry.reads.get(rt, "default", f"p-{i}")
            prepared.append(stored)
        if name == "pod-claims-patch":
            return lambda i: encoded(writes.patch(rt, "default", f"p-{i}", "merge", _claim_statuses(i), claims)[0])
        return lambda i: encoded(writes.patch(rt, "default", f"p-{i}", "merge", {
            "metadata": {"resourceVersion": prepared[i]["metadata"]["resourceVersion"]},
            "status": running_status(prepared[i], NOW[0])}, status)[0])
    if name in ("create-pod", "create-configmap"):
        rt = _kind(registry, "pods" if name == "create-pod" else "configmaps")
        make = pod if name == "create-pod" else configmap
        opts = WriteOptions(manager="bench")
        return lambda i: encoded(writes.create(rt, "default", make(f"o-{i}"), opts)[0])
    if name == "pod-status":
        rt = _kind(registry, "pods")
        stored, _ = writes.create(rt, "default", pod("p"), WriteOptions(manager="bench"))
        base = _trimmed(stored)
        base["spec"]["nodeName"] = "node-0"
        bodies = [{**base, "status": running_status(base, now)} for now in NOW]
        opts = WriteOptions(manager="kubelet", subresource="status")
        return lambda i: encoded(writes.update(rt, "default", "p", bodies[i % 2], opts)[0])
    if name == "claim-status":
        rt = _kind(registry, "resourceclaims", "resource.k8s.io")
        claim = {"metadata": {"name": "c", "finalizers": ["resource.kubernetes.io/delete-protection"]},
                 "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "gpu"}}]}}}
        stored, _ = writes.create(rt, "default", claim, WriteOptions(manager="bench"))
        base = _trimmed(stored)
        allocation = {"devices": {"results": [{"request": "req-0", "driver": "gpu.example.com", "pool": "node-0",
                                               "device": "gpu-3"}]},
                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                          {"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}]},
                      "allocationTimestamp": NOW[0]}
        bodies = [{**base, "status": {"allocation": allocation, "reservedFor": [
            {"resource": "pods", "name": f"pod-{j}", "uid": f"00000000-0000-0000-0000-00000000000{j}"}]}}
            for j in range(2)]
        opts = WriteOptions(manager="scheduler", subresource="status")
        return lambda i: encoded(writes.update(rt, "default", "c", bodies[i % 2], opts)[0])
    raise SystemExit(f"unknown operation {name!r}; known: {', '.join(OPS)}")


def _loop(run: Callable[[int], bytes], start: int, count: int) -> None:
    for i in range(start, start + count):
        run(i)


def cpu_us(name: str, n: int) -> float:
    """CPU µs per call of operation ``name`` over ``n`` calls after the warm-up, collector off."""
    run = operation(name, WARM_UP + n)
    _loop(run, 0, WARM_UP)
    gc.disable()
    try:
        start = time.process_time_ns()
        _loop(run, WARM_UP, n)
        return (time.process_time_ns() - start) / 1000 / n
    finally:
        gc.enable()


def _callgrind_child(name: str, n: int) -> None:
    """Run under callgrind: count instructions of the measured loop only."""
    run = operation(name, WARM_UP + n)
    _loop(run, 0, WARM_UP)
    gc.disable()
    with callgrind_counting():
        _loop(run, WARM_UP, n)


def instructions(name: str, n: int) -> float:
    """Instructions per call of operation ``name``, counted by callgrind in a child process."""
    return callgrind_instructions([sys.executable, __file__, "--callgrind-child", name, "--n", str(n)]) / n


def profile(name: str, n: int) -> str:
    """cProfile of ``n`` calls of operation ``name``, the top functions by cumulative time."""
    run = operation(name, WARM_UP + n)
    _loop(run, 0, WARM_UP)
    gc.disable()
    profiler = cProfile.Profile()
    profiler.runcall(_loop, run, WARM_UP, n)
    gc.enable()
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(45)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_N} calls per operation, one run (CI smoke)")
    parser.add_argument("--runs", type=int, default=5, help="runs per operation for CPU figures (median)")
    parser.add_argument("--n", type=int, default=None, help=f"calls per run (default {N})")
    parser.add_argument("--ops", default=",".join(OPS), help="operations, comma-separated")
    parser.add_argument("--callgrind", action="store_true", help="instructions per call under callgrind")
    parser.add_argument("--profile", metavar="OP", help="cProfile one operation")
    parser.add_argument("--callgrind-child", metavar="OP", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = args.n or (QUICK_N if args.quick else N)
    if args.callgrind_child:
        _callgrind_child(args.callgrind_child, n)
        return
    if args.profile:
        print(profile(args.profile, n))
        return
    ops = args.ops.split(",")
    runs = 1 if args.quick else args.runs
    rows: list[list[object]] = []
    for name in ops:
        if args.callgrind:
            rows.append([name, round(instructions(name, n) / 1000, 1)])
        else:
            values = [cpu_us(name, n) for _ in range(runs)]
            rows.append([name, round(statistics.median(values), 1), f"{min(values):.1f}–{max(values):.1f}"])
    headers = ["operation", "k instructions / call"] if args.callgrind else ["operation", "CPU µs / call", "range"]
    print(f"Measured with `python bench/bench_registry.py` on {machine_description()}; {n} calls after "
          f"{WARM_UP} warm-up, collector off.\n")
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
