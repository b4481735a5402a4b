"""Informers against the real server: list+watch, resume after a dropped watch, re-list on 410."""

import asyncio
import contextlib

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import NAMESPACES, PODS, ApiClient
from fakeapi.scheduler.informers import Informer

from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions


def pod(name, labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class GatedApi(ApiClient):
    """An ApiClient whose (re)connecting watches wait while ``online`` is cleared."""

    def __init__(self, url):
        super().__init__(url)
        self.online = asyncio.Event()
        self.online.set()
        self.lists = 0   # complete listings: LISTs and streaming lists
        self.streaming_lists = 0

    async def list(self, *args, **kwargs):
        self.lists += 1
        return await super().list(*args, **kwargs)

    async def watch(self, *args, **kwargs):
        await self.online.wait()
        if kwargs.get("send_initial_events"):
            self.lists += 1
            self.streaming_lists += 1
        async for event in super().watch(*args, **kwargs):
            yield event


class Seen:
    def __init__(self):
        self.events = []

    def names(self, kind):
        return [name for k, name in self.events if k == kind]

    def attach(self, informer):
        informer.add_event_handler(lambda o: self.events.append(("add", o["metadata"]["name"])),
                                   lambda old, new: self.events.append(("update", new["metadata"]["name"])),
                                   lambda o: self.events.append(("delete", o["metadata"]["name"])))


@contextlib.asynccontextmanager
async def informer_running(api, gvr=PODS):
    informer = Informer(api, gvr)
    seen = Seen()
    seen.attach(informer)
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_synced(), 5)
        yield informer, seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def drop_watches(cluster, api, informer, seen):
    """Server closes the informer's live watch; its reconnect waits until ``api.online`` is set."""
    # A marker seen through the watch proves the watch is established before we cut it.
    await api.create(PODS, "default", pod("marker"))
    await wait_for(lambda: informer.lister.get("default", "marker"), message="the watch to be live")
    seen.events.clear()
    api.online.clear()
    cluster.registry.store.hub.close_all()


async def test_list_then_watch_sees_every_change(cluster, api):
    await api.create(PODS, "default", pod("before"))
    async with informer_running(api) as (informer, seen):
        assert seen.events == [("add", "before")]
        assert informer.lister.get("default", "before")["kind"] == "Pod"
        await api.create(PODS, "default", pod("after"))
        await api.patch(PODS, "default", "before", {"metadata": {"labels": {"x": "y"}}})
        await api.delete(PODS, "default", "after")
        await wait_for(lambda: ("delete", "after") in seen.events, message="the delete")
        assert seen.events == [("add", "before"), ("add", "after"), ("update", "before"), ("delete", "after")]
        assert informer.lister.get("default", "before")["metadata"]["labels"] == {"x": "y"}
        assert informer.lister.get("default", "after") is None


async def test_cluster_scoped_informer(api):
    async with informer_running(api, NAMESPACES) as (informer, _):
        assert informer.lister.get(None, "default") is not None


async def test_dropped_watch_resumes_without_relist(cluster):
    async with GatedApi(cluster.url) as api, informer_running(api) as (informer, seen):
        await drop_watches(cluster, api, informer, seen)
        await api.create(PODS, "default", pod("missed"))
        api.online.set()
        await wait_for(lambda: informer.lister.get("default", "missed"), message="the missed pod")
        assert api.lists == 1, "a resumable watch must not re-list"
        assert api.streaming_lists == 1, "the informer syncs with a streaming list (WatchList)"
        assert seen.events == [("add", "missed")]


@pytest.mark.parametrize("window", [5], ids=["event-window-5"])
async def test_expired_watch_relists_and_reports_the_difference(window):
    async with FakeCluster(control_plane=False, options=ServerOptions(event_window=window)) as cluster:
        async with GatedApi(cluster.url) as api:
            for name in ("keep", "change", "remove"):
                await api.create(PODS, "default", pod(name))
            async with informer_running(api) as (informer, seen):
                await drop_watches(cluster, api, informer, seen)
                await api.delete(PODS, "default", "remove")
                await api.patch(PODS, "default", "change", {"metadata": {"labels": {"v": "2"}}})
                for i in range(window + 2):  # push the informer's RV out of the server's window
                    await api.create(PODS, "default", pod(f"new-{i}"))
                api.online.set()
                await wait_for(lambda: api.lists == 2 and informer.lister.get("default", "new-0"),
                               message="the re-list")
                assert seen.names("delete") == ["remove"]
                assert seen.names("update") == ["change"]
                assert sorted(seen.names("add")) == sorted(f"new-{i}" for i in range(window + 2))
