"""The in-process control plane reaches the server over a Unix socket in the cluster's private
directory, with the same HTTP, handlers and connection guard as the TCP address that tests'
clients keep using, on asyncio's loop and on uvloop's.

What is open is read from ``/proc/net/unix``, as ``ss -x`` shows it: the listening socket and one
connected socket under its path per accepted connection.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import pytest
from aiohttp import web
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import NAMESPACES, ApiClient

from fakeapi.cluster import CONTROL_PLANE_SOCKET, FakeCluster
from fakeapi.config import ServerOptions

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc/net/unix")

LISTENING, CONNECTED = "01", "03"  # /proc/net/unix's St column
SHORT = 0.3  # a shortened header-read timeout, seconds
DEADLINE = 10.0


def unix_sockets(state: str) -> list[str]:
    """Paths of this host's Unix sockets in ``state``, one entry per socket:
    ``Num RefCount Protocol Flags Type St Inode Path``."""
    return [columns[7] for line in Path("/proc/net/unix").read_text().splitlines()[1:]
            if len(columns := line.split()) == 8 and columns[5] == state]


def control_plane_socket(cluster: FakeCluster) -> str | None:
    """The path of ``cluster``'s listening Unix socket (beside its kubeconfig), if it has one."""
    path = str(cluster.kubeconfig_path.parent / CONTROL_PLANE_SOCKET)
    return path if path in unix_sockets(LISTENING) else None


async def test_the_control_plane_connects_over_a_unix_socket_and_clients_over_tcp() -> None:
    async with FakeCluster() as cluster:
        name = control_plane_socket(cluster)
        assert name is not None
        # Synced informers hold a streaming list each, on connections of their own.
        assert unix_sockets(CONNECTED).count(name) >= 10
        # Tests' clients keep the TCP address.
        assert cluster.url.startswith("http://127.0.0.1:")
        async with ApiClient(cluster.url) as api:
            assert (await api.get(NAMESPACES, None, "default"))["metadata"]["name"] == "default"
    assert name not in unix_sockets(LISTENING)
    assert name not in unix_sockets(CONNECTED)


async def test_the_unix_socket_serves_the_same_http() -> None:
    async with FakeCluster() as cluster:
        name = control_plane_socket(cluster)
        assert name is not None
        reader, writer = await asyncio.open_unix_connection(name)
        writer.write(b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: fakeapi\r\nConnection: close\r\n\r\n")
        response = await asyncio.wait_for(reader.read(), DEADLINE)
        writer.close()
        assert response.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b'"name":"default"' in response


async def test_the_unix_socket_is_guarded_like_the_tcp_address() -> None:
    async with FakeCluster(options=ServerOptions(header_read_timeout=SHORT)) as cluster:
        name = control_plane_socket(cluster)
        assert name is not None
        reader, writer = await asyncio.open_unix_connection(name)
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Nothing sent: the header-read timeout closes the connection, as it would over TCP.
        assert await asyncio.wait_for(reader.read(), DEADLINE) == b""
        assert loop.time() - started >= SHORT * 0.8
        writer.close()


@pytest.mark.parametrize("cluster_args", [{"control_plane": False}, {"control_plane": True, "secure": True}],
                         ids=["no-control-plane", "secure"])
async def test_no_unix_socket_without_an_insecure_in_process_control_plane(cluster_args: dict) -> None:
    async with FakeCluster(**cluster_args) as cluster:
        assert control_plane_socket(cluster) is None
        assert not (cluster.kubeconfig_path.parent / CONTROL_PLANE_SOCKET).exists()


async def test_the_control_planes_connections_are_closed_before_the_server_shuts_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Its watches then end as their client left, not by the shutdown's ending every watch.
    open_at_cleanup: list[int] = []
    cleanup = web.AppRunner.cleanup

    async def recording_cleanup(runner: web.AppRunner) -> None:
        open_at_cleanup.append(unix_sockets(CONNECTED).count(name))
        await cleanup(runner)

    monkeypatch.setattr(web.AppRunner, "cleanup", recording_cleanup)
    async with FakeCluster() as cluster:
        name = control_plane_socket(cluster)
        assert name is not None and unix_sockets(CONNECTED).count(name) >= 10
    assert open_at_cleanup == [0]


async def test_waiting_for_the_unix_connections_to_close() -> None:
    async with FakeCluster() as cluster:
        name = control_plane_socket(cluster)
        assert name is not None and cluster._site is not None
        _, writer = await asyncio.open_unix_connection(name)
        await asyncio.sleep(0)  # the server accepts it
        await cluster.pause_control_plane()
        # Still open: the wait ends by its timeout.
        loop = asyncio.get_running_loop()
        started = loop.time()
        await cluster._site.unix_closed(SHORT)
        assert loop.time() - started >= SHORT * 0.8
        # Closed by its client: the wait ends before its (long) timeout.
        writer.close()
        await asyncio.wait_for(cluster._site.unix_closed(DEADLINE * 3), DEADLINE)
        await cluster.resume_control_plane()


def test_the_control_plane_connects_over_the_unix_socket_on_uvloop() -> None:
    # A plain test's cluster runs on uvloop (the fixtures' loop thread), which connects to no
    # abstract Unix name: the socket is a file.
    uvloop = pytest.importorskip("uvloop")

    async def connected() -> int:
        async with FakeCluster() as cluster:
            name = control_plane_socket(cluster)
            assert name is not None
            return unix_sockets(CONNECTED).count(name)

    assert uvloop.run(connected()) >= 10


async def test_a_temporary_directory_too_deep_for_a_socket_keeps_the_control_plane_on_tcp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    async with FakeCluster() as cluster:
        assert str(cluster.kubeconfig_path).startswith(str(deep))
        assert control_plane_socket(cluster) is None
        async with ApiClient(cluster.url) as api:  # the control plane works: it made the default ServiceAccount
            async def default_service_account() -> bool:
                listed = await api.get_path("/api/v1/namespaces/default/serviceaccounts")
                return any(sa["metadata"]["name"] == "default" for sa in listed["items"])

            assert await wait_for(default_service_account, timeout=DEADLINE, message="the default ServiceAccount")
