"""The versioned object store: one global resourceVersion, key order, history, listeners."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from fakeapi.errors import BadRequest, Expired, RequestEntityTooLarge, StatusError
from fakeapi.store.eventlog import ADDED, DELETED, MODIFIED, Event, watch_line
from fakeapi.store.objects import MAX_OBJECT_BYTES, ObjectStore, encoded, object_key
from fakeapi.store.watch import WatchFilter

CM, POD = ("", "configmaps"), ("", "pods")


def obj(name: str, namespace: str = "default", **data: str) -> dict:
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


KEYS = [
    ("namespaced", {"metadata": {"namespace": "ns", "name": "a"}}, ("ns", "a")),
    ("cluster-scoped", {"metadata": {"name": "a"}}, ("", "a")),
    ("null-namespace", {"metadata": {"namespace": None, "name": "a"}}, ("", "a")),
    ("no-metadata", {}, ("", "")),
]


@pytest.mark.parametrize(("body", "key"), [c[1:] for c in KEYS], ids=[c[0] for c in KEYS])
def test_object_key(body: dict, key: tuple[str, str]) -> None:
    assert object_key(body) == key


def test_one_resource_version_for_all_storage_keys() -> None:
    store = ObjectStore()
    versions = [store.commit(storage, ADDED, obj(name))["metadata"]["resourceVersion"]
                for storage, name in ((CM, "a"), (POD, "a"), (CM, "b"))]
    assert versions == ["1", "2", "3"]
    store.commit(CM, DELETED, obj("a"))
    assert store.rv == 4
    assert store.get(CM, ("default", "a")) is None
    assert store.get(POD, ("default", "a"))["metadata"]["resourceVersion"] == "2"


def test_items_are_in_key_order_and_filtered_by_namespace() -> None:
    store = ObjectStore()
    for namespace, name in (("b", "x"), ("a", "z"), ("a", "y"), ("b", "a")):
        store.commit(CM, ADDED, obj(name, namespace))
    assert [object_key(o) for o in store.items(CM)] == [("a", "y"), ("a", "z"), ("b", "a"), ("b", "x")]
    assert [object_key(o) for o in store.items(CM, "b")] == [("b", "a"), ("b", "x")]
    assert store.items(POD) == []


def test_snapshot_at_rebuilds_past_revisions() -> None:
    store = ObjectStore()
    store.commit(CM, ADDED, obj("a", v="1"))      # rv 1
    store.commit(CM, ADDED, obj("b", v="1"))      # rv 2
    store.commit(CM, MODIFIED, obj("a", v="2"))   # rv 3
    store.commit(POD, ADDED, obj("p"))            # rv 4: another storage key
    store.commit(CM, DELETED, obj("b", v="1"))    # rv 5
    data = {rv: {k[1]: o["data"]["v"] for k, o in store.snapshot_at(CM, rv).items()} for rv in range(6)}
    assert data == {0: {}, 1: {"a": "1"}, 2: {"a": "1", "b": "1"}, 3: {"a": "2", "b": "1"},
                    4: {"a": "2", "b": "1"}, 5: {"a": "2"}}


def test_snapshot_before_the_window_is_410() -> None:
    store = ObjectStore(window=2)
    for name in "abc":
        store.commit(CM, ADDED, obj(name))
    with pytest.raises(Expired):
        store.snapshot_at(CM, 0)


def test_listeners_see_every_commit_with_its_previous_state() -> None:
    store = ObjectStore()
    seen: list[Event] = []
    store.add_listener(seen.append)
    store.commit(CM, ADDED, obj("a", v="1"))
    store.commit(CM, MODIFIED, obj("a", v="2"))
    store.commit(CM, DELETED, obj("a", v="2"))
    assert [(e.rv, e.type, e.prev and e.prev["data"]["v"]) for e in seen] == [
        (1, ADDED, None), (2, MODIFIED, "1"), (3, DELETED, "2")]


async def test_wait_for_rv_returns_when_the_revision_is_reached() -> None:
    store = ObjectStore()
    waiter = asyncio.create_task(store.wait_for_rv(2, timeout=5))
    store.commit(CM, ADDED, obj("a"))
    await asyncio.sleep(0)
    assert not waiter.done()  # rv 1 is not enough
    store.commit(CM, ADDED, obj("b"))
    assert await asyncio.wait_for(waiter, 5) is True


async def test_wait_for_rv_gives_up_at_the_deadline() -> None:
    store = ObjectStore()
    assert await store.wait_for_rv(1, timeout=0.01) is False
    assert await store.wait_for_rv(0, timeout=0) is True  # already there


async def test_waiters_for_successive_revisions_each_wake() -> None:
    store = ObjectStore()
    first = asyncio.create_task(store.wait_for_rv(1, timeout=5))
    second = asyncio.create_task(store.wait_for_rv(2, timeout=5))
    await asyncio.sleep(0)
    store.commit(CM, ADDED, obj("a"))
    assert await asyncio.wait_for(first, 5) is True
    await asyncio.sleep(0)
    assert not second.done()
    later = asyncio.create_task(store.wait_for_rv(3, timeout=5))
    await asyncio.sleep(0)
    store.commit(CM, ADDED, obj("b"))
    assert await asyncio.wait_for(second, 5) is True
    assert store.compact_history() == 3  # moves the revision on, so it wakes too
    assert await asyncio.wait_for(later, 5) is True


@pytest.mark.parametrize("event_type", [ADDED, MODIFIED, DELETED])
async def test_the_watch_line_and_the_response_are_the_objects_json(event_type: str) -> None:
    store = ObjectStore()
    if event_type != ADDED:
        store.commit(CM, ADDED, obj("a", x="1"))
    watcher = store.open_watch(CM, WatchFilter(), since=None)
    stored = store.commit(CM, event_type, obj("a", x="2"))
    [event] = store.log.since(store.rv - 1)
    assert event.line() == watch_line(event_type, stored)
    assert await watcher.next_lines(timeout=0) == [watch_line(event_type, stored)]
    assert encoded(stored) == orjson.dumps(stored)


def test_encoded_reuses_only_the_latest_commit_and_never_mixes_objects() -> None:
    store, other = ObjectStore(), ObjectStore()
    first = store.commit(CM, ADDED, obj("a", x="1"))
    second = store.commit(CM, MODIFIED, obj("a", x="2"))
    third = other.commit(CM, ADDED, obj("a", x="3"))
    for stored in (first, second, third, obj("a", x="2")):
        assert encoded(stored) == orjson.dumps(stored)
    with pytest.raises(RequestEntityTooLarge):
        store.commit(CM, ADDED, obj("big", blob="x" * (MAX_OBJECT_BYTES + 1)))
    assert encoded(third) == orjson.dumps(third)


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# Writes storage refuses: nothing of them may show anywhere (store, revision, log, watchers).
REFUSED = [
    ("too-large", lambda: obj("big", blob="x" * (MAX_OBJECT_BYTES + 1)), RequestEntityTooLarge,
     "etcdserver: request is too large"),
    ("cannot-be-encoded", lambda: {**obj("deep"), "data": nested(300)}, BadRequest, "the object cannot be stored"),
]


@pytest.mark.parametrize(("make", "error", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
async def test_a_refused_commit_changes_nothing(make: Any, error: type[StatusError], message: str) -> None:
    store = ObjectStore()
    store.commit(CM, ADDED, obj("a"))
    watcher = store.open_watch(CM, WatchFilter(), since=None)
    seen: list[Event] = []
    store.add_listener(seen.append)
    refused = make()
    with pytest.raises(error, match=message):
        store.commit(CM, ADDED, refused)
    assert store.rv == 1 and "resourceVersion" not in refused["metadata"]
    assert store.get(CM, ("default", refused["metadata"]["name"])) is None
    assert [e.rv for e in store.log.since(0)] == [1] and seen == []
    assert await watcher.next_lines(timeout=0) == []
    assert store.commit(CM, ADDED, obj("b"))["metadata"]["resourceVersion"] == "2"  # the store goes on


def test_deleting_an_object_is_never_refused_for_its_size() -> None:
    store = ObjectStore()
    big = obj("big", blob="x" * (MAX_OBJECT_BYTES - 200))
    store.commit(CM, ADDED, big)
    store.commit(CM, DELETED, {**big, "metadata": {**big["metadata"], "deletionTimestamp": "x" * 300}})
    assert store.get(CM, ("default", "big")) is None


def test_a_failing_listener_neither_undoes_the_commit_nor_starves_the_others() -> None:
    store = ObjectStore()
    seen: list[int] = []

    def broken(event: Event) -> None:
        raise RuntimeError("bug in a subscriber")

    store.add_listener(broken)
    store.add_listener(lambda event: seen.append(event.rv))
    store.commit(CM, ADDED, obj("a"))
    assert seen == [1] and store.get(CM, ("default", "a")) is not None


def test_the_log_budget_counts_watch_line_bytes() -> None:
    store = ObjectStore(window=100, window_bytes=3000)
    for name in ("a", "b", "c"):
        store.commit(CM, ADDED, obj(name, blob="x" * 1000))
    assert [e.key[1] for e in store.log.since(0)] == ["b", "c"]  # three lines are over 3,000 bytes
    assert store.log.compacted_rv == 1
    with pytest.raises(Expired):
        store.snapshot_at(CM, 0)


def test_deleting_what_is_not_stored_changes_nothing() -> None:
    store = ObjectStore()
    with pytest.raises(LookupError):
        store.commit(CM, DELETED, obj("ghost"))
    assert store.rv == 0 and list(store.log.since(0)) == []
