"""Requests and DRA pods leave no cyclic garbage behind.

Garbage in a reference cycle outlives its last use until CPython's collector finds it, counts
toward the allocations that trigger young collections and makes each of them walk more; a user's
test process runs ``FakeCluster`` with the collector as it is.  These tests run each path once to
warm it up (first sights fill caches), then again with ``gc.DEBUG_SAVEALL``, which keeps what the
collector would free, and expect nothing.  Recursive closures (``managedfields.compare``'s diff,
``apply._owned``'s visitors) had made a cycle per update, patch and apply.  The last test is of
the same kind without a cycle: a stopped cluster's timers must not keep its parts alive.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import types
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

import aiohttp
import orjson
import yaml
import yarl
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES, ApiClient
from fakeapi.scheduler.http import HTTPConnection, Response

from fakeapi.cluster import FakeCluster
from fakeapi.machinery.deadlines import DeadlineSweep
from fakeapi.server.pipe import PipeTransport

CM = "/api/v1/namespaces/default/configmaps"
PODS_PATH = "/api/v1/namespaces/default/pods"
MANIFEST = resources.files("fakeapi.fixtures") / "manifests" / "gpu-cluster.yaml"
GVRS = {"DeviceClass": DEVICE_CLASSES, "Node": NODES, "ResourceSlice": RESOURCE_SLICES}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com"}}]}}}}


@contextmanager
def saved_garbage() -> Iterator[list[Any]]:
    """The objects that became cyclic garbage inside the block (collected at its start and end)."""
    gc.collect()
    gc.garbage.clear()
    found: list[Any] = []
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
    finally:
        gc.set_debug(0)
        found.extend(_without_yarl_origins(gc.garbage))
        gc.garbage.clear()


def _without_yarl_origins(garbage: list[Any]) -> list[Any]:
    """``garbage`` but yarl's own cycles: a URL that is its own origin caches itself, and yarl keeps
    parsed URLs in a bounded LRU cache, so once earlier tests have filled it each new URL string
    evicts such a self-cycle.  Only the URLs and what they hold directly (their cache) are left out."""
    urls = [o for o in garbage if isinstance(o, yarl.URL)]
    held = {id(r) for url in urls for r in gc.get_referents(url)}
    return [o for o in garbage if not isinstance(o, yarl.URL) and id(o) not in held]


def describe(garbage: list[Any]) -> str:
    kinds = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in garbage)
    functions = collections.Counter(o.__qualname__ for o in garbage if type(o).__name__ == "function")
    return f"{len(garbage)} objects: {kinds.most_common(8)}; functions {functions.most_common(5)}"


async def _every_verb(session: aiohttp.ClientSession, cluster: FakeCluster, n: int) -> None:
    """Create, read, list, watch, update, patch (four ways), status write and delete, and the
    usual client mistakes (400, 404, 409, 422), each answered as expected."""
    async def call(method: str, path: str, body: Any = None, content_type: str = "application/json",
                   expect: int = 200) -> bytes:
        data = None if body is None else orjson.dumps(body)
        async with session.request(method, url + path, data=data, headers={"Content-Type": content_type}) as resp:
            raw = await resp.read()
            assert resp.status == expect, (method, path, resp.status, raw[:300])
            return raw

    url, cm, pod = cluster.url, f"cm-{n}", f"pod-{n}"
    await call("POST", CM, {"metadata": {"name": cm}, "data": {"a": "1"}}, expect=201)
    await call("POST", CM, {"metadata": {"name": cm}}, expect=409)
    await call("POST", CM, {"metadata": {"name": "Not_A_Name"}}, expect=422)
    await call("POST", CM, expect=400)
    await call("GET", f"{CM}/missing-{n}", expect=404)
    stored = orjson.loads(await call("GET", f"{CM}/{cm}"))
    await call("PUT", f"{CM}/{cm}", {**stored, "data": {"a": "2"}})
    await call("PATCH", f"{CM}/{cm}", {"data": {"b": "3"}}, "application/merge-patch+json")
    await call("PATCH", f"{CM}/{cm}?fieldManager=tester", {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": cm}, "data": {"c": "4"}}, "application/apply-patch+yaml")
    await call("GET", f"{CM}?limit=2&labelSelector=x!=y")
    async with session.get(f"{url}{CM}?watch=1&resourceVersion={stored['metadata']['resourceVersion']}") as watch:
        assert orjson.loads(await watch.content.readline())["type"] == "MODIFIED"
        cluster.close_watches()  # ended by the server, so the connection stays (closing one makes asyncio's cycles)
        assert (await watch.content.read()).count(b"\n") == 2  # the apply's and the patch's events, then the end
    await call("DELETE", f"{CM}/{cm}")
    await call("POST", PODS_PATH, {"metadata": {"name": pod}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
               expect=201)
    await call("PATCH", f"{PODS_PATH}/{pod}", {"metadata": {"labels": {"l": "v"}}},
               "application/strategic-merge-patch+json")
    await call("PATCH", f"{PODS_PATH}/{pod}", [{"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}}],
               "application/json-patch+json")
    await call("PATCH", f"{PODS_PATH}/{pod}/status", {"status": {"phase": "Running"}}, "application/merge-patch+json")
    await call("DELETE", f"{PODS_PATH}/{pod}")


async def test_api_requests_leave_no_cyclic_garbage(fake_api: FakeCluster) -> None:
    async with aiohttp.ClientSession() as session:
        await _every_verb(session, fake_api, 0)
        with saved_garbage() as garbage:
            for n in range(1, 4):
                await _every_verb(session, fake_api, n)
    assert not garbage, describe(garbage)


async def test_dra_pods_leave_no_cyclic_garbage() -> None:
    # The whole path of a DRA pod in one process: creates, the claim controller, the scheduler's
    # allocation and binding, the kubelet's status writes, Events, and the informers' deliveries.
    async with FakeCluster() as cluster, ApiClient(cluster.url) as api:
        for obj in yaml.safe_load_all(MANIFEST.read_text()):
            if obj:
                await api.create(GVRS[obj["kind"]], None, obj)
        await api.create(RESOURCE_CLAIM_TEMPLATES, "default", TEMPLATE)

        async def run_pod(name: str) -> None:
            await api.create(PODS, "default", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                         "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}})

            async def running() -> bool:
                return ((await api.get(PODS, "default", name)).get("status") or {}).get("phase") == "Running"

            await wait_for(running, timeout=20, message=f"pod {name} to run")

        await run_pod("warm-up")
        with saved_garbage() as garbage:
            for i in range(3):
                await run_pod(f"pod-{i}")
    assert not garbage, describe(garbage)


async def test_a_cluster_stop_leaves_no_cancellation_or_connection_in_cycles() -> None:
    # The control plane's ~90 loops and informers end by cancellation: a CancelledError held
    # through its traceback by a frame it unwound kept every frame (and all they held) for the
    # collector; so did the pipes' two ends and the HTTP client's connections.  The objects that
    # reference each other by design (controllers and their informers) are left to it.
    async with FakeCluster():
        await asyncio.sleep(0)
    with saved_garbage() as garbage:
        async with FakeCluster():
            await asyncio.sleep(0)
    kept = [o for o in garbage if isinstance(o, types.FrameType | types.TracebackType | BaseException |
                                                PipeTransport | HTTPConnection | Response)]
    assert not kept, describe(kept)



async def test_a_stopped_cluster_leaves_no_deadline_timer_armed() -> None:
    # The server's request, header-read and bookmark timers and the control plane client's
    # request timer each sweep many deadlines with one timer handle; armed up to a minute ahead,
    # a handle kept its sweep (and what the sweep's callback holds) alive that long after a
    # test's cluster was gone: ~28 objects per cluster for every full collection to walk.
    def live_sweeps() -> int:
        gc.collect()
        return sum(isinstance(o, DeadlineSweep) for o in gc.get_objects())

    async def serve_one_request() -> int:
        async with FakeCluster() as cluster:
            async with aiohttp.ClientSession(cluster.url) as http, \
                    http.post(CM, json={"metadata": {"name": "armed"}}) as resp:
                assert resp.status == 201  # by now every sweep has had a deadline
            return live_sweeps()

    before = live_sweeps()
    assert await serve_one_request() >= before + 4
    assert live_sweeps() == before  # the cluster is gone, and nothing kept its sweeps
