"""The in-process control plane reaches the server through in-memory pipes (``GuardedSite.connect``)
with the same HTTP, handlers and connection guard as the TCP address that tests' clients keep
using, on asyncio's loop and on uvloop's; it holds no socket of its own."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from aiohttp import web
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import GVR, NAMESPACES, ApiClient
from fakeapi.scheduler.connection import Connection

from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions
from fakeapi.server.connections import GuardedSite

SHORT = 0.3  # a shortened header-read timeout, seconds
DEADLINE = 10.0
CONFIG_MAPS = GVR("", "v1", "configmaps", True)


def site(cluster: FakeCluster) -> GuardedSite:
    assert cluster._site is not None
    return cluster._site


def pipes_open(cluster: FakeCluster | GuardedSite) -> int:
    guarded = cluster if isinstance(cluster, GuardedSite) else site(cluster)
    return sum(h.piped for h in guarded._guard._open)


def sockets_open() -> int:
    """This process's open socket descriptors."""
    fds = Path("/proc/self/fd")
    return sum(os.readlink(fd).startswith("socket:") for fd in fds.iterdir() if fd.exists())


class Raw(asyncio.Protocol):
    """A client that writes bytes and collects what comes back until the connection ends."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


async def has_default_service_account(api: ApiClient, namespace: str) -> bool:
    listed = await api.get_path(f"/api/v1/namespaces/{namespace}/serviceaccounts")
    return any(sa["metadata"]["name"] == "default" for sa in listed["items"])


async def control_plane_writes(api: ApiClient, namespace: str = "probe") -> None:
    """Make a namespace and wait for the default ServiceAccount the control plane's
    serviceaccount loop writes into it (the bootstrap namespaces' accounts are the server's)."""
    await api.create(NAMESPACES, None, {"metadata": {"name": namespace}})
    assert await wait_for(lambda: has_default_service_account(api, namespace), timeout=DEADLINE,
                          message=f"the control plane's default ServiceAccount in {namespace}")


async def test_the_control_plane_connects_through_pipes_and_clients_over_tcp() -> None:
    async with FakeCluster() as cluster:
        # Every informer waits for its resource's first object: no watch yet.
        assert pipes_open(cluster) == 0
        # Tests' clients keep the TCP address.
        assert cluster.url.startswith("http://127.0.0.1:")
        async with ApiClient(cluster.url) as api:
            assert (await api.get(NAMESPACES, None, "default"))["metadata"]["name"] == "default"
            await control_plane_writes(api)
        # Then the serviceaccount loop's informers hold a streaming list each, on connections of
        # their own.
        assert pipes_open(cluster) >= 2


@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc/self/fd")
async def test_the_control_plane_holds_no_socket() -> None:
    async with FakeCluster(control_plane=False):
        without = sockets_open()
    async with FakeCluster() as cluster:
        await control_plane_writes(cluster.api)
        assert pipes_open(cluster) >= 2
        assert sockets_open() - without <= 2  # the test's own connection; its watches held 46 once


async def test_a_pipe_serves_the_same_http() -> None:
    async with FakeCluster(control_plane=False) as cluster:
        raw = Raw()
        end = site(cluster).connect(raw)
        end.write(b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: fakeapi\r\nConnection: close\r\n\r\n")
        await asyncio.wait_for(raw.ended, DEADLINE)
        assert raw.received.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b'"name":"default"' in raw.received


async def test_a_pipe_is_guarded_like_the_tcp_address() -> None:
    async with FakeCluster(control_plane=False, options=ServerOptions(header_read_timeout=SHORT)) as cluster:
        raw = Raw()
        site(cluster).connect(raw)
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Nothing sent: the header-read timeout closes the connection, as it would over TCP.
        await asyncio.wait_for(raw.ended, DEADLINE)
        assert raw.received == b""
        assert loop.time() - started >= SHORT * 0.8
    async with FakeCluster(control_plane=False, options=ServerOptions(max_connections=1)) as cluster:
        busy, refused = Raw(), Raw()
        site(cluster).connect(busy).write(b"GET /api/v1/namespaces?watch=1 HTTP/1.1\r\nHost: fakeapi\r\n\r\n")
        await wait_for(lambda: b"200 OK" in busy.received, timeout=DEADLINE, message="the watch's headers")
        site(cluster).connect(refused)
        await asyncio.wait_for(refused.ended, DEADLINE)
        assert refused.received.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")


async def test_a_reader_that_falls_behind_through_a_pipe_gets_410_and_others_keep_up() -> None:
    # The pipe's flow control holds the server back as a socket's would, so a watch nobody reads
    # fills its queue and is closed with 410 rather than the pipe buffering every event.
    async with FakeCluster(control_plane=False, options=ServerOptions(watcher_queue_limit=20)) as cluster, \
            ApiClient(Connection(cluster.url, connect=site(cluster).connect)) as api:
        async with api.http.stream("GET", api.target(CONFIG_MAPS.path("default"), {"watch": "1"})) as slow:
            assert slow.status == 200
            big = "x" * 20_000
            fast = api.watch(CONFIG_MAPS, "default", resource_version="0", allow_bookmarks=False)
            for i in range(300):  # the slow reader never reads while these land
                await api.create(CONFIG_MAPS, "default", {"metadata": {"name": f"big-{i}"}, "data": {"v": big}},
                                 result=False)
                event = await asyncio.wait_for(anext(fast), DEADLINE)
                assert event["object"]["metadata"]["name"] == f"big-{i}"
            await fast.aclose()
            lines = (await asyncio.wait_for(slow.read(), DEADLINE)).splitlines()
            assert b'"type":"ERROR"' in lines[-1] and b'"code":410' in lines[-1]


@pytest.mark.parametrize("cluster_args", [{"control_plane": False}, {"control_plane": True, "secure": True}],
                         ids=["no-control-plane", "secure"])
async def test_no_pipes_without_an_insecure_in_process_control_plane(cluster_args: dict) -> None:
    async with FakeCluster(**cluster_args) as cluster:
        if cluster_args["control_plane"]:  # it works, over TLS
            await control_plane_writes(cluster.api)
        assert pipes_open(cluster) == 0


async def test_the_control_planes_connections_are_closed_before_the_server_shuts_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Its watches then end as their client left, not by the shutdown's ending every watch.
    open_at_cleanup: list[int] = []
    cleanup = web.AppRunner.cleanup

    async def recording_cleanup(runner: web.AppRunner) -> None:
        open_at_cleanup.append(pipes_open(guarded))
        await cleanup(runner)

    monkeypatch.setattr(web.AppRunner, "cleanup", recording_cleanup)
    async with FakeCluster() as cluster:
        guarded = site(cluster)
        await control_plane_writes(cluster.api)
        assert pipes_open(guarded) >= 2
    assert open_at_cleanup == [0]


async def test_waiting_for_the_pipes_to_close() -> None:
    async with FakeCluster() as cluster:
        await control_plane_writes(cluster.api)  # so that its loop starts again with the others
        raw = Raw()
        end = site(cluster).connect(raw)
        await cluster.pause_control_plane()
        # Still open: the wait ends by its timeout.
        loop = asyncio.get_running_loop()
        started = loop.time()
        await site(cluster).pipes_closed(SHORT)
        assert loop.time() - started >= SHORT * 0.8
        # Closed by its client: the wait ends before its (long) timeout.
        end.close()
        await asyncio.wait_for(site(cluster).pipes_closed(DEADLINE * 3), DEADLINE)
        await cluster.resume_control_plane()
        assert pipes_open(cluster) >= 2


def test_the_control_plane_connects_through_pipes_on_uvloop() -> None:
    # A plain test's cluster runs on uvloop (the fixtures' loop thread).
    uvloop = pytest.importorskip("uvloop")

    async def connected() -> int:
        async with FakeCluster() as cluster, ApiClient(cluster.url) as api:
            await control_plane_writes(api)
            return pipes_open(cluster)

    assert uvloop.run(connected()) >= 2


async def test_the_control_plane_writes_on_after_the_server_closed_its_idle_connections() -> None:
    # Its client keeps connections alive between requests; the server closes those left idle
    # (upstream's IdleTimeout), and the next writes go out on new ones.
    async with FakeCluster(options=ServerOptions(idle_timeout=SHORT)) as cluster:
        async with ApiClient(cluster.url) as api:
            await control_plane_writes(api)
        written = pipes_open(cluster)  # the watches, and the connections the writes left idle
        assert await wait_for(lambda: pipes_open(cluster) < written, timeout=DEADLINE,
                              message="the server closing the control plane's idle connections")
        # A client of its own for the create: the test's first connection is closed idle too, and a
        # write the server's close races is not sent again (as Go's transport does not).
        async with ApiClient(cluster.url) as api:
            await control_plane_writes(api, "later")
