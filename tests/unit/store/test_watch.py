"""Watch fan-out: every watcher sees one commit order, selector transitions, slow-watcher expiry."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from fakeapi.store import watch as watch_module
from fakeapi.store.eventlog import ADDED, DELETED, MODIFIED
from fakeapi.store.objects import ObjectStore
from fakeapi.store.watch import Watcher, WatchFilter

CM = ("", "configmaps")


def obj(name: str, namespace: str = "default", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}}


async def drain(watcher: Watcher) -> list[tuple[str, str, str]]:
    """(type, name, resourceVersion) of every queued line; never waits for more."""
    lines = await watcher.next_lines(timeout=0)
    events = [orjson.loads(line) for line in lines]
    return [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"].get("resourceVersion", ""))
            for e in events]


def blue(o: dict) -> bool:
    return (o.get("metadata") or {}).get("labels", {}).get("color") == "blue"


async def test_every_watcher_sees_the_same_order() -> None:
    store = ObjectStore()
    watchers = [store.open_watch(CM, WatchFilter(), since=None) for _ in range(3)]
    store.commit(CM, ADDED, obj("a"))
    store.commit(CM, ADDED, obj("b"))
    store.commit(CM, MODIFIED, obj("a"))
    store.commit(("", "pods"), ADDED, obj("p"))  # another storage key: not delivered
    expected = [(ADDED, "a", "1"), (ADDED, "b", "2"), (MODIFIED, "a", "3")]
    assert [await drain(w) for w in watchers] == [expected] * 3


# Each case: the object's labels before and after a MODIFIED, and what a watcher of
# color=blue sees (upstream's watch cache turns selector transitions into ADDED/DELETED).
TRANSITIONS = [
    ("stays-in", {"color": "blue"}, {"color": "blue", "x": "y"}, [MODIFIED]),
    ("enters", {}, {"color": "blue"}, [ADDED]),
    ("leaves", {"color": "blue"}, {"color": "red"}, [DELETED]),
    ("stays-out", {}, {"color": "red"}, []),
]


@pytest.mark.parametrize(("before", "after", "seen"), [c[1:] for c in TRANSITIONS], ids=[c[0] for c in TRANSITIONS])
async def test_selector_transitions(before: dict, after: dict, seen: list[str]) -> None:
    store = ObjectStore()
    store.commit(CM, ADDED, obj("a", **before))
    watcher = store.open_watch(CM, WatchFilter(predicate=blue), since=store.rv)
    store.commit(CM, MODIFIED, obj("a", **after))
    events = await drain(watcher)
    assert [t for t, _, _ in events] == seen
    assert all(rv == "2" for _, _, rv in events)  # a synthetic DELETED carries the change's revision


async def test_namespace_filter_and_deletions() -> None:
    store = ObjectStore()
    watcher = store.open_watch(CM, WatchFilter(namespace="a"), since=None)
    store.commit(CM, ADDED, obj("x", "a"))
    store.commit(CM, ADDED, obj("y", "b"))
    store.commit(CM, DELETED, obj("x", "a"))
    assert await drain(watcher) == [(ADDED, "x", "1"), (DELETED, "x", "3")]


async def test_a_namespace_s_watchers_get_its_events_and_unscoped_watchers_get_every_event() -> None:
    store = ObjectStore()
    store.commit(CM, ADDED, obj("early", "a"))
    everywhere = store.open_watch(CM, WatchFilter(), since=None)
    in_a = store.open_watch(CM, WatchFilter(namespace="a"), since=None)
    blue_in_a = store.open_watch(CM, WatchFilter(namespace="a", predicate=blue), since=None)
    resumed_in_b = store.open_watch(CM, WatchFilter(namespace="b"), since=0)  # replays the log first
    store.commit(CM, ADDED, obj("x", "a", color="blue"))
    store.commit(CM, ADDED, obj("y", "b"))
    store.commit(CM, MODIFIED, obj("x", "a"))
    assert await drain(everywhere) == [(ADDED, "x", "2"), (ADDED, "y", "3"), (MODIFIED, "x", "4")]
    assert await drain(in_a) == [(ADDED, "x", "2"), (MODIFIED, "x", "4")]
    assert await drain(blue_in_a) == [(ADDED, "x", "2"), (DELETED, "x", "4")]
    assert await drain(resumed_in_b) == [(ADDED, "y", "3")]
    for watcher in (in_a, blue_in_a, everywhere):
        store.close_watch(CM, watcher)
    assert store.hub.count() == 1 and store.hub.watching(CM)
    store.close_watch(CM, resumed_in_b)
    assert store.hub.count() == 0 and not store.hub.watching(CM)


async def test_a_watch_limited_to_one_name_is_filed_under_it_and_gets_that_object_s_events() -> None:
    store = ObjectStore()

    def named_x(o: dict) -> bool:
        return o["metadata"]["name"] == "x"

    x_in_a = store.open_watch(CM, WatchFilter(namespace="a", predicate=named_x, name="x"), since=None)
    x_anywhere = store.open_watch(CM, WatchFilter(predicate=named_x, name="x"), since=None)
    for namespace, name in (("a", "x"), ("a", "y"), ("b", "x")):
        store.commit(CM, ADDED, obj(name, namespace))
    store.commit(CM, DELETED, obj("x", "a"))
    assert await drain(x_in_a) == [(ADDED, "x", "1"), (DELETED, "x", "4")]
    assert await drain(x_anywhere) == [(ADDED, "x", "1"), (ADDED, "x", "3"), (DELETED, "x", "4")]
    store.close_watch(CM, x_in_a)
    store.close_watch(CM, x_anywhere)
    assert store.hub.count() == 0 and not store.hub.watching(CM)


async def test_resume_replays_the_log_then_goes_live() -> None:
    store = ObjectStore()
    for name in "abc":
        store.commit(CM, ADDED, obj(name))
    watcher = store.open_watch(CM, WatchFilter(), since=1, initial=[])
    store.commit(CM, ADDED, obj("d"))
    assert await drain(watcher) == [(ADDED, "b", "2"), (ADDED, "c", "3"), (ADDED, "d", "4")]


async def test_initial_objects_come_first_as_added() -> None:
    store = ObjectStore()
    store.commit(CM, ADDED, obj("a", color="blue"))
    store.commit(CM, ADDED, obj("b"))
    watcher = store.open_watch(CM, WatchFilter(predicate=blue), since=None, initial=store.items(CM))
    assert await drain(watcher) == [(ADDED, "a", "1")]


async def test_a_slow_watcher_expires_without_holding_events() -> None:
    store = ObjectStore(watcher_limit=2)
    slow = store.open_watch(CM, WatchFilter(), since=None)
    fast = store.open_watch(CM, WatchFilter(), since=None)
    store.commit(CM, ADDED, obj("a"))
    assert len(await drain(fast)) == 1
    store.commit(CM, ADDED, obj("b"))
    assert not slow.expired  # at the limit, not over it
    store.commit(CM, ADDED, obj("c"))
    assert slow.expired and slow.closed
    assert await slow.next_lines(timeout=0) == []  # its backlog was dropped
    assert [name for _, name, _ in await drain(fast)] == ["b", "c"]  # others are unaffected


async def test_close_wakes_a_waiting_reader_and_unregisters() -> None:
    store = ObjectStore()
    watcher = store.open_watch(CM, WatchFilter(), since=None)
    assert store.hub.count() == 1
    store.close_watch(CM, watcher)
    assert await watcher.next_lines(timeout=5) == []
    assert watcher.closed and store.hub.count() == 0
    store.commit(CM, ADDED, obj("a"))
    assert await watcher.next_lines(timeout=0) == []


async def test_a_watcher_whose_filter_fails_is_closed_and_the_others_still_get_the_event() -> None:
    store = ObjectStore()

    def broken(o: dict) -> bool:
        raise KeyError("a bug in a filter")

    failing = store.open_watch(CM, WatchFilter(predicate=broken), since=None)
    healthy = store.open_watch(CM, WatchFilter(), since=None)
    store.commit(CM, ADDED, obj("a"))
    assert await drain(healthy) == [(ADDED, "a", "1")]
    assert failing.closed and await drain(failing) == []
    assert store.get(CM, ("default", "a")) is not None


def names(lines: list[bytes]) -> list[str]:
    return [orjson.loads(line)["object"]["metadata"]["name"] for line in lines]


class FakeConnection:
    """A sink that takes lines until told its buffer is full."""

    def __init__(self) -> None:
        self.writes: list[list[str]] = []
        self.full = False

    def __call__(self, lines: list[bytes]) -> bool:
        if self.full:
            return False
        self.writes.append(names(lines))
        return True


async def parked(watcher: Watcher) -> asyncio.Task[list[bytes]]:
    task = asyncio.create_task(watcher.next_lines(timeout=5))
    await asyncio.sleep(0)  # let it park
    return task


async def parked_with_sink() -> tuple[ObjectStore, Watcher, FakeConnection, asyncio.Task[list[bytes]]]:
    store = ObjectStore()
    watcher = store.open_watch(CM, WatchFilter(), since=None)
    connection = FakeConnection()
    watcher.use_sink(connection)
    return store, watcher, connection, await parked(watcher)


async def test_a_sink_writes_one_loop_iterations_events_at_once_and_the_reader_stays_parked() -> None:
    store, watcher, connection, reader = await parked_with_sink()
    store.commit(CM, ADDED, obj("a"))
    store.commit(CM, ADDED, obj("b"))
    await asyncio.sleep(0)  # the flush runs
    assert connection.writes == [["a", "b"]]
    assert not reader.done() and watcher.take_delivered() and not watcher.take_delivered()
    store.commit(CM, ADDED, obj("c"))
    await asyncio.sleep(0)
    assert connection.writes == [["a", "b"], ["c"]]
    store.close_watch(CM, watcher)
    assert await reader == []  # closing still wakes the reader


async def test_a_full_connection_wakes_the_reader_with_every_line_in_order() -> None:
    store, watcher, connection, reader = await parked_with_sink()
    connection.full = True
    store.commit(CM, ADDED, obj("a"))
    store.commit(CM, ADDED, obj("b"))
    assert names(await reader) == ["a", "b"]
    assert connection.writes == [] and not watcher.take_delivered()
    connection.full = False
    store.commit(CM, ADDED, obj("c"))  # the reader is not parked: it takes the line itself
    assert names(await watcher.next_lines(timeout=0)) == ["c"] and connection.writes == []


async def test_a_failing_sink_is_dropped_and_the_reader_gets_the_lines() -> None:
    store = ObjectStore()
    watcher = store.open_watch(CM, WatchFilter(), since=None)

    def broken(lines: list[bytes]) -> bool:
        raise OSError("connection gone")

    watcher.use_sink(broken)
    reader = await parked(watcher)
    store.commit(CM, ADDED, obj("a"))
    assert names(await reader) == ["a"]


def test_a_flush_left_behind_by_a_closed_loop_is_dropped() -> None:
    # The first loop closes before its flush runs; the next loop's first flush forgets it.
    first = asyncio.new_event_loop()
    stranded = first.run_until_complete(parked_with_sink())
    stranded[0].commit(CM, ADDED, obj("a"))  # schedules a flush on the first loop, never run
    first.close()
    stranded[3]._log_destroy_pending = False  # its loop is gone on purpose: no "destroyed" report
    second = asyncio.new_event_loop()
    try:
        store, _, connection, reader = second.run_until_complete(parked_with_sink())
        store.commit(CM, ADDED, obj("b"))
        second.run_until_complete(asyncio.sleep(0))
        assert connection.writes == [["b"]]
        assert first not in watch_module._pending
        reader.cancel()
        second.run_until_complete(asyncio.sleep(0))
    finally:
        second.close()
