"""The test-only FaultProxy: forwards, drops an answer after the commit, fails a request before
it, holds watch answers back, refuses anything but loopback."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from fakeapi.scheduler.client import EVENTS, NAMESPACES, TRANSPORT_ERRORS, ApiClient

from fakeapi.cluster import FakeCluster
from fakeapi.errors import NotFound
from tests.fault_proxy import FaultProxy


def event(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R", "message": "m"}


async def exists(api: ApiClient, name: str) -> bool:
    try:
        await api.get(EVENTS, "default", name)
    except NotFound:
        return False
    return True


async def test_faults_hit_the_chosen_request(fake_api: FakeCluster) -> None:
    async with FaultProxy(fake_api.url) as proxy, ApiClient(proxy.url) as via, ApiClient(fake_api.url) as direct:
        assert [n["metadata"]["name"] for n in (await via.list(NAMESPACES))["items"]] == \
            [n["metadata"]["name"] for n in (await direct.list(NAMESPACES))["items"]]

        lost = proxy.drop_response("POST", r"/events$", nth=2)
        await via.create(EVENTS, "default", event("first"))
        with pytest.raises(TRANSPORT_ERRORS):
            await via.create(EVENTS, "default", event("committed"))
        assert lost.request_lines == ["POST /api/v1/namespaces/default/events"]
        assert await exists(direct, "committed"), "the server handled the request whose answer was lost"

        proxy.fail_request("POST", r"/events$")
        with pytest.raises(TRANSPORT_ERRORS):
            await via.create(EVENTS, "default", event("never"))
        assert not await exists(direct, "never")
        assert proxy.dropped == ["POST /api/v1/namespaces/default/events"]


async def test_held_watch_answers_arrive_on_release(fake_api: FakeCluster) -> None:
    async with FaultProxy(fake_api.url) as proxy, ApiClient(proxy.url) as via, ApiClient(fake_api.url) as direct:
        rv = (await direct.list(EVENTS, "default"))["metadata"]["resourceVersion"]
        hold = proxy.hold_responses("GET", r"/events\?(.*&)?watch=true")
        seen: list[str] = []

        async def watch() -> None:
            async for ev in via.watch(EVENTS, "default", resource_version=rv, allow_bookmarks=False):
                seen.append(ev["object"]["metadata"]["name"])
                return
        task = asyncio.create_task(watch())
        await direct.create(EVENTS, "default", event("e"))
        await asyncio.wait_for(hold.holding.wait(), 5)
        assert seen == []
        hold.release()
        await asyncio.wait_for(task, 5)
        assert seen == ["e"]


async def test_chaos_resets_connections_and_calm_ends_it(fake_api: FakeCluster) -> None:
    async with FaultProxy(fake_api.url) as proxy, ApiClient(proxy.url) as via:
        proxy.chaos(random.Random(1), interval=(0.01, 0.02), reset_fraction=1.0, drop_probability=1.0)
        with pytest.raises(TRANSPORT_ERRORS):
            await via.create(EVENTS, "default", event("dropped"))
        proxy.calm()
        await via.create(EVENTS, "default", event("calm"))
        assert proxy.resets >= 1


def test_only_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        FaultProxy("http://example.com:80")
