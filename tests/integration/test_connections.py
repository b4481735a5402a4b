"""Connection hygiene over real sockets: idle and header-read timeouts, the connection limit.

Timeouts are shortened through ``ServerOptions``; every wait has a deadline, and "still open
after the timeout" is shown by a sentinel connection that the same timeout has closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
from collections.abc import AsyncIterator

import aiohttp
import pytest
from fakeapi.fixtures import wait_for
from yarl import URL

from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions
from fakeapi.server.connections import UNREAD_BODY_WAIT
from tests.e2e.api.test_auth import ca_context

SHORT = 0.3  # a shortened timeout, seconds
LONG = 60.0  # a timeout that must not be the one that fires
DEADLINE = 10.0
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[FakeCluster]:
    async with FakeCluster(control_plane=False, options=request.param) as running:
        yield running
        while _opened:  # whatever the test left open, as a client closes its sockets
            _opened.pop().close()


def options(**changes: float | int) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("cluster", [ServerOptions(**changes)], indirect=True, ids=["options"])


# The raw connections of the running test, closed by the cluster fixture.
_opened: list[asyncio.StreamWriter] = []


async def connect(cluster: FakeCluster) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    url = URL(cluster.url)
    assert url.host == "127.0.0.1"
    reader, writer = await asyncio.open_connection(url.host, url.port)
    _opened.append(writer)
    return reader, writer


def request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: fakeapi\r\n\r\n".encode()


async def read_response(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """Status line and body of one non-chunked response, leaving the connection open."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return head.split(b"\r\n")[0], await asyncio.wait_for(reader.readexactly(length), DEADLINE)


