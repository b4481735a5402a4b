"""Requests FakeCluster's dispatcher hands to aiohttp's router rather than straight to a resource
route (see ``fakeapi.server.app.dispatcher``) are answered as the router answers them."""

from __future__ import annotations

import pytest

from tests.integration.api.conftest import CM, Api, configmap


async def test_a_request_expecting_continue_gets_it_and_is_served(api: Api) -> None:
    async with api.session.post(CM, json=configmap("expecting"), expect100=True) as resp:
        assert resp.status == 201, await resp.text()
        assert (await resp.json())["metadata"]["name"] == "expecting"


@pytest.mark.parametrize(("path", "status", "kind"), [
    ("/apis/a%7Bb/v1/x", 404, "Status"),  # a brace: no {group} segment
    ("/api/v1/a%0Ab", 404, "Status"),  # a newline: a tail as any other
    ("/apis/apps/v1/namespaces/default/deployments/a%0Ab", 404, "Status"),
    ("/version%0A", 404, "Status"),  # the documents' route takes newlines too
    ("/apis/apps/v1", 200, "APIResourceList"),  # discovery
    (CM + "/nope", 404, "Status"),
])
async def test_paths_outside_the_resource_routes(api: Api, path: str, status: int, kind: str) -> None:
    code, body = await api.request("GET", path)
    assert (code, body["kind"]) == (status, kind)
