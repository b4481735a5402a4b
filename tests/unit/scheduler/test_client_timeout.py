"""ApiClient's bound on a lost answer: a request the server never answers fails with one of
TRANSPORT_ERRORS (TimeoutError) once REQUEST_TIMEOUT has passed, swept by the client's one timer;
a caller's own cancellation stays a cancellation, and the client serves the next request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from fakeapi.scheduler import client as client_module
from fakeapi.scheduler.client import PODS, TRANSPORT_ERRORS, ApiClient

SECONDS = 0.05


@pytest.fixture
async def server() -> AsyncIterator[str]:
    """A server answering ``/api/v1/namespaces/default/pods/quick`` at once and any other pod
    never."""
    async def pod(request: web.Request) -> web.Response:
        if request.match_info["name"] != "quick":
            await asyncio.Event().wait()
        return web.json_response({"kind": "Pod", "metadata": {"name": "quick"}})

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/pods/{name}", pod)
    runner = web.AppRunner(app, shutdown_timeout=0.1)  # the handlers left waiting end with the test
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "REQUEST_TIMEOUT", SECONDS)


@pytest.mark.usefixtures("short_timeout")
async def test_an_unanswered_request_times_out_and_the_next_is_served(server: str) -> None:
    async with ApiClient(server) as api:
        with pytest.raises(TRANSPORT_ERRORS) as failed:
            await asyncio.wait_for(api.get(PODS, "default", "lost"), 10)
        assert isinstance(failed.value, TimeoutError)
        assert "GET /api/v1/namespaces/default/pods/lost" in str(failed.value)
        assert (await api.get(PODS, "default", "quick"))["metadata"]["name"] == "quick"
        # Answered in time: nothing cancels the task once the deadline has passed.
        await asyncio.sleep(3 * SECONDS)
        assert (await api.get(PODS, "default", "quick"))["metadata"]["name"] == "quick"


@pytest.mark.usefixtures("short_timeout")
async def test_requests_in_flight_time_out_each(server: str) -> None:
    async with ApiClient(server) as api:
        results = await asyncio.wait_for(asyncio.gather(
            *(api.get(PODS, "default", name) for name in ("lost-1", "quick", "lost-2")), return_exceptions=True), 10)
    assert [type(r).__name__ for r in results] == ["TimeoutError", "dict", "TimeoutError"]


async def test_the_callers_cancellation_is_not_a_timeout(server: str) -> None:
    async with ApiClient(server) as api:
        request = asyncio.ensure_future(api.get(PODS, "default", "lost"))
        await asyncio.sleep(SECONDS)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
