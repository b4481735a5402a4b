"""Watches through the official client's ``kubernetes.watch.Watch``: resume, 410, selectors, typed objects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from kubernetes import client, watch

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call, claim, configmap, pod


class WatchThread:
    """``Watch().stream(...)`` pumped from a worker thread into an asyncio queue."""

    def __init__(self, list_fn: Callable[..., Any], *args: Any, return_type: str | None = None,
                 **kwargs: Any) -> None:
        self._watch = watch.Watch(return_type)
        self._queue: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = asyncio.create_task(asyncio.to_thread(self._pump, list_fn, args, kwargs))

    def _pump(self, list_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            for event in self._watch.stream(list_fn, *args, timeout_seconds=30, **kwargs):
                self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except Exception as exc:  # handed to the test, which re-raises it
            self._loop.call_soon_threadsafe(self._queue.put_nowait, exc)

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if isinstance(item, BaseException):
            raise item
        return item

    async def events(self, count: int) -> list[tuple[str, str]]:
        """The next ``count`` events as (type, object name)."""
        return [(ev["type"], ev["object"].metadata.name) for ev in [await self.next() for _ in range(count)]]

    async def close(self) -> None:
        self._watch.stop()  # shuts the socket down, which unblocks the worker thread
        await asyncio.wait_for(self._thread, 5)


@asynccontextmanager
async def watching(list_fn: Callable[..., Any], *args: Any, **kwargs: Any) -> AsyncIterator[WatchThread]:
    stream = WatchThread(list_fn, *args, **kwargs)
    try:
        yield stream
    finally:
        await stream.close()


async def list_version(core: client.CoreV1Api, **kwargs: Any) -> str:
    return (await call(core.list_namespaced_config_map, "default", **kwargs)).metadata.resource_version


async def test_watch_from_list_version_sees_exactly_the_later_events(core: client.CoreV1Api) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("before"))
    rv = await list_version(core)
    await call(core.create_namespaced_config_map, "default", configmap("a"))
    await call(core.patch_namespaced_config_map, "a", "default", {"data": {"k": "v"}})
    await call(core.delete_namespaced_config_map, "before", "default")
    await call(core.create_namespaced_config_map, "default", configmap("marker"))

    async with watching(core.list_namespaced_config_map, "default", resource_version=rv) as stream:
        events = [await stream.next() for _ in range(4)]

    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "before"), ("ADDED", "marker")]
    versions = [int(e["object"].metadata.resource_version) for e in events]
    assert versions == sorted(versions) and versions[0] > int(rv)
    assert events[1]["object"].data == {"k": "v"}


async def test_watch_without_version_replays_state_then_goes_live(core: client.CoreV1Api) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("existing"))

    async with watching(core.list_namespaced_config_map, "default") as stream:
        assert await stream.events(1) == [("ADDED", "existing")]
        await call(core.create_namespaced_config_map, "default", configmap("live"))
        await call(core.delete_namespaced_config_map, "existing", "default")

        assert await stream.events(2) == [("ADDED", "live"), ("DELETED", "existing")]


async def test_watch_from_compacted_version_is_410(fake_api: FakeCluster, core: client.CoreV1Api) -> None:
    old = await list_version(core)
    new = await call(core.create_namespaced_config_map, "default", configmap("a"))
    fake_api.registry.store.log.compact(int(new.metadata.resource_version))

    async with watching(core.list_namespaced_config_map, "default", resource_version=old) as stream:
        with pytest.raises(client.ApiException) as info:
            await stream.next()

    assert info.value.status == 410
    assert info.value.reason.startswith("Expired: too old resource version:")


async def test_compacted_watch_error_event_shape(fake_api: FakeCluster, core: client.CoreV1Api) -> None:
    old = await list_version(core)
    new = await call(core.create_namespaced_config_map, "default", configmap("a"))
    fake_api.registry.store.log.compact(int(new.metadata.resource_version))

    resp = await call(core.list_namespaced_config_map, "default", watch=True, resource_version=old,
                      timeout_seconds=5, _preload_content=False)
    try:
        first = json.loads(await call(resp.readline))
    finally:
        resp.release_conn()

    assert first["type"] == "ERROR"
    status = first["object"]
    assert {k: status[k] for k in ("kind", "apiVersion", "status", "reason", "code")} == {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}
    assert status["message"].startswith(f"too old resource version: {old} (")


async def test_watch_with_label_selector_follows_transitions(core: client.CoreV1Api) -> None:
    rv = await list_version(core)
    await call(core.create_namespaced_config_map, "default", configmap("a", labels={"app": "web"}))
    await call(core.create_namespaced_config_map, "default", configmap("other", labels={"app": "db"}))
    await call(core.patch_namespaced_config_map, "a", "default", {"metadata": {"labels": {"app": "db"}}})
    await call(core.patch_namespaced_config_map, "a", "default", {"metadata": {"labels": {"app": "web"}}})
    await call(core.delete_namespaced_config_map, "a", "default")
    await call(core.create_namespaced_config_map, "default", configmap("marker", labels={"app": "web"}))

    async with watching(core.list_namespaced_config_map, "default", resource_version=rv,
                        label_selector="app in (web)") as stream:
        events = await stream.events(5)

    # Leaving the selector is a DELETED, coming back an ADDED; "other" never shows.
    assert events == [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "a"), ("DELETED", "a"), ("ADDED", "marker")]


async def test_watch_of_resource_claims_yields_typed_objects(resource_api: client.ResourceV1Api) -> None:
    rv = (await call(resource_api.list_namespaced_resource_claim, "default")).metadata.resource_version

    # Watch derives the item model from the list model's name ("V1ResourceClaim"), but kubernetes 37 calls it
    # ResourceV1ResourceClaim: name it, as users of this client must.
    async with watching(resource_api.list_namespaced_resource_claim, "default", resource_version=rv,
                        return_type="ResourceV1ResourceClaim") as stream:
        await call(resource_api.create_namespaced_resource_claim, "default", claim("rc1"))
        await call(resource_api.patch_namespaced_resource_claim, "rc1", "default",
                   {"metadata": {"labels": {"seen": "yes"}}})
        added, modified = await stream.next(), await stream.next()

    assert (added["type"], modified["type"]) == ("ADDED", "MODIFIED")
    assert type(added["object"]).__name__ == "ResourceV1ResourceClaim"
    assert added["object"].spec.devices.requests[0].name == "gpu"
    assert modified["object"].metadata.labels == {"seen": "yes"}


async def test_watch_cluster_wide_sees_every_namespace(core: client.CoreV1Api) -> None:
    await call(core.create_namespace, {"metadata": {"name": "team"}})
    rv = (await call(core.list_config_map_for_all_namespaces)).metadata.resource_version
    await call(core.create_namespaced_config_map, "team", configmap("t"))
    await call(core.create_namespaced_config_map, "default", configmap("d"))

    async with watching(core.list_config_map_for_all_namespaces, resource_version=rv) as stream:
        events = [await stream.next() for _ in range(2)]

    assert [(e["object"].metadata.namespace, e["object"].metadata.name) for e in events] == [
        ("team", "t"), ("default", "d")]


async def test_streaming_list_ends_initial_events_with_a_bookmark(core: client.CoreV1Api) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("a"))
    await call(core.create_namespaced_config_map, "default", configmap("b"))

    async with watching(core.list_namespaced_config_map, "default", send_initial_events=True,
                        resource_version_match="NotOlderThan", allow_watch_bookmarks=True) as stream:
        initial = [await stream.next() for _ in range(3)]
        await call(core.create_namespaced_config_map, "default", configmap("c"))
        live = await stream.next()

    assert [(e["type"], e["object"].metadata.name) for e in initial[:2]] == [("ADDED", "a"), ("ADDED", "b")]
    bookmark = initial[2]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["raw_object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    newest_initial = max(int(e["object"].metadata.resource_version) for e in initial[:2])
    assert int(bookmark["raw_object"]["metadata"]["resourceVersion"]) >= newest_initial
    assert (live["type"], live["object"].metadata.name) == ("ADDED", "c")


async def test_streaming_list_requires_not_older_than(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as info:
        await call(core.list_namespaced_config_map, "default", watch=True, send_initial_events=True,
                   _preload_content=False)

    assert info.value.status == 422
    assert "resourceVersionMatch" in json.loads(info.value.body)["message"]


async def test_unassigned_pod_watch_sees_binding_as_deleted(core: client.CoreV1Api) -> None:
    # The scheduler's informer watches spec.nodeName= : a bound pod must leave it with DELETED.
    await call(core.create_node, {"metadata": {"name": "n1"}})
    rv = (await call(core.list_pod_for_all_namespaces)).metadata.resource_version
    await call(core.create_namespaced_pod, "default", pod("p1"))
    await call(core.create_namespaced_pod_binding, "p1", "default",
               {"metadata": {"name": "p1"}, "target": {"kind": "Node", "name": "n1"}}, _preload_content=False)
    await call(core.create_namespaced_pod, "default", pod("marker"))

    async with watching(core.list_pod_for_all_namespaces, resource_version=rv,
                        field_selector="spec.nodeName=") as stream:
        events = [await stream.next() for _ in range(3)]

    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "p1"), ("DELETED", "p1"), ("ADDED", "marker")]
    # As upstream's cacher: DELETED carries the previous content (unbound) at the binding's resourceVersion.
    assert events[1]["object"].spec.node_name is None
    bound = await call(core.read_namespaced_pod, "p1", "default")
    assert events[1]["object"].metadata.resource_version == bound.metadata.resource_version
