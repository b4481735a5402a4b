"""WorkQueue: dedup, one worker per key, delayed and rate-limited adds, shutdown; process's workers."""

import asyncio

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.clock import ManualClock
from fakeapi.scheduler.workqueue import ShutDown, WorkQueue, process

DEADLINE = 1.0


async def next_key(queue: WorkQueue[str]) -> str:
    return await asyncio.wait_for(queue.get(), DEADLINE)


async def test_duplicate_adds_are_processed_once():
    queue: WorkQueue[str] = WorkQueue()
    for key in ("a", "b", "a", "a"):
        queue.add(key)
    assert len(queue) == 2
    assert [await next_key(queue), await next_key(queue)] == ["a", "b"]
    assert len(queue) == 0


async def test_key_readded_while_processing_waits_for_done():
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    key = await next_key(queue)
    queue.add("a")
    assert len(queue) == 0, "a key being processed must not be handed to a second worker"
    queue.done(key)
    assert len(queue) == 1
    assert await next_key(queue) == "a"


async def test_done_without_readd_drops_key():
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.done(await next_key(queue))
    assert len(queue) == 0


async def test_waiting_worker_wakes_on_add():
    queue: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # let the worker park
    queue.add("x")
    assert await asyncio.wait_for(getter, DEADLINE) == "x"


async def test_cancelled_waiter_does_not_lose_a_key():
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("x")
    first.cancel()
    assert await asyncio.wait_for(second, DEADLINE) == "x"


async def test_add_after_delivers_later():
    queue: WorkQueue[str] = WorkQueue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    queue.add_after("a", 0.02)
    assert len(queue) == 0
    assert await next_key(queue) == "a"
    assert loop.time() - start >= 0.019


async def test_add_after_keeps_earliest_deadline():
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("a", 0.01)
    queue.add_after("a", 60)
    assert await next_key(queue) == "a"


async def test_add_after_waits_on_the_queues_clock_with_one_timer_per_key():
    # client-go's AddAfter: a key waits on one timer, the earliest asked for, however many syncs
    # ask (a controller requeueing at a deadline on every sync had stacked a timer per sync).
    clock = ManualClock()
    queue: WorkQueue[str] = WorkQueue(clock=clock)
    for delay in (20, 30, 10, 40):
        queue.add_after("a", delay)
    assert clock.pending == 1
    await clock.advance(9)
    assert len(queue) == 0
    await clock.advance(1)
    assert await next_key(queue) == "a"
    queue.done("a")
    assert clock.pending == 0
    queue.add_after("a", 5)
    queue.add_after("b", 5)
    assert clock.pending == 2
    await clock.advance(5)
    assert {await next_key(queue), await next_key(queue)} == {"a", "b"}


async def test_rate_limited_retries_keep_real_time_under_a_manual_clock():
    clock = ManualClock()
    queue: WorkQueue[str] = WorkQueue(Backoff(0.001, 0.01), clock=clock)
    queue.add_rate_limited("a")
    assert clock.pending == 0
    assert await next_key(queue) == "a"


async def test_rate_limited_readd_and_forget():
    queue: WorkQueue[str] = WorkQueue(Backoff(0.001, 0.01))
    queue.add_rate_limited("a")
    queue.add_rate_limited("a")
    assert queue.retries("a") == 2
    assert await next_key(queue) == "a"
    queue.forget("a")
    assert queue.retries("a") == 0


async def test_shutdown_wakes_workers_and_ignores_adds():
    queue: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, DEADLINE)
    queue.add("a")
    queue.add_after("b", 0.001)
    assert len(queue) == 0
    with pytest.raises(ShutDown):
        await queue.get()


async def test_an_add_wakes_one_idle_worker_not_all():
    queue: WorkQueue[str] = WorkQueue()
    workers = [asyncio.create_task(queue.get()) for _ in range(50)]
    await asyncio.sleep(0)   # every worker waits
    loop = asyncio.get_running_loop()
    made = 0
    create_future = loop.create_future

    def counting() -> asyncio.Future:
        nonlocal made
        made += 1
        return create_future()

    loop.create_future = counting  # type: ignore[method-assign]
    try:
        queue.add("a")
        for _ in range(5):
            await asyncio.sleep(0)
    finally:
        del loop.create_future
    assert [task.result() for task in workers if task.done()] == ["a"]
    # A woken worker that finds nothing waits again on a new future: none but one was woken.
    assert made == 0
    queue.shut_down()
    rest = await asyncio.gather(*(w for w in workers if not w.done()), return_exceptions=True)
    assert len(rest) == 49 and all(isinstance(r, ShutDown) for r in rest)


async def test_a_woken_worker_cancelled_before_it_runs_hands_the_key_on():
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("a")      # wakes the first waiter only
    first.cancel()      # before it could run and take the key
    assert await asyncio.wait_for(second, DEADLINE) == "a"
    assert first.cancelled()


def _worker_tasks(name: str) -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(f"{name}-worker-")]


async def test_process_starts_workers_as_keys_arrive_up_to_its_limit():
    queue: WorkQueue[str] = WorkQueue()
    release = asyncio.Event()
    running: set[str] = set()
    most = 0
    synced: list[str] = []

    async def sync(key: str) -> None:
        nonlocal most
        running.add(key)
        most = max(most, len(running))
        await release.wait()
        running.discard(key)
        synced.append(key)

    task = asyncio.create_task(process(queue, sync, name="burst", workers=3))
    await asyncio.sleep(0)
    assert _worker_tasks("burst") == [], "an idle process runs in its own task only"
    for key in "abcde":
        queue.add(key)
    await wait_for(lambda: len(running) == 3, DEADLINE, interval=0, message="three keys syncing")
    for _ in range(5):
        await asyncio.sleep(0)
    assert most == 3 and len(_worker_tasks("burst")) == 2, "the calling task and two more, no fourth"
    release.set()
    await wait_for(lambda: len(synced) == 5, DEADLINE, interval=0, message="every key synced")
    assert sorted(synced) == list("abcde")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _worker_tasks("burst") == [] and queue.shutting_down


async def test_process_ends_every_worker_when_its_queue_shuts_down():
    queue: WorkQueue[str] = WorkQueue()
    gate = asyncio.Event()

    async def sync(key: str) -> None:
        await gate.wait()

    task = asyncio.create_task(process(queue, sync, name="closing", workers=4))
    await asyncio.sleep(0)
    for key in "abc":
        queue.add(key)
    await wait_for(lambda: len(_worker_tasks("closing")) == 2, DEADLINE, interval=0, message="two more workers")
    queue.shut_down()
    gate.set()
    await asyncio.wait_for(task, DEADLINE)
    assert _worker_tasks("closing") == []
