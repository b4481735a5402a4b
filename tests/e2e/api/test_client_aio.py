"""The official client beyond plain calls: ``kubernetes.aio`` (native asyncio) and ``SharedInformer``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from kubernetes import client as sync_client
from kubernetes.aio import client, config, watch
from kubernetes.informer import SharedInformer

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call, claim, configmap


@pytest_asyncio.fixture
async def aio_api(fake_api: FakeCluster) -> AsyncIterator[client.ApiClient]:
    api = await config.new_client_from_config(config_file=str(fake_api.kubeconfig_path))
    async with api:
        yield api


async def test_aio_crud_and_watch(aio_api: client.ApiClient) -> None:
    core = client.CoreV1Api(aio_api)
    rv = (await core.list_namespaced_config_map("default")).metadata.resource_version
    await core.create_namespaced_config_map("default", configmap("a", {"k": "1"}))
    await core.patch_namespaced_config_map("a", "default", {"data": {"k": "2"}})
    await core.delete_namespaced_config_map("a", "default")

    seen: list[tuple[str, str | None]] = []
    async with watch.Watch() as stream, asyncio.timeout(5):
        async for event in stream.stream(core.list_namespaced_config_map, "default", resource_version=rv,
                                         timeout_seconds=5):
            seen.append((event["type"], (event["object"].data or {}).get("k")))
            if len(seen) == 3:
                break

    assert seen == [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "2")]


async def test_aio_dra_claim_and_errors(aio_api: client.ApiClient) -> None:
    resource = client.ResourceV1Api(aio_api)

    created = await resource.create_namespaced_resource_claim("default", claim("rc1"))
    assert created.spec.devices.requests[0].exactly.device_class_name == "gpu.example.com"

    try:
        await resource.create_namespaced_resource_claim("default", claim("rc1"))
    except client.ApiException as exc:
        assert exc.status == 409
    else:
        raise AssertionError("duplicate create succeeded")


async def test_shared_informer_syncs_and_follows(core: sync_client.CoreV1Api) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("before"))
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def handler(kind: str) -> Any:
        return lambda obj: loop.call_soon_threadsafe(events.put_nowait, (kind, obj.metadata.name))

    informer = SharedInformer(core.list_namespaced_config_map, namespace="default")
    for kind in ("ADDED", "MODIFIED", "DELETED"):
        informer.add_event_handler(kind, handler(kind))
    informer.start()
    try:
        async with asyncio.timeout(5):
            assert await events.get() == ("ADDED", "before")
            await call(core.create_namespaced_config_map, "default", configmap("after"))
            await call(core.delete_namespaced_config_map, "before", "default")
            assert [await events.get(), await events.get()] == [("ADDED", "after"), ("DELETED", "before")]
        assert informer.cache.list_keys() == ["default/after"]
    finally:
        await asyncio.to_thread(informer.stop)
