"""The one read path: scope, lists with limits and continue tokens, history reads, watches."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from fakeapi.errors import Expired, StatusError, Timeout
from fakeapi.registry import reads
from fakeapi.registry.listing import ListOptions, parse_list_options
from fakeapi.store.pagination import ContinueToken
from tests.unit.registry.builders import OPTS, configmap, kind, new_registry


def _with_configmaps(*names: str, namespaces: tuple[str, ...] = ("default",)):
    registry = new_registry(namespaces=namespaces)
    cms = kind(registry, "configmaps")
    for ns in namespaces:
        for name in names:
            registry.writes.create(cms, ns, configmap(name, labels={"n": name}), OPTS)
    return registry, cms


def _names(body: dict) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in body["items"]]


def test_scope_cluster_kinds_ignore_the_namespace() -> None:
    registry = new_registry(namespaces=("default", "other"))
    namespaces = registry.kinds.namespaces
    assert registry.reads.find(namespaces, "whatever", "other") is not None
    assert [o["metadata"]["name"] for o in registry.reads.items(namespaces, "whatever")] == ["default", "other"]
    with pytest.raises(StatusError) as err:
        registry.reads.get(namespaces, "", "absent")
    assert err.value.code == 404 and err.value.message == 'namespaces "absent" not found'


async def test_list_pages_with_continue_tokens_in_key_order() -> None:
    registry, cms = _with_configmaps("c", "a", "b", namespaces=("x", "y"))
    first = await registry.reads.list(cms, None, ListOptions(limit=4))
    assert _names(first) == ["x/a", "x/b", "x/c", "y/a"] and first["metadata"]["remainingItemCount"] == 2
    rest = await registry.reads.list(cms, None, ListOptions(limit=4, continue_=first["metadata"]["continue"]))
    assert _names(rest) == ["y/b", "y/c"] and "continue" not in rest["metadata"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_pages_are_a_consistent_snapshot() -> None:
    registry, cms = _with_configmaps("a", "b", "c")
    first = await registry.reads.list(cms, "default", ListOptions(limit=1))
    registry.writes.delete(cms, "default", "c", {})
    registry.writes.create(cms, "default", configmap("bb"), OPTS)
    rest = await registry.reads.list(cms, "default", ListOptions(continue_=first["metadata"]["continue"]))
    assert _names(rest) == ["default/b", "default/c"]  # as of the first page's revision


async def test_selectors_drop_the_remaining_count() -> None:
    registry, cms = _with_configmaps("a", "b", "c")
    opts = parse_list_options({"labelSelector": "n!=b", "limit": "1"}, cms)
    page = await registry.reads.list(cms, "default", opts)
    assert _names(page) == ["default/a"] and "remainingItemCount" not in page["metadata"]
    token = ContinueToken.decode(page["metadata"]["continue"])
    assert token.start_after == ("default", "a")


async def test_exact_resource_version_reads_history() -> None:
    registry, cms = _with_configmaps("a")
    before = registry.reads.resource_version
    registry.writes.create(cms, "default", configmap("b"), OPTS)
    old = await registry.reads.list(cms, "default", ListOptions(resource_version=str(before),
                                                                resource_version_match="Exact"))
    assert _names(old) == ["default/a"] and old["metadata"]["resourceVersion"] == str(before)
    latest = await registry.reads.list(cms, "default", ListOptions(resource_version=str(before),
                                                                   resource_version_match="NotOlderThan"))
    assert _names(latest) == ["default/a", "default/b"]


async def test_a_compacted_continue_token_is_410_with_a_fresh_token() -> None:
    registry, cms = _with_configmaps("a", "b", "c")
    first = await registry.reads.list(cms, "default", ListOptions(limit=1))
    registry.writes.create(cms, "default", configmap("d"), OPTS)
    registry.store.log.compact(registry.reads.resource_version)  # the first page's revision is gone
    with pytest.raises(Expired) as err:
        await registry.reads.list(cms, "default", ListOptions(continue_=first["metadata"]["continue"]))
    fresh = ContinueToken.decode(err.value.metadata["continue"])
    assert fresh == ContinueToken(registry.reads.resource_version, ("default", "a"))


FUTURE = [
    ("resource-version", lambda rv: ListOptions(resource_version=str(rv), resource_version_match="NotOlderThan")),
    # A continue token never claims a revision the store has not reached (the watch cache waits
    # for it as for any list, then answers 504).
    ("continue-token", lambda rv: ListOptions(continue_=ContinueToken(rv, ("default", "a")).encode())),
]


@pytest.mark.parametrize("options", [c[1] for c in FUTURE], ids=[c[0] for c in FUTURE])
async def test_a_future_resource_version_is_504_after_waiting(monkeypatch: pytest.MonkeyPatch, options: Any) -> None:
    monkeypatch.setattr(reads, "RV_WAIT_SECONDS", 0.01)
    registry, cms = _with_configmaps("a")
    future = registry.reads.resource_version + 10**12
    with pytest.raises(Timeout) as err:
        await registry.reads.list(cms, None, options(future))
    assert err.value.details["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def _lines(watcher) -> list[dict]:
    return [orjson.loads(line) for line in await watcher.next_lines(timeout=0)]


async def test_watch_from_a_revision_then_live() -> None:
    registry, cms = _with_configmaps("a")
    since = registry.reads.resource_version
    registry.writes.create(cms, "default", configmap("b"), OPTS)
    watcher = await registry.reads.watch(cms, "default", ListOptions(resource_version=str(since)))
    registry.writes.create(cms, "default", configmap("c"), OPTS)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in await _lines(watcher)] == [
        ("ADDED", "b"), ("ADDED", "c")]
    registry.reads.close_watch(cms, watcher)
    assert registry.store.hub.count() == 0


async def test_streaming_list_ends_initial_events_with_a_bookmark() -> None:
    registry, cms = _with_configmaps("a", "b")
    opts = parse_list_options({"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
                               "resourceVersionMatch": "NotOlderThan"}, cms)
    events = await _lines(await registry.reads.watch(cms, "default", opts))
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[-1]["object"]["metadata"]
    assert bookmark == {"resourceVersion": str(registry.reads.resource_version),
                        "annotations": {reads.INITIAL_EVENTS_END: "true"}}


async def test_watch_at_a_compacted_revision_is_410() -> None:
    registry, cms = _with_configmaps("a", "b")
    registry.store.log.compact(registry.reads.resource_version)
    with pytest.raises(Expired):
        await registry.reads.watch(cms, "default", ListOptions(resource_version="1"))