async def closed_by_server(reader: asyncio.StreamReader) -> float:
    """Seconds until the server closes the connection without sending anything."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await asyncio.wait_for(reader.read(), DEADLINE) == b""
    return loop.time() - started


@options(header_read_timeout=SHORT, idle_timeout=LONG)
async def test_a_silent_new_connection_is_closed_after_the_header_read_timeout(cluster: FakeCluster) -> None:
    reader, _ = await connect(cluster)
    assert await closed_by_server(reader) >= SHORT * 0.8


@options(idle_timeout=SHORT, header_read_timeout=LONG)
async def test_a_kept_alive_connection_is_closed_after_the_idle_timeout(cluster: FakeCluster) -> None:
    reader, writer = await connect(cluster)
    writer.write(request("/version"))
    status, _ = await read_response(reader)
    assert status == b"HTTP/1.1 200 OK"
    assert await closed_by_server(reader) >= SHORT * 0.8


@pytest.mark.parametrize("after_a_request", [False, True], ids=["first-request", "after-a-request"])
@options(header_read_timeout=SHORT, idle_timeout=LONG)
async def test_a_half_sent_request_is_closed_after_the_header_read_timeout(cluster: FakeCluster,
                                                                           after_a_request: bool) -> None:
    reader, writer = await connect(cluster)
    if after_a_request:
        writer.write(request("/version"))
        await read_response(reader)
    writer.write(request("/version")[:-2])  # the blank line that ends the headers never comes
    assert await closed_by_server(reader) >= SHORT * 0.8


@options(header_read_timeout=SHORT, idle_timeout=LONG)
async def test_the_header_deadline_of_one_connection_closes_no_other(cluster: FakeCluster) -> None:
    """The header-read deadlines share one sweep: connections whose requests arrived before it
    ran (one kept alive, one accepted later) are still served after a silent one is closed."""
    served, served_writer = await connect(cluster)
    silent, _ = await connect(cluster)
    served_writer.write(request("/version"))
    assert (await read_response(served))[0] == b"HTTP/1.1 200 OK"
    later, later_writer = await connect(cluster)
    later_writer.write(request("/version"))
    assert (await read_response(later))[0] == b"HTTP/1.1 200 OK"
    assert await closed_by_server(silent) >= 0
    for reader, writer in ((served, served_writer), (later, later_writer)):
        writer.write(request("/version"))
        assert (await read_response(reader))[0] == b"HTTP/1.1 200 OK"


@options(header_read_timeout=SHORT, idle_timeout=LONG)
async def test_closed_half_sent_requests_are_logged_once_per_interval(cluster: FakeCluster,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "fakeapi")
    connections = [await connect(cluster) for _ in range(5)]
    for _, writer in connections:
        writer.write(request("/version")[:-2])
    await asyncio.gather(*(closed_by_server(reader) for reader, _ in connections))
    lines = [r for r in caplog.records if "no complete request headers" in r.getMessage()]
    assert len(lines) == 1


@options(idle_timeout=SHORT, header_read_timeout=SHORT)
async def test_an_open_watch_outlives_both_timeouts(cluster: FakeCluster) -> None:
    async with aiohttp.ClientSession(base_url=cluster.url) as session, \
            session.get(CONFIGMAPS, params={"watch": "1"}, timeout=aiohttp.ClientTimeout(total=DEADLINE)) as watch:
        assert watch.status == 200
        # A connection opened after the watch's, closed by the same timers: they have fired.
        sentinel, _ = await connect(cluster)
        await closed_by_server(sentinel)
        async with session.post(CONFIGMAPS, json={"metadata": {"name": "after-the-timeouts"}}) as created:
            assert created.status == 201
        event = json.loads(await asyncio.wait_for(watch.content.readline(), DEADLINE))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after-the-timeouts")


LIMIT = 50


@options(max_connections=LIMIT)
async def test_idle_connections_beyond_the_limit_do_not_keep_requests_out(cluster: FakeCluster,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "fakeapi")
    idle = [await connect(cluster) for _ in range(2 * LIMIT)]
    async with aiohttp.ClientSession(base_url=cluster.url) as session, session.get("/version") as resp:
        assert resp.status == 200
    # The longest-idle connections made room, one per newcomer: the server holds LIMIT at most.
    pending = {asyncio.ensure_future(closed_by_server(reader)) for reader, _ in idle}
    displaced = 0
    async with asyncio.timeout(DEADLINE):
        while displaced < LIMIT + 1:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            displaced += len(done)
    for task in pending:
        task.cancel()
    lines = [r for r in caplog.records if f"connection limit {LIMIT} reached" in r.getMessage()]
    assert len(lines) == 1


async def open_watch(cluster: FakeCluster) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await connect(cluster)
    writer.write(request(f"{CONFIGMAPS}?watch=1"))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE)
    assert head.startswith(b"HTTP/1.1 200 OK")
    return reader, writer


@options(max_connections=3)
async def test_at_the_limit_with_every_connection_busy_a_new_one_gets_503(cluster: FakeCluster,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "fakeapi")
    watches = [await open_watch(cluster) for _ in range(3)]
    for _ in range(3):
        reader, writer = await connect(cluster)
        writer.write(request("/version"))
        answer = await asyncio.wait_for(reader.read(), DEADLINE)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 Service Unavailable")
        status = json.loads(body)
        assert (status["kind"], status["reason"], status["code"]) == ("Status", "ServiceUnavailable", 503)
    lines = [r for r in caplog.records if "every connection busy" in r.getMessage()]
    assert len(lines) == 1
    # The busy connections were left alone: with one watch ended, the others see a new object.
    watches.pop()[1].close()
    async with aiohttp.ClientSession(base_url=cluster.url) as session, asyncio.timeout(DEADLINE):
        while True:  # until the server has seen the watch go; a refusal may also be a reset
            with contextlib.suppress(aiohttp.ClientConnectionError):
                async with session.post(CONFIGMAPS, json={"metadata": {"name": "made-room"}}) as created:
                    if created.status != 503:
                        assert created.status == 201
                        break
    for reader, writer in watches:
        size = int(await asyncio.wait_for(reader.readline(), DEADLINE), 16)  # chunked encoding
        event = json.loads(await asyncio.wait_for(reader.readexactly(size), DEADLINE))
        assert event["object"]["metadata"]["name"] == "made-room"
        writer.close()


def half_sent_create(name: str) -> bytes:
    """A create whose headers promise more body than is sent: the request waits for the rest."""
    body = json.dumps({"metadata": {"name": name}}).encode()
    return (f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: fakeapi\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body[:-3]


async def timed_out(reader: asyncio.StreamReader) -> float:
    """Seconds until the server answers a request with upstream's 504 Timeout Status; it closes the
    connection right after, not once a lingering read of the unsent rest of the body gives up."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    status, body = await read_response(reader)
    elapsed = loop.time() - started
    assert status == b"HTTP/1.1 504 Gateway Timeout"
    answer = json.loads(body)
    assert (answer["kind"], answer["reason"], answer["code"], answer["details"]) == ("Status", "Timeout", 504, {})
    assert answer["message"] == "Timeout: request did not complete within the allotted timeout"
    assert await asyncio.wait_for(reader.read(), UNREAD_BODY_WAIT / 2) == b""
    return elapsed


@options(request_timeout=SHORT, header_read_timeout=LONG, idle_timeout=LONG, max_connections=3)
async def test_half_sent_bodies_get_504_after_the_request_timeout_and_leave_room(cluster: FakeCluster) -> None:
    stalled = [await connect(cluster) for _ in range(3)]
    for i, (_, writer) in enumerate(stalled):
        writer.write(half_sent_create(f"stalled-{i}"))
    for elapsed in await asyncio.gather(*(timed_out(reader) for reader, _ in stalled)):
        assert elapsed >= SHORT * 0.8
    # The limit's busy connections were those requests: a new one is served, and nothing was stored.
    async with aiohttp.ClientSession(base_url=cluster.url) as session, session.get(CONFIGMAPS) as listed:
        assert listed.status == 200
        assert (await listed.json())["items"] == []


PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize(("path", "query"), [
    (PODS, {"watch": "1"}), (PODS, {"watch": "true"}), (f"{PODS}/runner/log", {"follow": "true"}),
], ids=["watch-1", "watch-true", "pods-log-follow"])
@options(request_timeout=SHORT, header_read_timeout=LONG, idle_timeout=LONG)
async def test_long_running_requests_outlive_the_request_timeout(cluster: FakeCluster, path: str,
                                                                 query: dict[str, str]) -> None:
    started = {"containerStatuses": [{"name": "main", "image": "busybox", "imageID": "", "ready": True,
                                      "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
    async with aiohttp.ClientSession(base_url=cluster.url) as session:
        async with session.post(PODS, json={"metadata": {"name": "runner"}, "spec": {
                "nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]}}) as created:
            assert created.status == 201, await created.text()
        async with session.patch(f"{PODS}/runner/status", json={"status": started},
                                 headers={"Content-Type": "application/merge-patch+json"}) as patched:
            assert patched.status == 200, await patched.text()
        # The same path without the query is not long-running; the stream must still be.
        async with session.get(path) as plain:
            assert plain.status == 200
        async with session.get(path, params=query, timeout=aiohttp.ClientTimeout(total=DEADLINE)) as stream:
            assert stream.status == 200
            await asyncio.wait_for(stream.content.readline(), DEADLINE)  # ADDED, or the first log line
            # A request sent after the stream opened, ended by the same timeout: it has passed.
            sentinel, writer = await connect(cluster)
            writer.write(half_sent_create("sentinel"))
            await timed_out(sentinel)
            async with session.patch(f"{PODS}/runner", json={"metadata": {"annotations": {
                    "fakeapi.dev/log": "after the timeout\n"}}},
                    headers={"Content-Type": "application/merge-patch+json"}) as changed:
                assert changed.status == 200
            line = await asyncio.wait_for(stream.content.readline(), DEADLINE)
    if "watch" in query:
        event = json.loads(line)
        assert (event["type"], event["object"]["metadata"]["annotations"]) == (
            "MODIFIED", {"fakeapi.dev/log": "after the timeout\n"})
    else:
        assert line == b"after the timeout\n"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["address", "name"])
async def test_the_server_listens_on_an_address_or_a_name(host: str) -> None:
    # An address is taken as it is; a name is resolved (the resolver may block, so off the loop).
    async with FakeCluster(control_plane=False, options=ServerOptions(host=host)) as running:
        assert URL(running.url).host in ("127.0.0.1", "::1")  # the address it bound
        async with aiohttp.ClientSession() as session, session.get(running.url + "/version") as resp:
            assert resp.status == 200
            assert (await resp.json())["gitVersion"].startswith("v1.")


@pytest.mark.parametrize(("path", "fault"), [
    ("/api/v1/namespaces/default/nosuchthings", False), (CONFIGMAPS, True),
], ids=["unknown-resource-404", "injected-429"])
@options(request_timeout=LONG, header_read_timeout=LONG, idle_timeout=LONG)
async def test_an_answer_sent_before_its_body_arrived_keeps_the_connection(cluster: FakeCluster, path: str,
                                                                           fault: bool) -> None:
    # A client sends headers and body apart (urllib3 does, so the kubernetes client does); an
    # error answered before the body arrives must not leave a connection that closes under the
    # client's next request: the rest of the body is read and dropped, as Go's server discards it.
    body = json.dumps({"metadata": {"name": "late"}}).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: fakeapi\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    reader, writer = await connect(cluster)
    with cluster.faults.fail(verb="create", resource="configmaps", code=429, count=1) if fault \
            else contextlib.nullcontext():
        writer.write(head)
        status, _ = await read_response(reader)
    assert status in (b"HTTP/1.1 404 Not Found", b"HTTP/1.1 429 Too Many Requests")
    writer.write(body)
    writer.write(request(CONFIGMAPS))
    status, listed = await read_response(reader)
    assert status == b"HTTP/1.1 200 OK"
    assert json.loads(listed)["items"] == []
    writer.close()


_ESTABLISHED, _CLOSE, _CLOSE_WAIT = 1, 7, 8  # Linux's TCP states, the first byte of TCP_INFO


async def test_a_stopped_secure_server_closes_the_tls_connections_a_client_keeps_idle() -> None:
    """A pooled client (urllib3's, the kubernetes client's) keeps its TLS connection and never
    reads it again: the server's close_notify goes unanswered.  The stop must still close the
    server's socket, which the client's socket sees as the peer's FIN, not wait for the answer."""
    async with FakeCluster(control_plane=False, secure=True) as running:
        context = ca_context(running)
        url = URL(running.url)

        def idle_client() -> ssl.SSLSocket:
            raw = socket.create_connection((url.host, url.port), timeout=DEADLINE)
            tls = context.wrap_socket(raw, server_hostname=url.host)
            tls.sendall(request("/readyz"))
            assert tls.recv(4096).startswith(b"HTTP/1.1 200")  # small: one record
            return tls

        client = await asyncio.to_thread(idle_client)
    try:
        def state() -> int:
            return client.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]

        assert state() in (_ESTABLISHED, _CLOSE_WAIT, _CLOSE)
        # The peer's FIN (or its RST, had anything been left unread) ends the client's side.
        await wait_for(lambda: state() in (_CLOSE_WAIT, _CLOSE), timeout=DEADLINE,
                       message="the server's socket closed")
    finally:
        client.close()
