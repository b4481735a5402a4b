"""Raw-HTTP helpers for API server tests: requests that return (status, body) and watch readers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from fakeapi.cluster import FakeCluster


class Api:
    """A thin aiohttp client that never raises on HTTP errors: tests assert on status and body."""

    def __init__(self, session: aiohttp.ClientSession, cluster: FakeCluster) -> None:
        self.session = session
        self.cluster = cluster

    async def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
                      headers: dict[str, str] | None = None) -> tuple[int, Any]:
        data = None if body is None else (body if isinstance(body, bytes | str) else orjson.dumps(body))
        hdrs = {"Content-Type": content_type, **(headers or {})}
        async with self.session.request(method, path, data=data, headers=hdrs) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                return resp.status, raw.decode()

    async def ok(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        status, out = await self.request(method, path, body, **kw)
        assert 200 <= status < 300, (status, out)
        return out

    def watch(self, path: str) -> Watch:
        return Watch(self.session, path)


class Watch:
    """An open watch stream; ``next()`` returns the next event or fails at a deadline."""

    def __init__(self, session: aiohttp.ClientSession, path: str) -> None:
        self.session = session
        self.path = path
        self.resp: aiohttp.ClientResponse | None = None
        self.status = 0

    async def __aenter__(self) -> Watch:
        self.resp = await self.session.get(self.path, timeout=aiohttp.ClientTimeout(total=None))
        self.status = self.resp.status
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.resp is not None:
            self.resp.close()

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        assert self.resp is not None
        line = await asyncio.wait_for(self.resp.content.readline(), timeout)
        assert line, "watch stream ended"
        return orjson.loads(line)

    async def events(self, count: int, timeout: float = 5.0, skip_bookmarks: bool = True) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while len(out) < count:
            ev = await self.next(timeout)
            if skip_bookmarks and ev["type"] == "BOOKMARK":
                continue
            out.append(ev)
        return out

    async def expect_silence(self, seconds: float = 0.2) -> None:
        """Assert nothing but bookmarks arrives for a short while (used after a write that must not show)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (left := end - loop.time()) > 0:
            try:
                ev = await self.next(left)
            except TimeoutError:
                return
            assert ev["type"] == "BOOKMARK", f"unexpected event {ev['type']}"

    async def lines(self) -> AsyncIterator[dict[str, Any]]:
        assert self.resp is not None
        async for line in self.resp.content:
            yield orjson.loads(line)


@pytest_asyncio.fixture
async def api(fake_api: FakeCluster) -> AsyncIterator[Api]:
    async with aiohttp.ClientSession(base_url=fake_api.url) as session:
        yield Api(session, fake_api)


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, **({"labels": labels} if labels else {})}, "data": data or {}}


CM = "/api/v1/namespaces/default/configmaps"
