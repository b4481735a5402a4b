"""until_idle: it returns only once callback chains, near timers and named work have ended, on
asyncio's loop (whose ready queue it reads) and on uvloop (where it counts iterations in which the
caller's activity count stood still)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from fakeapi.machinery.idle import NEAR, NEAR_WAITS, until_idle


def never_busy() -> str | None:
    return None


def chain(loop: asyncio.AbstractEventLoop, steps: int, done: list[int]) -> None:
    """Callbacks each scheduling the next, ``steps`` loop iterations in all."""
    def step(left: int) -> None:
        done.append(left)
        if left > 1:
            loop.call_soon(step, left - 1)
    loop.call_soon(step, steps)


async def waits_for_a_callback_chain() -> None:
    done: list[int] = []
    chain(asyncio.get_running_loop(), 100, done)
    await until_idle(never_busy, timeout=5, activity=lambda: len(done))
    assert len(done) == 100


async def waits_for_tasks_talking_through_a_queue() -> None:
    """A producer and a consumer handing items over one at a time: every hand-over is a wake-up."""
    queue: asyncio.Queue[int] = asyncio.Queue(maxsize=1)
    seen: list[int] = []

    async def produce() -> None:
        for i in range(100):
            await queue.put(i)

    async def consume() -> None:
        while True:
            seen.append(await queue.get())

    producer, consumer = asyncio.create_task(produce()), asyncio.create_task(consume())
    await until_idle(never_busy, timeout=5, activity=lambda: len(seen))
    assert producer.done() and seen == list(range(100))
    consumer.cancel()


def run_on(loop_kind: str, test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    if loop_kind == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(test())
    else:
        asyncio.run(test())


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
@pytest.mark.parametrize("test", [waits_for_a_callback_chain, waits_for_tasks_talking_through_a_queue])
def test_settles_after_the_work_under_way(loop_kind: str, test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    run_on(loop_kind, test)


async def test_a_chain_is_seen_without_an_activity_count() -> None:
    # asyncio's own loop shows its ready queue: a chain far longer than any count of quiet passes.
    done: list[int] = []
    chain(asyncio.get_running_loop(), 500, done)
    await until_idle(never_busy, timeout=5)
    assert len(done) == 500


async def test_waits_for_a_real_time_timer_due_soon() -> None:
    fired = asyncio.Event()
    asyncio.get_running_loop().call_later(NEAR / 4, fired.set)
    await until_idle(never_busy, timeout=5)
    assert fired.is_set()


async def test_a_timer_due_later_is_the_loop_waiting() -> None:
    # Were it waited for, the 0.5 s timeout would pass first.
    handle = asyncio.get_running_loop().call_later(30, lambda: None)
    await until_idle(never_busy, timeout=0.5)
    handle.cancel()


async def test_a_poller_sharing_the_loop_does_not_hold_it_for_ever() -> None:
    # A test's own wait loop re-arms a near timer for ever: waited for NEAR_WAITS times, no more.
    polls = [0]

    async def poll() -> None:
        while True:
            polls[0] += 1
            await asyncio.sleep(0.01)

    poller = asyncio.create_task(poll())
    try:
        await until_idle(never_busy, timeout=5)
    finally:
        poller.cancel()
    assert polls[0] >= NEAR_WAITS


async def test_cancelled_timers_are_not_work() -> None:
    asyncio.get_running_loop().call_later(NEAR / 4, lambda: None).cancel()
    await until_idle(never_busy, timeout=NEAR / 8)


async def test_named_work_holds_it_until_done() -> None:
    loop = asyncio.get_running_loop()
    in_flight = [1]
    loop.call_later(0.2, in_flight.clear)  # a request answered in 0.2 s of real time
    await until_idle(lambda: "a request in flight" if in_flight else None, timeout=5)
    assert not in_flight


async def test_times_out_naming_what_is_busy() -> None:
    with pytest.raises(TimeoutError, match=r"did not settle within 0.05 s: 2 requests in flight"):
        await until_idle(lambda: "2 requests in flight", timeout=0.05)


async def test_times_out_on_a_loop_that_never_rests() -> None:
    loop = asyncio.get_running_loop()
    spinning = [True]

    def spin() -> None:
        if spinning:
            loop.call_soon(spin)

    loop.call_soon(spin)
    try:
        with pytest.raises(TimeoutError, match="callbacks ready to run"):
            await until_idle(never_busy, timeout=0.05)
    finally:
        spinning.clear()
