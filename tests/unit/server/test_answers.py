"""JSON answers written in one piece: on the wire exactly what aiohttp's own ``Response`` writes
(the Date aside), whether they take the one-piece path or fall back to aiohttp's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from fakeapi.server.answers import JSONResponse

BODY = b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}'
Respond = Callable[..., web.Response]


def _handler(answer: Respond, status: int, headers: dict[str, str] | None) -> Callable[[web.Request],
                                                                                      Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return answer(body=BODY, status=status, content_type="application/json", headers=headers)
    return handle


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, int]]:
    """Routes ``/{plain,whole}/{status}[/warned]``: aiohttp's Response and ours, same arguments."""
    app = web.Application()
    for prefix, answer in (("plain", web.Response), ("whole", JSONResponse)):
        for status in (200, 201, 204, 404):
            app.router.add_route("*", f"/{prefix}/{status}", _handler(answer, status, None))
            app.router.add_route("*", f"/{prefix}/{status}/warned",
                                 _handler(answer, status, {"Warning": '299 - "deprecated"'}))
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield host, port
    await runner.cleanup()


Answer = tuple[list[bytes], bytes]  # head lines without the Date, body


async def _read_answer(reader: asyncio.StreamReader, head_only: bool) -> Answer | None:
    """One answer, or None if the server closed the connection instead."""
    async with asyncio.timeout(5):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            assert exc.partial == b""
            return None
        lines = head.split(b"\r\n")[:-2]
        length = next((int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length:")), 0)
        body = b"" if head_only else await reader.readexactly(length)
    return [line for line in lines if not line.startswith(b"Date: ")], body


async def _exchange(address: tuple[str, int], raw: bytes, *, answers: int = 1,
                    head_only: bool = False) -> tuple[list[Answer], bool]:
    """Send ``raw`` on a new connection and read ``answers`` answers; then send it again: whether
    the connection was kept (a further answer) or closed (end of stream) after them."""
    reader, writer = await asyncio.open_connection(*address)
    try:
        writer.write(raw)
        out: list[Answer] = []
        for _ in range(answers):
            answer = await _read_answer(reader, head_only)
            assert answer is not None
            out.append(answer)
        try:
            writer.write(raw)
            await writer.drain()
        except ConnectionError:
            return out, False
        return out, await _read_answer(reader, head_only) is not None
    finally:
        writer.close()


def _request(method: str, path: str, *, version: str = "1.1", extra: str = "") -> bytes:
    body = b"{}" if method in ("POST", "PUT") else b""
    return (f"{method} {path} HTTP/{version}\r\nHost: test\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
            .encode() + body)


CASES = [
    pytest.param("POST", "201", "1.1", "", id="create, keep-alive"),
    pytest.param("GET", "200", "1.1", "", id="get"),
    pytest.param("GET", "404", "1.1", "", id="error Status"),
    pytest.param("PATCH", "200/warned", "1.1", "", id="with a Warning header"),
    pytest.param("GET", "200", "1.1", "Connection: close\r\n", id="the client closes"),
    pytest.param("GET", "200", "1.0", "", id="HTTP/1.0"),
    pytest.param("GET", "200", "1.0", "Connection: keep-alive\r\n", id="HTTP/1.0 keep-alive"),
    pytest.param("HEAD", "200", "1.1", "", id="HEAD"),
    pytest.param("GET", "204", "1.1", "", id="no content"),
]


@pytest.mark.parametrize(("method", "status", "version", "extra"), CASES)
async def test_the_same_answer_as_aiohttp_writes(server: tuple[str, int], method: str, status: str, version: str,
                                                 extra: str) -> None:
    plain, whole = [await _exchange(server, _request(method, f"/{prefix}/{status}", version=version, extra=extra),
                                    head_only=method == "HEAD") for prefix in ("plain", "whole")]
    assert whole == plain
    [(_, body)], kept = whole
    assert body == (b"" if method == "HEAD" or status == "204" else BODY)
    assert kept == ((version == "1.1" and not extra) or "keep-alive" in extra)


async def test_pipelined_requests(server: tuple[str, int]) -> None:
    """Three requests sent at once on one connection get three whole answers, in order."""
    raw = b"".join(_request(m, p) for m, p in (("POST", "/whole/201"), ("GET", "/whole/404"), ("GET", "/whole/200")))
    answers, kept = await _exchange(server, raw, answers=3)
    assert [head[0] for head, _ in answers] == [b"HTTP/1.1 201 Created", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 200 OK"]
    assert all(body == BODY for _, body in answers)
    assert kept


async def test_a_response_signal_sees_the_answer() -> None:
    """An application with ``on_response_prepare`` gets aiohttp's path, signal and all."""
    seen: list[int] = []

    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        seen.append(response.status)
        response.headers["X-Seen"] = "yes"

    app = web.Application()
    app.on_response_prepare.append(on_prepare)
    app.router.add_get("/", _handler(JSONResponse, 200, None))
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        [(head, body)], _ = await _exchange(runner.addresses[0][:2], _request("GET", "/"))
    finally:
        await runner.cleanup()
    assert seen == [200, 200]  # the request and _exchange's second
    assert b"X-Seen: yes" in head and body == BODY
