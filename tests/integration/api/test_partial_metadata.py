"""Metadata-only reads (``as=PartialObjectMetadata[List]``), as client-go's metadata informers and
controller-runtime's ``OnlyMetadata`` watches ask for them."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from tests.integration.api.conftest import CM, Api, configmap

ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
# What client-go's metadata client sends: protobuf first (answered in JSON here), JSON next.
CLIENT_GO_LIST = f"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{LIST}"


def partial(obj: dict, version: str = "v1") -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}", "metadata": obj["metadata"]}


async def test_get_and_list_answer_metadata_alone(api: Api) -> None:
    first = await api.ok("POST", CM, configmap("first", data={"secret": "not in the answer"}))
    second = await api.ok("POST", CM, configmap("second"))
    assert await api.ok("GET", f"{CM}/first", headers={"Accept": ONE}) == partial(first)
    v1beta1 = ONE.replace("v=v1", "v=v1beta1")
    assert await api.ok("GET", f"{CM}/first", headers={"Accept": v1beta1}) == partial(first, "v1beta1")
    listed = await api.ok("GET", f"{CM}?limit=1", headers={"Accept": CLIENT_GO_LIST})
    assert listed["kind"] == "PartialObjectMetadataList" and listed["apiVersion"] == "meta.k8s.io/v1"
    assert listed["items"] == [partial(first)] and listed["metadata"]["continue"]
    rest = await api.ok("GET", f"{CM}?continue={listed['metadata']['continue']}", headers={"Accept": LIST})
    assert rest["items"] == [partial(second)]


@pytest.mark.parametrize(("path", "accept", "message"), [
    (f"{CM}/one", LIST, "you requested PartialObjectMetadataList, but the requested object is not a list"),
    (CM, ONE, "you requested PartialObjectMetadata, but the requested object is a list"),
], ids=["list-of-one-object", "one-object-of-a-list"])
async def test_the_wrong_form_is_not_acceptable(api: Api, path: str, accept: str, message: str) -> None:
    await api.ok("POST", CM, configmap("one"))
    status, body = await api.request("GET", path, headers={"Accept": accept})
    assert (status, body["reason"], body["message"]) == (406, "NotAcceptable", message)


async def test_a_watch_carries_metadata_alone_and_the_initial_events_end_bookmark(api: Api) -> None:
    existing = await api.ok("POST", CM, configmap("existing"))
    path = f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    async with api.session.get(path, headers={"Accept": ONE}) as resp:
        async def event() -> dict:
            async with asyncio.timeout(5):
                return orjson.loads(await resp.content.readline())

        assert await event() == {"type": "ADDED", "object": partial(existing)}
        bookmark = await event()
        assert bookmark["type"] == "BOOKMARK" and bookmark["object"]["kind"] == "PartialObjectMetadata"
        assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        later = await api.ok("POST", CM, configmap("later", data={"k": "v"}))
        assert await event() == {"type": "ADDED", "object": partial(later)}
