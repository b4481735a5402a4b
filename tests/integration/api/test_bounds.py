"""Bounded cost for every input, over HTTP: a deep object within the bound works on every path,
a write that storage refuses leaves no trace anywhere (store, list, watch), and the event log
holds a bounded number of bytes however large the objects churning through it."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions
from fakeapi.machinery.jsonlimits import MAX_DEPTH
from fakeapi.store.objects import MAX_OBJECT_BYTES
from tests.integration.api.conftest import CM, Api, configmap
from tests.integration.api.test_no_500 import deep

PODS = "/api/v1/namespaces/default/pods"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def pod(name: str, security_context: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if security_context is not None:
        spec["securityContext"] = security_context
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def test_an_object_as_deep_as_allowed_works_on_every_path(api: Api) -> None:
    # pod (1) > spec (2) > securityContext: the deepest body the server reads.
    body = pod("deep", deep(MAX_DEPTH - 2))
    async with api.watch(f"{PODS}?watch=1&resourceVersion=0") as watch:
        await api.ok("POST", PODS, body)
        assert (await watch.next())["object"]["metadata"]["name"] == "deep"
    status, table = await api.request("GET", f"{PODS}?includeObject=Object", headers={"Accept": TABLE})
    assert status == 200 and table["rows"][0]["object"]["spec"]["securityContext"] == deep(MAX_DEPTH - 2)
    async with api.session.get(f"{PODS}?watch=1&resourceVersion=0&includeObject=Object",
                               headers={"Accept": TABLE}) as resp:
        assert resp.status == 200 and b'"kind":"Table"' in await resp.content.readline()
    listed = await api.ok("GET", PODS)
    assert [p["metadata"]["name"] for p in listed["items"]] == ["deep"]
    await api.ok("PATCH", f"{PODS}/deep", {"metadata": {"labels": {"a": "b"}}},
                 content_type="application/merge-patch+json")
    await api.ok("PATCH", f"{PODS}/deep", [{"op": "add", "path": "/metadata/annotations", "value": {"x": "y"}}],
                 content_type="application/json-patch+json")
    await api.ok("DELETE", f"{PODS}/deep")


REFUSED = [
    # (id, method, path, body, content type, status, start of the message)
    ("nested-252-levels", "POST", PODS, pod("deep", deep(252)), "application/json", 400,
     "couldn't get version/kind; json parse error: exceeded max depth of 100"),
    ("larger-than-storage", "POST", CM, configmap("big", data={"v": "x" * MAX_OBJECT_BYTES}), "application/json", 413,
     "etcdserver: request is too large"),
    ("patched-larger-than-storage", "PATCH", f"{CM}/small",
     [{"op": "add", "path": "/data/more", "value": "x" * MAX_OBJECT_BYTES}], "application/json-patch+json", 413,
     "etcdserver: request is too large"),
]


@pytest.mark.parametrize(("method", "path", "body", "content_type", "status", "message"), [c[1:] for c in REFUSED],
                         ids=[c[0] for c in REFUSED])
async def test_a_refused_write_leaves_no_trace(api: Api, method: str, path: str, body: Any, content_type: str,
                                               status: int, message: str) -> None:
    await api.ok("POST", CM, configmap("small", data={"k": "v"}))  # /data exists for the JSON patch to add to
    before = await api.ok("GET", CM)
    rv = before["metadata"]["resourceVersion"]
    async with api.watch(f"{CM}?watch=1&resourceVersion={rv}") as cm_watch, \
            api.watch(f"{PODS}?watch=1&resourceVersion={rv}") as pod_watch:
        got, answer = await api.request(method, path, body, content_type=content_type)
        assert (got, answer["kind"], answer["code"], answer["message"][:len(message)]) == (
            status, "Status", status, message)
        # The next write is the first anything sees: nothing of the refused one was committed.
        await api.ok("POST", CM, configmap("after"))
        await api.ok("POST", PODS, pod("after"))
        assert (await cm_watch.next())["object"]["metadata"]["name"] == "after"
        assert (await pod_watch.next())["object"]["metadata"]["name"] == "after"
    after = await api.ok("GET", CM)
    assert [c["metadata"]["name"] for c in after["items"]] == ["after", "small"]
    assert int(after["metadata"]["resourceVersion"]) == int(rv) + 2
    assert await api.ok("GET", f"{CM}/small") == before["items"][0]


async def test_churning_large_objects_holds_a_bounded_event_log() -> None:
    budget = 4 * 1024 * 1024
    async with FakeCluster(control_plane=False, options=ServerOptions(event_window_bytes=budget)) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as session:
        api = Api(session, cluster)
        first = await api.ok("POST", CM, configmap("first"))
        for i in range(8):  # 16 watch lines of about 1 MiB each
            await api.ok("POST", CM, configmap(f"big-{i}", data={"v": "x" * (1 << 20)}))
            await api.ok("DELETE", f"{CM}/big-{i}")
        log = cluster.registry.store.log
        assert log.bytes <= budget
        async with api.watch(f"{CM}?watch=1&resourceVersion={first['metadata']['resourceVersion']}") as watch:
            event = await watch.next()
        assert event["type"] == "ERROR" and event["object"]["code"] == 410
