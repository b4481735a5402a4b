"""The control plane's HTTP/1.1 client against scripted servers (in-memory pipes): how it reads
answers (Content-Length, chunked in any split, to EOF, after an interim 1xx), when it reuses a
connection, which requests it sends again, and what it does with bytes that are not HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from fakeapi.scheduler.http import STREAM_HIGH_WATER, HTTPClient, ProtocolError

from fakeapi.server.pipe import pipe

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"


class Scripted(asyncio.Protocol):
    """A server end that answers the n-th request with ``answers[n]`` (bytes, or a function of
    this protocol), and records the requests' heads."""

    def __init__(self, answers: list[bytes | Callable[[Scripted], None]], log: list[bytes]) -> None:
        self.answers, self.log = answers, log
        self.transport: asyncio.Transport | None = None
        self.data = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.data += data
        while b"\r\n\r\n" in self.data:
            head, _, self.data = self.data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            self.data = self.data[length:]
            self.log.append(head)
            answer = self.answers.pop(0)
            if callable(answer):
                answer(self)
            else:
                assert self.transport is not None
                self.transport.write(answer)


def client(answers: list[bytes | Callable[[Scripted], None]], log: list[bytes] | None = None,
           url: str = "http://fakeapi:6443/prefix") -> tuple[HTTPClient, list[Scripted]]:
    servers: list[Scripted] = []
    log = [] if log is None else log

    def connect(protocol: asyncio.Protocol) -> asyncio.Transport:
        server = Scripted(answers, log)
        servers.append(server)
        return pipe(asyncio.get_running_loop(), server, protocol)[1]

    return HTTPClient(url, {"User-Agent": "test", "Authorization": "Bearer t"}, connect=connect), servers


async def test_a_request_and_its_answer_by_length() -> None:
    log: list[bytes] = []
    http, servers = client([OK, OK], log)
    assert await http.request("POST", "/api/v1/x?a=b", b"{}", "application/json") == (200, b'{"a":1}')
    assert await http.request("GET", "/api/v1/y") == (200, b'{"a":1}')
    assert len(servers) == 1  # kept alive
    assert log[0].split(b"\r\n") == [b"POST /prefix/api/v1/x?a=b HTTP/1.1", b"Host: fakeapi:6443", b"User-Agent: test",
                                     b"Authorization: Bearer t", b"Content-Type: application/json",
                                     b"Content-Length: 2"]
    await http.close()


@pytest.mark.parametrize("split", [1, 2, 3, 5, 7, 1000])
async def test_a_chunked_answer_in_any_split(split: int) -> None:
    body = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n")

    def dribble(server: Scripted) -> None:
        assert server.transport is not None
        for i in range(0, len(body), split):
            server.transport.write(body[i:i + split])

    http, servers = client([dribble, OK])
    assert await http.request("GET", "/") == (200, b"hello world")
    assert await http.request("GET", "/") == (200, b'{"a":1}')
    assert len(servers) == 1
    await http.close()


async def test_an_interim_answer_is_skipped_and_a_body_may_end_at_eof() -> None:
    def until_eof(server: Scripted) -> None:
        assert server.transport is not None
        server.transport.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 404 Not Found\r\n\r\nnot here")
        server.transport.close()

    http, servers = client([until_eof, OK])
    assert await http.request("GET", "/") == (404, b"not here")
    assert await http.request("GET", "/") == (200, b'{"a":1}')
    assert len(servers) == 2  # an answer read to EOF ends its connection
    await http.close()


