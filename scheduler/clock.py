"""The one clock of the control plane: every duration, deadline and timer goes through it.

Pod lifecycles (``fakeapi.dev/run-for``, ``ready-after``), CronJob schedules, Job deadlines and
backoffs, TTLs after finish, Deployment progress deadlines and the scheduling queue's backoffs
all read :meth:`Clock.now` and wait with :meth:`Clock.call_later`, so a
test can swap the real clock for a :class:`ManualClock` and move time forward instead of
sleeping::

    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster:
        ...                        # create a CronJob "*/5 * * * *"
        await clock.advance(300)   # five minutes pass at once; the Job is created

Timestamps the control plane writes (pod ``startTime``, Job ``startTime``/``completionTime``,
condition transition times, CronJob ``lastScheduleTime``) come from the same clock, so what
the API shows agrees with the advanced time.  The API server keeps real time (creation and
deletion timestamps), as a real cluster's would be independent of its controllers.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Protocol

from fakeapi.machinery.timestamps import format_rfc3339


class Timer(Protocol):
    """A pending callback; ``cancel`` stops it if it has not run."""

    def cancel(self) -> None: ...


class Clock:
    """Wall-clock time and timers on the running event loop (the default)."""

    def now(self) -> float:
        """Seconds since the epoch."""
        return time.time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` (quick, synchronous) after ``delay`` seconds."""
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)

    async def sleep(self, delay: float) -> None:
        """Wait ``delay`` seconds of this clock's time."""
        await asyncio.sleep(max(delay, 0.0))

    def datetime(self) -> datetime:
        """:meth:`now` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.now(), UTC)

    def rfc3339(self, offset: float = 0.0) -> str:
        """:meth:`now` (plus ``offset`` seconds) as an API timestamp."""
        return format_rfc3339(datetime.fromtimestamp(self.now() + offset, UTC))


class _ManualTimer:
    def __init__(self, clock: ManualClock, callback: Callable[[], None]) -> None:
        self._clock = clock
        self.callback: Callable[[], None] | None = callback

    def cancel(self) -> None:
        self.callback = None


class ManualClock(Clock):
    """A clock that moves only when a test calls :meth:`advance` (or :meth:`set`).

    It starts at the current wall-clock time (or ``start``, seconds since the epoch), so objects
    the API server stamps with real time line up with it.  Timers due within an advance run in
    time order, each seeing :meth:`now` at its own due time.

    A ``FakeCluster`` whose control plane runs on this clock makes every advance *settle*
    (:meth:`settle_with`): what is under way finishes before time moves, and what each timer sets
    off (a Job created, its pod started, the pod's own ``run-for`` timer armed) happens at that
    timer's time, before the next one fires, as it would had the time really passed.
    """

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start
        self._timers: list[tuple[float, int, _ManualTimer]] = []
        self._seq = itertools.count()
        self._settlers: list[Callable[[], Awaitable[object]]] = []

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = _ManualTimer(self, callback)
        heapq.heappush(self._timers, (self._now + max(delay, 0.0), next(self._seq), timer))
        return timer

    async def sleep(self, delay: float) -> None:
        done = asyncio.get_running_loop().create_future()
        timer = self.call_later(delay, lambda: done.done() or done.set_result(None))
        try:
            await done
        finally:
            timer.cancel()

    async def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, running every timer that falls due on the way.

        With a cluster attached (:meth:`settle_with`), the cluster settles before time moves and
        after each timer, so what the time sets off has happened when this returns.  Without
        one, the woken loops get one pass of the event loop per timer: a test follows with
        ``wait_for`` on the state it expects.
        """
        await self.set(self._now + seconds)

    async def set(self, moment: float) -> None:
        """Move time forward to ``moment`` (seconds since the epoch); never backwards."""
        if self._settlers:
            await self._settle()
        while self._timers and self._timers[0][0] <= moment:
            when, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, when)
            if timer.callback is not None:
                timer.callback()
                await self._settle()
        self._now = max(self._now, moment)

    def settle_with(self, settle: Callable[[], Awaitable[object]]) -> Callable[[], None]:
        """Have :meth:`set` and :meth:`advance` await ``settle()`` before time moves and after
        every timer they run (``FakeCluster.settle``, which returns once its control plane has
        nothing left to do); returns the function that takes it back."""
        self._settlers.append(settle)
        return lambda: self._settlers.remove(settle) if settle in self._settlers else None

    async def _settle(self) -> None:
        if not self._settlers:
            await asyncio.sleep(0)
        for settle in list(self._settlers):
            await settle()

    @property
    def pending(self) -> int:
        """Timers not yet run or cancelled (for tests that check something is waiting)."""
        return sum(1 for *_, t in self._timers if t.callback is not None)
