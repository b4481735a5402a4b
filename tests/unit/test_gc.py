"""Garbage collection without HTTP: propagation policies over ownerReferences, and namespace
finalization, with the collector running on a bare registry.  Waits are per commit, with deadlines."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from fakeapi.gc import GarbageCollector
from fakeapi.registry.rest import Registry
from tests.unit.registry.builders import OPTS, configmap, kind, new_registry, owner_ref, until


@pytest_asyncio.fixture
async def registry() -> AsyncIterator[Registry]:
    registry = new_registry(namespaces=("default", "team"))
    collector = GarbageCollector(registry)
    collector.start()
    yield registry
    await collector.stop()


def create(registry: Registry, name: str, *owners: dict[str, Any], block: bool = False,
           finalizers: list[str] | None = None) -> dict[str, Any]:
    refs = [owner_ref(o, **({"blockOwnerDeletion": True} if block else {})) for o in owners]
    meta: dict[str, Any] = {"ownerReferences": refs} if refs else {}
    if finalizers:
        meta["finalizers"] = finalizers
    return registry.writes.create(kind(registry, "configmaps"), "default", configmap(name, **meta), OPTS)[0]


def exists(registry: Registry, name: str, namespace: str = "default") -> bool:
    return registry.reads.find(kind(registry, "configmaps"), namespace, name) is not None


def get(registry: Registry, name: str) -> dict[str, Any]:
    return registry.reads.get(kind(registry, "configmaps"), "default", name)


def delete(registry: Registry, name: str, policy: str | None = None) -> None:
    options = {"propagationPolicy": policy} if policy else {}
    registry.writes.delete(kind(registry, "configmaps"), "default", name, options)


@pytest.mark.parametrize("policy", [None, "Background"], ids=["default", "background"])
async def test_background_deletes_dependents_after_the_owner(registry: Registry, policy: str | None) -> None:
    owner = create(registry, "owner")
    child = create(registry, "child", owner)
    create(registry, "grandchild", child)
    create(registry, "bystander")
    delete(registry, "owner", policy)
    assert not exists(registry, "owner")  # the owner goes at once
    await until(registry, lambda: not exists(registry, "child") and not exists(registry, "grandchild"),
                what="the chain of dependents to go")
    assert exists(registry, "bystander")


async def test_a_dependent_with_a_live_owner_only_loses_the_dangling_reference(registry: Registry) -> None:
    gone, kept = create(registry, "gone"), create(registry, "kept")
    create(registry, "child", gone, kept)
    delete(registry, "gone")
    await until(registry, lambda: len(get(registry, "child")["metadata"].get("ownerReferences", [])) == 1,
                what="the dangling reference to be dropped")
    assert get(registry, "child")["metadata"]["ownerReferences"][0]["uid"] == kept["metadata"]["uid"]


async def test_foreground_deletes_blocking_dependents_first(registry: Registry) -> None:
    owner = create(registry, "owner")
    create(registry, "child", owner, block=True, finalizers=["x.io/hold"])
    delete(registry, "owner", "Foreground")
    await until(registry, lambda: bool(get(registry, "child")["metadata"].get("deletionTimestamp")),
                what="the child to start deleting")
    # The held child keeps the owner waiting with its foregroundDeletion finalizer.
    assert get(registry, "owner")["metadata"]["finalizers"] == ["foregroundDeletion"]
    child = get(registry, "child")
    registry.writes.update(kind(registry, "configmaps"), "default", "child",
                           child | {"metadata": child["metadata"] | {"finalizers": []}}, OPTS)
    await until(registry, lambda: not exists(registry, "owner"), what="the owner to go after its dependent")


async def test_orphan_keeps_dependents_and_strips_the_reference(registry: Registry) -> None:
    owner = create(registry, "owner")
    create(registry, "child", owner)
    delete(registry, "owner", "Orphan")
    await until(registry, lambda: not exists(registry, "owner"), what="the orphaning owner to go")
    assert "ownerReferences" not in get(registry, "child")["metadata"]


async def test_a_deleting_namespace_is_emptied_then_finalized(registry: Registry) -> None:
    cms = kind(registry, "configmaps")
    for name in ("a", "b"):
        registry.writes.create(cms, "team", configmap(name), OPTS)
    registry.writes.create(cms, "default", configmap("elsewhere"), OPTS)
    namespaces = registry.kinds.namespaces
    registry.writes.delete(namespaces, "", "team", {})
    await until(registry, lambda: registry.reads.find(namespaces, "", "team") is None,
                what="the namespace to be finalized")
    assert registry.reads.items(cms, "team") == [] and exists(registry, "elsewhere")


async def test_a_namespace_waits_for_contents_held_by_finalizers(registry: Registry) -> None:
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "team", configmap("held", finalizers=["x.io/hold"]), OPTS)
    namespaces = registry.kinds.namespaces
    registry.writes.delete(namespaces, "", "team", {})
    await until(registry, lambda: bool(registry.reads.get(cms, "team", "held")["metadata"].get("deletionTimestamp")),
                what="the content to start deleting")
    assert registry.reads.get(namespaces, "", "team")["status"]["phase"] == "Terminating"
    held = registry.reads.get(cms, "team", "held")
    registry.writes.update(cms, "team", "held", held | {"metadata": held["metadata"] | {"finalizers": []}}, OPTS)
    await until(registry, lambda: registry.reads.find(namespaces, "", "team") is None,
                what="the namespace to be finalized")


def _owner_refs(registry: Registry, name: str) -> list[str]:
    return [r["name"] for r in get(registry, name)["metadata"].get("ownerReferences") or []]


async def test_an_owner_in_another_namespace_counts_as_absent(registry: Registry) -> None:
    foreign = registry.writes.create(kind(registry, "configmaps"), "team", configmap("owner"), OPTS)[0]
    local = create(registry, "local-owner")
    create(registry, "orphan", foreign)  # its only owner is elsewhere: collected as an orphan
    create(registry, "kept", local, foreign)  # keeps its local owner, loses the foreign reference
    await until(registry, lambda: not exists(registry, "orphan") and _owner_refs(registry, "kept") == ["local-owner"],
                what="the foreign references to be treated as dangling")
    warnings = [e for e in registry.reads.items(kind(registry, "events"), "default")
                if e["reason"] == "OwnerRefInvalidNamespace"]
    assert sorted(e["involvedObject"]["name"] for e in warnings) == ["kept", "orphan"]
    assert warnings[0]["type"] == "Warning" and warnings[0]["message"] == (
        f"ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {foreign['metadata']['uid']}] "
        'does not exist in namespace "default"')


async def test_foreground_deletion_leaves_dependents_in_other_namespaces(registry: Registry) -> None:
    cms = kind(registry, "configmaps")
    owner = registry.writes.create(cms, "team", configmap("owner"), OPTS)[0]
    registry.writes.create(cms, "team", configmap("child", ownerReferences=[owner_ref(owner)]), OPTS)
    local = create(registry, "local-owner")
    create(registry, "stranger", local, owner)
    registry.writes.delete(cms, "team", "owner", {"propagationPolicy": "Foreground"})
    # The child does not block its owner's deletion, so either may go first.
    await until(registry, lambda: registry.reads.find(cms, "team", "owner") is None
                and registry.reads.find(cms, "team", "child") is None, what="the foreground deletion to finish")
    assert exists(registry, "stranger")


def relabel(registry: Registry, name: str, **meta: Any) -> None:
    """An update of ``name`` with a new label (and ``meta`` set), keeping the rest as stored."""
    obj = get(registry, name)
    labels = {**obj["metadata"].get("labels", {}), "n": str(int(obj["metadata"].get("labels", {}).get("n", 0)) + 1)}
    body = {**obj, "metadata": {**obj["metadata"], "labels": labels, **meta}}
    registry.writes.update(kind(registry, "configmaps"), "default", name, body, OPTS)


async def test_updates_keeping_the_references_keep_the_dependent_indexed(registry: Registry) -> None:
    owner = create(registry, "owner")
    create(registry, "child", owner)
    for _ in range(3):
        relabel(registry, "child")
        relabel(registry, "owner")
    delete(registry, "owner")
    await until(registry, lambda: not exists(registry, "child"), what="the dependent to go with its owner")


async def test_an_update_moving_the_owner_reference_moves_the_dependent(registry: Registry) -> None:
    first, second = create(registry, "first"), create(registry, "second")
    create(registry, "child", first)
    create(registry, "witness", first)  # gone once the collector has processed the first owner's deletion
    relabel(registry, "child", ownerReferences=[owner_ref(second)])
    delete(registry, "first")
    await until(registry, lambda: not exists(registry, "witness"), what="the first owner's dependents to go")
    assert exists(registry, "child")
    delete(registry, "second")
    await until(registry, lambda: not exists(registry, "child"), what="the dependent to go with its new owner")


async def test_objects_written_before_the_collector_are_indexed_by_their_next_update() -> None:
    registry = new_registry()
    owner = create(registry, "owner")
    create(registry, "child", owner)
    collector = GarbageCollector(registry)
    collector.start()
    try:
        relabel(registry, "owner")
        relabel(registry, "child")  # its references unchanged, but the collector never saw it
        delete(registry, "owner")
        await until(registry, lambda: not exists(registry, "child"), what="the dependent to go with its owner")
    finally:
        await collector.stop()
