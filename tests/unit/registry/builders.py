"""A registry over a fresh store (no HTTP, no GC) and small object builders for registry tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fakeapi.config import FeatureGates
from fakeapi.registry.kinds import KINDS
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry
from fakeapi.registry.writes import WriteOptions
from fakeapi.store.objects import ObjectStore

OPTS = WriteOptions(manager="test")


def new_registry(*, window: int = 100_000, namespaces: tuple[str, ...] = ("default",)) -> Registry:
    registry = Registry(ObjectStore(window=window), KINDS, FeatureGates())
    for name in namespaces:
        registry.writes.create(registry.kinds.namespaces, "", {"metadata": {"name": name}}, OPTS)
    return registry


def kind(registry: Registry, plural: str, group: str = "", version: str = "v1") -> ResourceType:
    rt = registry.kinds.resource(group, version, plural)
    assert rt is not None
    return rt


def configmap(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta}, "data": {"k": "v"}}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def owner_ref(owner: dict[str, Any], **extra: Any) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            **extra}


def events_of(registry: Registry) -> list[tuple[str, str]]:
    """Start recording (type, name) of every commit from now on."""
    seen: list[tuple[str, str]] = []
    registry.reads.subscribe(lambda e: seen.append((e.type, e.key[1])))
    return seen


async def until(registry: Registry, check: Callable[[], bool], *, timeout: float = 5.0, what: str = "") -> None:
    """Wait, commit by commit, until ``check()`` holds; fail at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        remaining = deadline - loop.time()
        if remaining <= 0 or not await registry.store.wait_for_rv(registry.store.rv + 1, remaining):
            raise AssertionError(f"timed out waiting for {what or check}")
