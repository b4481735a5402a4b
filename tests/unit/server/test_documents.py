"""Which discovery, health or OpenAPI document the catch-all route serves for a path: the paths
and patterns that aiohttp routes of their own used to match, and nothing else."""

from __future__ import annotations

from functools import partial

import aiohttp
import pytest
import yarl
from aiohttp.test_utils import TestServer

from fakeapi.server import app as server_app
from fakeapi.server.app import create_app, document_handler

CASES = [
    ("/api", server_app._api, {}),
    ("/api/", server_app._api, {}),
    ("/apis", server_app._apis, {}),
    ("/api/v1/", server_app._resources, {}),
    ("/version/", server_app._version, {}),
    ("/readyz", server_app._health, {}),
    ("/openapi/v3/", server_app._openapi_root, {}),
    ("/openapi/v2", server_app._openapi_v2, {}),
    ("/openapi/v3/apis/apps/v1", server_app._openapi_gv, {"tail": "apis/apps/v1"}),
    ("/openapi/v3/api/v1/", server_app._openapi_gv, {"tail": "api/v1/"}),
    ("/openapi/v3/apis%2Fapps%2Fv1", server_app._openapi_gv, {"tail": "apis/apps/v1"}),
    ("/apis/apps", server_app._api_group, {"group": "apps"}),
    ("/apis/apps/", server_app._api_group, {"group": "apps"}),
    ("/apis/apps/v1", server_app._resources, {"group": "apps", "version": "v1"}),
    ("/apis/apps/v1/", server_app._resources, {"group": "apps", "version": "v1"}),
    ("/apis/a%2Fb", server_app._api_group, {"group": "a/b"}),
    ("/", None, {}),
    ("/nope", None, {}),
    ("/api//", None, {}),
    ("/openapi/v2/", None, {}),
    ("/openapi/v3x", None, {}),
    ("/apis//", None, {}),
    ("/apis//v1", None, {}),
    ("/apis/apps//", None, {}),
    ("/apis/apps/v1/deployments", None, {}),
]


@pytest.mark.parametrize(("path", "handler", "keywords"), CASES, ids=[c[0] for c in CASES])
def test_document_handler(path: str, handler: object, keywords: dict[str, str]) -> None:
    found = document_handler(path)
    if isinstance(found, partial):
        assert (found.func, found.keywords) == (handler, keywords)
    else:
        assert (found, keywords) == (handler, {})


async def test_documents_answer_head_without_a_body_and_other_methods_405() -> None:
    async with TestServer(create_app()) as server, aiohttp.ClientSession() as session:
        async with session.get(server.make_url("/apis/apps/")) as resp:
            assert resp.status == 200
            assert (await resp.json())["name"] == "apps"
        async with session.head(server.make_url("/version")) as resp:
            assert resp.status == 200 and resp.content_type == "application/json"
            assert await resp.read() == b""
        async with session.post(server.make_url("/apis/apps/v1")) as resp:
            assert resp.status == 405
            assert (await resp.json())["reason"] == "MethodNotAllowed"
        url = yarl.URL(str(server.make_url("/")) + "openapi/v3/apis%2Fapps%2Fv1", encoded=True)
        async with session.get(url) as resp:
            assert resp.status == 200  # the path is decoded before it is matched, as Go's mux does
            assert "io.k8s.api.apps.v1.Deployment" in (await resp.json())["components"]["schemas"]
        async with session.get(server.make_url("/apis/nope.example.com")) as resp:
            assert resp.status == 404
