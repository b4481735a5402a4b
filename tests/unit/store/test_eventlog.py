"""The bounded event log: retention window, compaction and 410 for revisions it no longer has."""

from __future__ import annotations

import pytest

from fakeapi.errors import Expired
from fakeapi.store.eventlog import ADDED, Event, EventLog

CM, POD = ("", "configmaps"), ("", "pods")


def log_with(window: int, *storages: tuple[str, str]) -> EventLog:
    """A log holding one ADDED event per storage key given, at revisions 1, 2, ..."""
    log = EventLog(window)
    for rv, storage in enumerate(storages, start=1):
        log.append(Event(rv, ADDED, storage, ("default", f"o{rv}"), {"metadata": {}}, None))
    return log


WINDOWS = [
    # (id, window, events appended, compacted_rv, revisions still held)
    ("under-window", 5, 3, 0, [1, 2, 3]),
    ("exactly-full", 3, 3, 0, [1, 2, 3]),
    ("one-over", 3, 4, 1, [2, 3, 4]),
    ("far-over", 2, 6, 4, [5, 6]),
]


@pytest.mark.parametrize(("window", "count", "compacted", "held"), [c[1:] for c in WINDOWS],
                         ids=[c[0] for c in WINDOWS])
def test_window_keeps_the_latest_events(window: int, count: int, compacted: int, held: list[int]) -> None:
    log = log_with(window, *[CM] * count)
    assert log.compacted_rv == compacted
    assert [e.rv for e in log.since(0)] == held


CHECKS = [
    ("at-compacted-rv", 4, None),  # resuming after rv 4 needs 5 and on: all held
    ("after-compacted-rv", 5, None),
    ("before-compacted-rv", 3, "too old resource version: 3 (5)"),
    ("zero", 0, "too old resource version: 0 (5)"),
]


@pytest.mark.parametrize(("rv", "message"), [c[1:] for c in CHECKS], ids=[c[0] for c in CHECKS])
def test_check_answers_410_only_when_events_are_missing(rv: int, message: str | None) -> None:
    log = log_with(2, *[CM] * 6)  # holds 5 and 6; 4 fell out
    if message is None:
        log.check(rv)
    else:
        with pytest.raises(Expired) as err:
            log.check(rv)
        assert err.value.code == 410 and err.value.message == message


def test_compact_forgets_up_to_a_revision() -> None:
    log = log_with(10, CM, CM, CM, CM)
    log.compact(2)
    assert log.compacted_rv == 2
    assert [e.rv for e in log.since(0)] == [3, 4]
    with pytest.raises(Expired):
        log.check(1)


SINCE = [
    ("all", 0, None, [1, 2, 3, 4]),
    ("after-two", 2, None, [3, 4]),
    ("latest", 4, None, []),
    ("future", 9, None, []),
    ("one-storage", 0, POD, [2, 4]),
    ("one-storage-after", 2, CM, [3]),
]


@pytest.mark.parametrize(("rv", "storage", "expected"), [c[1:] for c in SINCE], ids=[c[0] for c in SINCE])
def test_since_returns_later_events_in_order(rv: int, storage: tuple[str, str] | None, expected: list[int]) -> None:
    log = log_with(10, CM, POD, CM, POD)
    assert [e.rv for e in log.since(rv, storage)] == expected


def test_event_line_is_serialized_once() -> None:
    event = Event(1, ADDED, CM, ("default", "a"), {"metadata": {"name": "a"}}, None)
    assert event.line() == b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'
    assert event.line() is event.line()


def sized(rv: int, size: int) -> Event:
    return Event(rv, ADDED, CM, ("default", f"o{rv}"), {"metadata": {}}, None, size)


BYTE_WINDOWS = [
    # (id, max bytes, sizes appended, compacted_rv, revisions still held)
    ("under-budget", 100, [30, 30, 30], 0, [1, 2, 3]),
    ("exactly-at-budget", 90, [30, 30, 30], 0, [1, 2, 3]),
    ("one-byte-over", 89, [30, 30, 30], 1, [2, 3]),
    ("one-big-event-pushes-out-many", 100, [10, 10, 10, 95], 3, [4]),
    ("the-newest-stays-however-large", 50, [10, 500], 1, [2]),
    ("unbounded", None, [10**6] * 3, 0, [1, 2, 3]),
]


@pytest.mark.parametrize(("max_bytes", "sizes", "compacted", "held"), [c[1:] for c in BYTE_WINDOWS],
                         ids=[c[0] for c in BYTE_WINDOWS])
def test_byte_budget_compacts_the_oldest_events(max_bytes: int | None, sizes: list[int], compacted: int,
                                                held: list[int]) -> None:
    log = EventLog(100, max_bytes)
    for rv, size in enumerate(sizes, start=1):
        log.append(sized(rv, size))
    assert log.compacted_rv == compacted
    assert [e.rv for e in log.since(0)] == held
    assert log.bytes == sum(sizes[rv - 1] for rv in held)
    if compacted:
        with pytest.raises(Expired):
            log.check(compacted - 1)


def test_compact_releases_the_bytes_it_forgets() -> None:
    log = EventLog(10, 1000)
    for rv in (1, 2, 3):
        log.append(sized(rv, 100))
    log.compact(2)
    assert log.bytes == 100
