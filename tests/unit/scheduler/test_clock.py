"""ManualClock: timers in time order, and an advance that lets an attached cluster settle."""

from __future__ import annotations

from fakeapi.scheduler.clock import ManualClock


async def test_timers_run_in_time_order_each_at_its_own_time() -> None:
    clock = ManualClock(start=1000)
    seen: list[tuple[str, float]] = []
    for name, delay in (("b", 20), ("a", 10), ("c", 30)):
        clock.call_later(delay, lambda name=name: seen.append((name, clock.now())))
    clock.call_later(15, lambda: seen.append(("cancelled", clock.now()))).cancel()
    await clock.advance(25)
    assert seen == [("a", 1010), ("b", 1020)]
    assert clock.now() == 1025 and clock.pending == 1


async def test_an_advance_settles_before_time_moves_and_after_every_timer() -> None:
    clock = ManualClock(start=0)
    settled_at: list[float] = []

    async def settle() -> None:
        settled_at.append(clock.now())

    clock.call_later(10, lambda: None)
    clock.call_later(20, lambda: None)
    take_back = clock.settle_with(settle)
    await clock.advance(30)
    assert settled_at == [0, 10, 20]
    take_back()
    take_back()  # twice is harmless
    clock.call_later(5, lambda: None)
    await clock.advance(10)
    assert settled_at == [0, 10, 20]


async def test_what_a_timer_sets_off_within_the_advance_happens_in_it() -> None:
    # A timer's work (done while the cluster settles) arms the next timer from that timer's own
    # time: a pod started at 10 whose run lasts 5 ends at 15, within the same advance to 20.
    clock = ManualClock(start=0)
    started: list[float] = []
    ended: list[float] = []

    async def settle() -> None:  # the cluster's reaction: start what was due, arm its end
        while len(started) < len(due):
            started.append(clock.now())
            clock.call_later(5, lambda: ended.append(clock.now()))

    due: list[float] = []
    clock.call_later(10, lambda: due.append(clock.now()))
    clock.settle_with(settle)
    await clock.advance(20)
    assert (started, ended) == ([10], [15])
