"""A work queue of keys with client-go's guarantees, for asyncio workers.

- **Dedup:** a key added many times before a worker takes it is processed once (``dirty`` set).
- **One worker per key:** while a key is being processed (``processing`` set) a re-add is only
  remembered; the key goes back into the queue when the worker calls ``done``.
- **Rate-limited re-add:** ``add_rate_limited`` delays a failing key exponentially per key until
  ``forget`` resets it, in real time.
- **Delayed add:** ``add_after`` adds a key after a delay of the queue's clock (a controller's
  requeue, e.g. at a deadline): like client-go's ``AddAfter``, a key waits on one timer, the
  earliest asked for, however many syncs asked.

The backoff arithmetic lives in :class:`~fakeapi.scheduler.backoff.Backoff`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Generic, TypeVar

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.client import TRANSPORT_ERRORS
from fakeapi.scheduler.clock import Clock, Timer

from fakeapi.errors import StatusError

K = TypeVar("K")
log = logging.getLogger(__name__)
# Rate-limited retries wait in real time even when a test drives the control plane's clock by
# hand: a write refused by a conflict is retried without the test advancing time.
_REAL_TIME = Clock()


class ShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down."""


class WorkQueue(Generic[K]):
    """FIFO of unique keys for any number of asyncio workers."""

    def __init__(self, backoff: Backoff[K] | None = None, clock: Clock | None = None) -> None:
        """``backoff`` times :meth:`add_rate_limited` (default: 5 ms doubling up to 30 s per key);
        ``clock`` times :meth:`add_after` (default: real time)."""
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._clock = clock or _REAL_TIME
        # Per key, the pending timer and when it is due: rate-limited retries, delayed adds.
        self._retrying: dict[K, tuple[float, Timer]] = {}
        self._delayed: dict[K, tuple[float, Timer]] = {}
        self._backoff: Backoff[K] = backoff or Backoff(0.005, 30.0)
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        # Called when a key is queued and no worker waits for one (see process).
        self._starved: Callable[[], None] | None = None

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already queued; a key being processed is re-queued on done."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        if not self._wake() and self._starved is not None:
            self._starved()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds of the queue's clock; an earlier pending one wins."""
        self._add_later(self._delayed, self._clock, key, delay)

    def add_rate_limited(self, key: K) -> None:
        """Re-add a key that failed, after its per-key exponential backoff (real time)."""
        self._add_later(self._retrying, _REAL_TIME, key, self._backoff.when(key))

    def _add_later(self, pending: dict[K, tuple[float, Timer]], clock: Clock, key: K, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        due = clock.now() + delay
        current = pending.get(key)
        if current is not None:
            if current[0] <= due:
                return
            current[1].cancel()
        pending[key] = (due, clock.call_later(delay, partial(self._fire, pending, key)))

    def forget(self, key: K) -> None:
        """The key succeeded: reset its backoff."""
        self._backoff.forget(key)

    def retries(self, key: K) -> int:
        return self._backoff.retries(key)

    async def get(self) -> K:
        """Wait for the next key and mark it processing; raise :class:`ShutDown` when closed."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                # Cancelled: if a key's wake-up reached this waiter already, pass it on, so no
                # key is left queued while other workers sleep (as asyncio.Queue.get does).
                if waiter.done() and not waiter.cancelled():
                    self._wake()
                else:
                    waiter.cancel()
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(waiter)
                raise
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        """The worker finished ``key``; if it was re-added meanwhile, queue it again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake()

    def shut_down(self) -> None:
        """Stop accepting keys and drop queued ones; waiting workers get :class:`ShutDown`."""
        self._shutting_down = True
        for pending in (self._retrying, self._delayed):
            for _, timer in pending.values():
                timer.cancel()
            pending.clear()
        self._queue.clear()
        self._dirty.clear()
        waiters, self._waiters = self._waiters, deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def _fire(self, pending: dict[K, tuple[float, Timer]], key: K) -> None:
        pending.pop(key, None)
        self.add(key)

    def _wake(self) -> bool:
        """Wake one waiting worker; whether there was one."""
        # One waiter per queued key: waking every waiter cost each add a task switch per idle
        # worker.  A woken waiter that is cancelled before it runs hands the wake-up on (see get).
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return True
        return False


async def process(queue: WorkQueue[K], sync: Callable[[K], Awaitable[None]], *, name: str,
                  workers: int = 1, expected: tuple[type[Exception], ...] = (StatusError, *TRANSPORT_ERRORS)
                  ) -> None:
    """Run up to ``workers`` loops over ``queue`` until it shuts down or the task is cancelled.

    client-go's ``processNextWorkItem``: a key that syncs is forgotten (its backoff reset); one
    that fails is re-added rate-limited.  ``expected`` errors (API errors and requests without
    an answer by default) are logged briefly; anything else is a bug and logged with its
    traceback.  The queue is shut down on exit.

    The calling task is the first worker; another starts only when a key is queued while every
    running worker is busy, up to ``workers``.  client-go starts all of its goroutines at once,
    but an idle asyncio task is not free: a control plane's ~70 idle workers were an eighth of a
    test cluster's start and stop.  Started workers stay, so a burst is served as upstream's.
    """
    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            try:
                await sync(key)
                queue.forget(key)
            except expected as err:
                log.info("%s: %s failed, retrying: %s", name, key, err)
                queue.add_rate_limited(key)
            except Exception:
                log.exception("%s: %s crashed, retrying", name, key)
                queue.add_rate_limited(key)
            finally:
                queue.done(key)

    try:
        async with asyncio.TaskGroup() as tg:
            started = 1

            def start_another() -> None:
                nonlocal started
                if started < workers:
                    tg.create_task(worker(), name=f"{name}-worker-{started}")
                    started += 1

            queue._starved = start_another
            try:
                await worker()
            finally:
                # The group stops taking tasks once this body is done.
                queue._starved = None
    finally:
        queue.shut_down()
