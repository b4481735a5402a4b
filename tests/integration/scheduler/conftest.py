"""Fixtures for scheduler integration tests: an API client on a full FakeCluster."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from fakeapi.scheduler.client import ApiClient

from fakeapi.cluster import FakeCluster


@pytest_asyncio.fixture
async def api(fake_cluster: FakeCluster) -> AsyncIterator[ApiClient]:
    """A client for the test's cluster (scheduler, controllers and kubelet emulation running)."""
    async with ApiClient(fake_cluster.url) as client:
        yield client