async def test_connection_close_is_obeyed() -> None:
    http, servers = client([b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", OK])
    assert await http.request("DELETE", "/") == (204, b"")
    assert await http.request("GET", "/") == (200, b'{"a":1}')
    assert len(servers) == 2
    await http.close()


def hang_up(server: Scripted) -> None:
    assert server.transport is not None
    server.transport.close()


async def test_a_get_on_a_connection_the_server_closed_is_sent_again() -> None:
    http, servers = client([OK, hang_up, OK])
    await http.request("GET", "/")
    assert await http.request("GET", "/") == (200, b'{"a":1}')
    assert len(servers) == 2
    await http.close()


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_a_write_is_not_sent_again(method: str) -> None:
    http, servers = client([OK, hang_up, OK])
    await http.request("GET", "/")
    with pytest.raises(ConnectionResetError, match="before its answer was complete"):
        await http.request(method, "/", b"{}", "application/json")
    assert len(servers) == 1
    await http.close()


async def test_an_answer_cut_short_fails_as_a_transport_error() -> None:
    def cut(server: Scripted) -> None:
        assert server.transport is not None
        server.transport.write(OK[:-3])
        server.transport.close()

    http, _ = client([cut])
    with pytest.raises(ConnectionResetError):
        await http.request("GET", "/")
    await http.close()


@pytest.mark.parametrize("answer", [b"SSH-2.0-OpenSSH_9.6\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY",
                                    b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000])
async def test_bytes_that_are_not_http_fail_the_request(answer: bytes) -> None:
    http, servers = client([answer, OK])
    with pytest.raises(ProtocolError):
        await asyncio.wait_for(http.request("GET", "/"), 5)
    assert await http.request("GET", "/") == (200, b'{"a":1}')  # on a new connection
    assert len(servers) == 2
    await http.close()


async def test_a_stream_nobody_reads_stops_reading_the_connection() -> None:
    piece = b"x" * 4096
    writes: list[asyncio.Task[None]] = []

    async def write_all(transport: asyncio.Transport) -> None:
        transport.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(200):  # a piece per loop iteration, as a socket's reads would come
            transport.write(b"1000\r\n" + piece + b"\r\n")
            await asyncio.sleep(0)
        transport.write(b"0\r\n\r\n")

    def flood(server: Scripted) -> None:
        assert server.transport is not None
        writes.append(asyncio.create_task(write_all(server.transport)))

    http, servers = client([flood])
    async with http.stream("GET", "/watch") as response:
        assert response.status == 200
        await writes[0]
        # The client took about its high-water mark; the rest waits in the pipe (the server's
        # write buffer), as it would in a socket's.
        transport = servers[0].transport
        assert transport is not None
        assert transport.get_write_buffer_size() >= 200 * 4096 - STREAM_HIGH_WATER - 2 * 4096
        received = b"".join([chunk async for chunk in response.chunks()])
    assert received == piece * 200
    assert transport.get_write_buffer_size() == 0
    await http.close()


async def test_connections_in_use_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fakeapi.scheduler.http.CONNECTION_LIMIT", 3)
    held: list[Scripted] = []  # the servers of requests not answered yet
    http, servers = client([held.append] * 5)

    async def answer_held() -> None:
        for _ in range(20):
            await asyncio.sleep(0)
        for server in held:
            assert server.transport is not None
            server.transport.write(OK)
        held.clear()

    requests = [asyncio.create_task(http.request("GET", "/")) for _ in range(5)]
    await answer_held()  # the first three: two requests wait for a connection meanwhile
    assert len(servers) == 3
    await answer_held()  # the two others, on connections the first three freed
    assert [await r for r in requests] == [(200, b'{"a":1}')] * 5
    assert len(servers) == 3
    await http.close()


async def test_a_request_cancelled_as_its_connection_is_made_stays_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.11's asyncio.wait_for returns the inner result when the inner awaitable finished
    # in the same loop turn as the cancellation, swallowing it: a control-plane loop cancelled
    # at stop while its request connected went on (and ran until its process was killed).
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Scripted([OK], []), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    real_create_connection = loop.create_connection

    async def connect_then_get_cancelled(*args: object, **kwargs: object) -> object:
        made = await real_create_connection(*args, **kwargs)  # type: ignore[arg-type]
        requester.cancel()  # the request's task is cancelled just as its connection is made
        return made

    monkeypatch.setattr(loop, "create_connection", connect_then_get_cancelled)
    http = HTTPClient(f"http://127.0.0.1:{port}", {"User-Agent": "test"})
    requester = asyncio.create_task(http.request("GET", "/version"))
    try:
        with pytest.raises(asyncio.CancelledError):
            async with asyncio.timeout(10):
                await requester
        assert requester.cancelled()
    finally:
        await http.close()
        server.close()
        await server.wait_closed()
