"""The application's lifetime: nothing keeps a served application alive once it is cleaned up."""

from __future__ import annotations

import gc
import weakref

import aiohttp
from aiohttp.test_utils import TestServer

from fakeapi.server.app import create_app


async def test_a_cleaned_up_application_is_collected() -> None:
    # aiohttp caches the handler chain built per route and application while an application has
    # middlewares, which kept every application served, its store included, alive (up to 1,024).
    app = create_app()
    alive = weakref.ref(app)
    async with TestServer(app) as server, aiohttp.ClientSession() as session:
        for path in ("/api/v1/namespaces", "/apis/apps/v1/deployments", "/version", "/nope"):
            async with session.get(server.make_url(path)) as resp:
                assert resp.status in (200, 404)
    del app, server
    gc.collect()
    assert alive() is None
