"""The server's dispatcher: resource paths matched by prefix exactly as aiohttp's router matches
their routes, everything else (and every request while middlewares run) through the router."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from hypothesis import given, settings
from hypothesis import strategies as st

from fakeapi.server.app import RESOURCE_ROUTES, _resource_match, create_app, route_directly

# Segments chosen to hit every rule: braces, encoded slashes and percent signs, newlines, empty
# segments (doubled slashes), the resource prefixes themselves.
SEGMENTS = st.sampled_from(["api", "apis", "v1", "apps", "namespaces", "default", "{x}", "a{", "}", "%2F",
                            "%25", "%0A", "%7B", "", "a.b", "..", "%20", "~"])
PATHS = st.lists(SEGMENTS, min_size=0, max_size=6).map(lambda parts: "/" + "/".join(parts))
PREFIXED = st.tuples(st.sampled_from(["/api/v1/", "/apis/", "/apis/apps/", "/apis/apps/v1/"]), PATHS).map(
    lambda pair: pair[0] + pair[1].lstrip("/"))

_APP = create_app()


def _routed(path: str) -> tuple[object, dict[str, str]]:
    """The route aiohttp's router resolves ``path`` to, and its match info."""
    request = make_mocked_request("GET", path, app=_APP)
    match = asyncio.run(_APP.router.resolve(request))
    return match.route, dict(match)


@settings(max_examples=400, deadline=None)
@given(st.one_of(PATHS, PREFIXED))
def test_resource_paths_match_as_the_router_matches_them(path: str) -> None:
    core, grouped = _APP[RESOURCE_ROUTES]
    route, info = _routed(path)
    ours = _resource_match(make_mocked_request("GET", path).rel_url.path_safe, core, grouped)
    if route in (core, grouped):
        assert ours is not None, path
        assert (ours.route, dict(ours)) == (route, info)
    else:
        assert ours is None, path


@pytest.mark.parametrize(("path", "expected"), [
    ("/api/v1/namespaces/a%2Fb", {"tail": "namespaces/a/b"}),
    ("/apis/apps/v1/deployments", {"group": "apps", "version": "v1", "tail": "deployments"}),
    ("/apis/apps/v1", None),  # discovery: the documents' route
    ("/api/v1/", None),
    ("/api/v1/a%0Ab", {"tail": "a\nb"}),
    ("/apis/a{b/v1/x", None),
])
def test_examples(path: str, expected: dict[str, str] | None) -> None:
    core, grouped = _APP[RESOURCE_ROUTES]
    match = _resource_match(make_mocked_request("GET", path).rel_url.path_safe, core, grouped)
    assert (None if match is None else dict(match)) == expected


@pytest.fixture
async def served() -> AsyncIterator[tuple[web.Application, list[str], str]]:
    """A dispatcher-served application with a middleware that records the paths it sees."""
    seen: list[str] = []

    @web.middleware
    async def record(request: web.Request, handler: web.Handler) -> web.StreamResponse:
        seen.append(request.path)
        return await handler(request)

    app = create_app()
    app.middlewares.append(record)
    runner = web.AppRunner(app)
    await runner.setup()
    route_directly(runner)
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield app, seen, f"http://{host}:{port}"
    finally:
        await runner.cleanup()


async def test_middlewares_still_see_every_request(served: tuple[web.Application, list[str], str]) -> None:
    _, seen, url = served
    async with aiohttp.ClientSession() as session:
        for path in ("/api/v1/namespaces", "/apis/apps/v1/deployments", "/version"):
            async with session.get(url + path) as resp:
                assert resp.status == 200, path
    assert seen == ["/api/v1/namespaces", "/apis/apps/v1/deployments", "/version"]
