"""cancel_and_wait: every task ends, other errors propagate, and a cancellation leaves no cycle."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from fakeapi.machinery.tasks import cancel_and_wait


class Marker:
    """Something a coroutine holds in a local, to see when its frame is freed."""


@contextmanager
def collector_off() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def holds_its_cancellation(started: asyncio.Event, markers: list[weakref.ref[Marker]]) -> None:
    """Ends by re-raising its CancelledError from a local, as Python 3.11's TaskGroup does: the
    error's traceback holds this frame, and this frame holds the error."""
    marker = Marker()
    markers.append(weakref.ref(marker))
    started.set()
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError as exc:
        kept = exc
        raise kept from None


async def test_cancelled_tasks_end_and_free_what_they_held_without_the_collector() -> None:
    started = [asyncio.Event() for _ in range(3)]
    markers: list[weakref.ref[Marker]] = []
    tasks = [asyncio.create_task(holds_its_cancellation(event, markers)) for event in started]
    for event in started:
        await event.wait()
    with collector_off():
        await cancel_and_wait(tasks)
        assert all(task.cancelled() for task in tasks)
        del tasks
        await asyncio.sleep(0)  # the wake-up that resumed this test still holds the first one's error
        assert [ref() for ref in markers] == [None, None, None]


async def test_a_task_that_fails_instead_raises_its_error() -> None:
    async def fails_when_cancelled() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("cleanup failed") from None

    async def quiet() -> None:
        await asyncio.sleep(30)

    task = asyncio.create_task(fails_when_cancelled())
    other = asyncio.create_task(quiet())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="cleanup failed"):
        await cancel_and_wait([task, other])
    assert other.cancelling()  # cancelled with the rest before the error came out
    await cancel_and_wait([other])
    assert other.cancelled()


async def test_a_finished_task_is_waited_for_as_it_is() -> None:
    async def done() -> str:
        return "ok"

    task = asyncio.create_task(done())
    await task
    await cancel_and_wait([task])
    assert task.result() == "ok"
