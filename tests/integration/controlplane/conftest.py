"""Fixtures for control-plane pieces running against a real in-process API server (no control plane)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.informers import InformerFactory

from fakeapi.cluster import FakeCluster
from fakeapi.errors import NotFound


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(control_plane=False) as c:
        yield c


@pytest.fixture
async def api(cluster: FakeCluster) -> AsyncIterator[ApiClient]:
    async with ApiClient(cluster.url) as client:
        yield client


@contextlib.asynccontextmanager
async def running(factory: InformerFactory, *components: Any) -> AsyncIterator[None]:
    """Start the factory's informers, wait for sync, run each component's ``run()``; cancel on exit."""
    factory.start()
    tasks: list[asyncio.Task[None]] = []
    try:
        await factory.wait_for_cache_sync(5.0)
        tasks = [asyncio.create_task(component.run()) for component in components]
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await factory.stop()


@pytest.fixture
def run_loops() -> Callable[..., contextlib.AbstractAsyncContextManager[None]]:
    return running


async def get_or_none(api: ApiClient, gvr: Any, namespace: str | None, name: str) -> dict | None:
    try:
        return await api.get(gvr, namespace, name)
    except NotFound:
        return None


@pytest.fixture
def fetch() -> Callable[..., Awaitable[dict | None]]:
    return get_or_none
