"""DeadlineSweep: one timer for many keys' deadlines (the header-read and request timeouts), on a
loop whose clock and timers the test drives; TaskDeadlines: tasks cancelled at their deadline, on a
real loop, told apart from tasks somebody else cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fakeapi.machinery.deadlines import DeadlineSweep, TaskDeadlines


class Clock:
    """The two loop methods the sweep uses: ``time`` and ``call_at`` (timers kept, never run)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, Any, tuple[Any, ...]]] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Any, *args: Any) -> tuple[float, Any, tuple[Any, ...]]:
        timer = (when, callback, args)
        self.timers.append(timer)
        return timer  # the handle: the sweep only keeps it

    def run_until(self, when: float) -> None:
        """Advance to ``when``, running the timers due by then in deadline order."""
        while due := sorted((t for t in self.timers if t[0] <= when), key=lambda t: t[0]):
            timer = due[0]
            self.timers.remove(timer)
            self.now = timer[0]
            timer[1](*timer[2])
        self.now = when


# (steps, expired keys in order, deadlines of the timers left): a step is (time, op, key).
CASES = [
    pytest.param([(0, "add", "a"), (1, "add", "b")], 10, ["a"], [11.0], id="first-due-then-rearmed"),
    pytest.param([(0, "add", "a"), (1, "add", "b")], 11, ["a", "b"], [], id="both-due"),
    pytest.param([(0, "add", "a"), (1, "add", "b"), (2, "discard", "a")], 10, [], [11.0], id="discarded-first"),
    pytest.param([(0, "add", "a"), (5, "add", "a")], 10, ["a"], [], id="added-again-keeps-its-deadline"),
    pytest.param([(0, "add", "a"), (1, "discard", "a"), (3, "add", "a")], 10, [], [13.0], id="re-added-after-discard"),
    pytest.param([(0, "add", "a"), (1, "discard", "a")], 10, [], [], id="nothing-left"),
    pytest.param([], 10, [], [], id="never-armed"),
]


@pytest.mark.parametrize(("steps", "until", "expired", "left"), CASES)
def test_sweep(steps: list[tuple[float, str, str]], until: float, expired: list[str], left: list[float]) -> None:
    clock = Clock()
    seen: list[str] = []
    sweep: DeadlineSweep[str] = DeadlineSweep(10.0, seen.append)
    for at, op, key in steps:
        clock.run_until(at)
        if op == "add":
            sweep.add(key, clock)  # type: ignore[arg-type]
        else:
            assert sweep.discard(key)
    clock.run_until(until)
    assert seen == expired
    assert [t[0] for t in clock.timers] == left
    assert all(key not in sweep for key in expired)
    assert not sweep.discard("never-added")


def test_one_timer_for_many_keys() -> None:
    clock = Clock()
    sweep: DeadlineSweep[int] = DeadlineSweep(10.0, lambda key: None)
    for key in range(100):
        sweep.add(key, clock)  # type: ignore[arg-type]
    assert len(clock.timers) == 1
    assert all(key in sweep for key in range(100))


SECONDS = 0.05


async def _guarded(deadlines: TaskDeadlines, work: float, *, outside: bool = False) -> str:
    """``work`` seconds under a deadline, as ApiClient's requests run: "done", "timeout" or
    "cancelled" (somebody else cancelled it too, when ``outside``)."""
    task = deadlines.begin()
    if outside:
        asyncio.get_running_loop().call_later(SECONDS, task.cancel)
    try:
        await asyncio.sleep(work)
    except asyncio.CancelledError:
        if deadlines.expired(task):
            return "timeout"
        raise
    finally:
        deadlines.finish(task)
    return "done"


async def test_overdue_task_times_out_and_one_in_time_finishes() -> None:
    deadlines = TaskDeadlines(SECONDS)
    results = await asyncio.wait_for(asyncio.gather(_guarded(deadlines, 30), _guarded(deadlines, 0)), 10)
    assert results == ["timeout", "done"]


async def test_a_task_that_finished_keeps_no_deadline() -> None:
    deadlines = TaskDeadlines(SECONDS)

    async def twice() -> str:
        assert await _guarded(deadlines, 0) == "done"
        assert asyncio.current_task() not in deadlines
        await asyncio.sleep(3 * SECONDS)  # past the first deadline: nothing cancels the task now
        return await _guarded(deadlines, 0)

    assert await asyncio.wait_for(twice(), 10) == "done"


async def test_somebody_elses_cancellation_goes_on() -> None:
    # The deadline and the outside cancel come together: the task is cancelled, not timed out.
    deadlines = TaskDeadlines(SECONDS)
    task = asyncio.ensure_future(_guarded(deadlines, 30, outside=True))
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert task.cancelled()


async def test_a_closed_sweep_forgets_its_keys_and_a_later_key_rearms_it() -> None:
    loop = asyncio.get_running_loop()
    expired: list[str] = []
    second_expired = loop.create_future()

    def expire(key: str) -> None:
        expired.append(key)
        if key == "after close":
            second_expired.set_result(None)

    sweep = DeadlineSweep(SECONDS, expire)
    sweep.add("before close", loop)
    sweep.close()
    assert "before close" not in sweep
    sweep.add("after close", loop)
    await asyncio.wait_for(second_expired, 10)
    assert expired == ["after close"]  # the first key's deadline came earlier, and never fired
