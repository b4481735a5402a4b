"""The request timeout of what the server wraps each handler in: one sweep cancels what is overdue, and only that."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from fakeapi.config import ServerOptions
from fakeapi.server.app import REQUEST_DEADLINES, create_app, serving
from fakeapi.server.faults import FAULTS
from fakeapi.server.state import ACCESS

SECONDS = 0.05
CREATE = "/api/v1/namespaces/default/configmaps"
Serve = Callable[[web.Request, Callable[[web.Request], Awaitable[web.StreamResponse]]],
                 Awaitable[web.StreamResponse]]


def request_timeout(seconds: float) -> Serve:
    """What a server whose request timeout is ``seconds`` wraps each handler in."""
    app = create_app(ServerOptions(request_timeout=seconds))
    wrap = serving(app[REQUEST_DEADLINES], app[ACCESS], app[FAULTS])
    return lambda request, handler: wrap(handler)(_bound(request, app))


def _bound(request: web.Request, app: web.Application) -> web.Request:
    return make_mocked_request(request.method, request.raw_path, app=app)


def request(path: str = CREATE, method: str = "POST") -> web.Request:
    return make_mocked_request(method, path)


def timed_out(response: object) -> bool:
    """Whether ``response`` is upstream's 504 Timeout Status."""
    if not isinstance(response, web.Response) or response.status != 504:
        return False
    assert isinstance(response.body, bytes)
    status = orjson.loads(response.body)
    return (status["reason"], status["message"]) == (
        "Timeout", "Timeout: request did not complete within the allotted timeout")


async def quick(_: web.Request) -> web.StreamResponse:
    return web.Response(text="ok")


async def stuck(_: web.Request) -> web.StreamResponse:
    await asyncio.sleep(30)
    return web.Response(text="late")


async def test_overdue_requests_get_504_and_the_others_their_answers() -> None:
    timeout = request_timeout(SECONDS)
    results = await asyncio.gather(timeout(request(), stuck), timeout(request(), quick),
                                   timeout(request(), stuck), return_exceptions=True)
    assert [timed_out(r) for r in results] == [True, False, True]
    assert isinstance(results[1], web.Response) and results[1].text == "ok"
    # Later requests get deadlines of their own: the sweep timer starts again.
    assert (await timeout(request(), quick)).text == "ok"
    assert timed_out(await timeout(request(), stuck))


async def test_a_request_that_ends_in_time_is_never_cancelled() -> None:
    timeout = request_timeout(SECONDS)

    async def slow_but_in_time(_: web.Request) -> web.StreamResponse:
        await asyncio.sleep(SECONDS / 5)
        return web.Response(text="ok")

    for _ in range(3):
        assert (await timeout(request(), slow_but_in_time)).text == "ok"
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_another_cancellation_is_not_taken_for_a_timeout() -> None:
    timeout = request_timeout(30)
    task = asyncio.create_task(timeout(request(), stuck))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("target", [
    CREATE + "?watch=1", CREATE + "?limit=5&watch=true", CREATE + "?%77atch=1", "/api/v1/watch/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p/log?follow=true", "/api/v1/namespaces/default/pods/p/%6Cog",
], ids=["watch", "watch-later-in-query", "percent-encoded-watch", "watch-path", "log", "percent-encoded-log"])
async def test_long_running_requests_are_not_timed(target: str) -> None:
    timeout = request_timeout(SECONDS)

    async def outlives(_: web.Request) -> web.StreamResponse:
        await asyncio.sleep(SECONDS * 3)
        return web.Response(text="streamed")

    assert (await timeout(request(target, "GET"), outlives)).text == "streamed"


@pytest.mark.parametrize("target", [CREATE + "?watch=false", "/api/v1/namespaces/default/configmaps/watchful"],
                         ids=["watch-false", "name-containing-watch"])
async def test_targets_merely_mentioning_watch_are_timed(target: str) -> None:
    assert timed_out(await request_timeout(SECONDS)(request(target, "GET"), stuck))
