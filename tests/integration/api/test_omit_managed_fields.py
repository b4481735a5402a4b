"""The ``Fakeapi-Omit-Managed-Fields: true`` request header (a fakeapi extension): objects are read
without ``metadata.managedFields`` in every answer, list and watch event of that request, and what
is stored, and what other clients read, keeps them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest_asyncio
from fakeapi.scheduler.client import GVR, ApiClient

from fakeapi.cluster import FakeCluster
from fakeapi.machinery.managedfields import OMIT_MANAGED_FIELDS_HEADER
from tests.integration.api.conftest import CM, Api, Watch, configmap

POD = "/api/v1/namespaces/default/pods"
CONFIGMAPS = GVR("", "v1", "configmaps", True)


@pytest_asyncio.fixture
async def lean(fake_api: FakeCluster) -> AsyncIterator[Api]:
    """A client whose every request carries the header."""
    async with aiohttp.ClientSession(base_url=fake_api.url, headers={OMIT_MANAGED_FIELDS_HEADER: "true"}) as session:
        yield Api(session, fake_api)


def _managed(obj: dict[str, Any]) -> list[Any] | None:
    return obj["metadata"].get("managedFields")


async def test_answers_and_lists_leave_them_out_and_the_store_keeps_them(api: Api, lean: Api) -> None:
    created = await lean.ok("POST", CM, configmap("a", data={"k": "v"}))
    assert "managedFields" not in created["metadata"] and created["data"] == {"k": "v"}
    stored = await api.ok("GET", f"{CM}/a")
    assert _managed(stored) and stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert await lean.ok("GET", f"{CM}/a") == created
    assert [_managed(o) for o in (await lean.ok("GET", CM))["items"]] == [None]
    assert [bool(_managed(o)) for o in (await api.ok("GET", CM))["items"]] == [True]

    # Writes answer without them; a write of an object without them keeps the stored entries.
    updated = await lean.ok("PUT", f"{CM}/a", {**created, "data": {"k": "w"}},
                            headers={"Content-Type": "application/json"})
    assert "managedFields" not in updated["metadata"]
    patched = await lean.ok("PATCH", f"{CM}/a?fieldManager=patcher", {"data": {"k": "x"}},
                            content_type="application/merge-patch+json")
    assert "managedFields" not in patched["metadata"]
    managers = {e["manager"] for e in _managed(await api.ok("GET", f"{CM}/a"))}
    assert "patcher" in managers and len(managers) >= 2


async def test_status_writes_and_deletes_answer_without_them(api: Api, lean: Api) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": ["example.com/hold"]},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    await api.ok("POST", POD, pod)
    status = await lean.ok("PATCH", f"{POD}/p/status", {"status": {"phase": "Running"}},
                           content_type="application/merge-patch+json")
    assert status["status"]["phase"] == "Running" and "managedFields" not in status["metadata"]
    assert "managedFields" not in (await lean.ok("GET", f"{POD}/p/status"))["metadata"]
    # A delete that leaves the object (its finalizer) answers with it.
    lingering = await lean.ok("DELETE", f"{POD}/p")
    assert lingering["metadata"]["deletionTimestamp"] and "managedFields" not in lingering["metadata"]
    assert _managed(await api.ok("GET", f"{POD}/p"))


async def test_watches_leave_them_out_of_initial_and_live_events_alone(api: Api, lean: Api) -> None:
    await api.ok("POST", CM, configmap("before", data={"k": "v"}))
    start = (await api.ok("GET", CM))["metadata"]["resourceVersion"]
    stream = "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    async with Watch(lean.session, CM + stream) as streaming, \
            Watch(lean.session, f"{CM}?watch=true&resourceVersion={start}") as live, \
            Watch(api.session, f"{CM}?watch=true&resourceVersion={start}") as plain:
        [initial] = await streaming.events(1)
        assert initial["type"] == "ADDED" and initial["object"]["metadata"]["name"] == "before"
        assert "managedFields" not in initial["object"]["metadata"]
        await api.ok("POST", CM, configmap("after", data={"k": "v"}))
        for watch in (streaming, live):
            [event] = await watch.events(1)
            assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "after"
            assert "managedFields" not in event["object"]["metadata"]
        # The shared line other watchers read still carries them.
        [event] = await plain.events(1)
        assert _managed(event["object"])


async def test_the_control_plane_client_reads_without_them(fake_api: FakeCluster) -> None:
    async with ApiClient(fake_api.url, omit_managed_fields=True) as lean, ApiClient(fake_api.url) as plain:
        created = await lean.create(CONFIGMAPS, "default", configmap("c", data={"k": "v"}))
        assert "managedFields" not in created["metadata"]
        assert _managed(await plain.get(CONFIGMAPS, "default", "c"))
        assert "managedFields" not in (await lean.get(CONFIGMAPS, "default", "c"))["metadata"]
