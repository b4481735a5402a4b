"""Deadlines swept by one timer: the server's header-read and request timeouts, and the API
client's bound on a request's answer.

A timer handle per key (scheduled and cancelled, its bookkeeping in Python) costs more than the
work it guards on short requests and connections; every key of a sweep gets the same ``seconds``,
so insertion order is deadline order and one timer, armed for the earliest, serves them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar

K = TypeVar("K")


class DeadlineSweep(Generic[K]):
    """Deadlines ``seconds`` after each key was added, swept by one timer; a sweep stops at the
    first key still in time, and ``expire`` is called with each key whose deadline passed (it is
    forgotten first)."""

    def __init__(self, seconds: float, expire: Callable[[K], None]) -> None:
        self.seconds = seconds
        self._expire = expire
        self._deadlines: dict[K, float] = {}
        self._timer: asyncio.TimerHandle | None = None

    def __contains__(self, key: object) -> bool:
        return key in self._deadlines

    def __len__(self) -> int:
        return len(self._deadlines)

    def add(self, key: K, loop: asyncio.AbstractEventLoop) -> None:
        """Give ``key`` its deadline, ``seconds`` from now (a key already in keeps its own)."""
        deadline = self._deadlines.setdefault(key, loop.time() + self.seconds)
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._sweep, loop)

    def discard(self, key: K) -> bool:
        """Forget ``key``; whether it was waiting for its deadline."""
        return self._deadlines.pop(key, None) is not None

    def close(self) -> None:
        """Forget every key and stop the timer: its owner stopped.  Left armed, the timer would
        keep this sweep (and what ``expire`` holds) alive until its deadline, up to a minute
        after a test's cluster is gone.  A later :meth:`add` starts afresh."""
        self._deadlines.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        deadlines = self._deadlines
        while deadlines:
            key, deadline = next(iter(deadlines.items()))
            if deadline > now:
                self._timer = loop.call_at(deadline, self._sweep, loop)
                return
            del deadlines[key]
            self._expire(key)


class TaskDeadlines:
    """Tasks cancelled ``seconds`` after they :meth:`begin` unless they :meth:`finish` first, as
    ``asyncio.timeout`` would cancel them, by one :class:`DeadlineSweep` for all of them (an
    ``asyncio.timeout`` per request costs a timer each).  After the cancellation arrives,
    :meth:`expired` tells whether it was the deadline's alone (the task's CancelledError is then
    its timeout) or somebody else's too (it goes on)."""

    def __init__(self, seconds: float) -> None:
        self._deadlines: DeadlineSweep[asyncio.Task[Any]] = DeadlineSweep(seconds, self._cancel)
        self._expired: set[asyncio.Task[Any]] = set()

    @property
    def seconds(self) -> float:
        """How long a task has from :meth:`begin`."""
        return self._deadlines.seconds

    def __contains__(self, task: object) -> bool:
        return task in self._deadlines

    def __len__(self) -> int:
        """The tasks waiting for their deadline (the requests in flight)."""
        return len(self._deadlines)

    def begin(self) -> asyncio.Task[Any]:
        """Give the current task its deadline; returns the task."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None
        self._deadlines.add(task, loop)
        return task

    def expired(self, task: asyncio.Task[Any]) -> bool:
        """After ``task`` was cancelled: whether by its deadline and nobody else also cancelled it
        (as ``asyncio.timeout`` decides)."""
        return self._forget(task) and task.uncancel() == 0

    def finish(self, task: asyncio.Task[Any]) -> None:
        """``task``'s work ended; a cancellation at its deadline that came too late is undone."""
        if not self._deadlines.discard(task) and self._forget(task):  # in time: one pop
            task.uncancel()

    def close(self) -> None:
        """Stop the sweep (see :meth:`DeadlineSweep.close`): the tasks it guarded have ended."""
        self._deadlines.close()
        self._expired.clear()

    def _forget(self, task: asyncio.Task[Any]) -> bool:
        """Forget ``task``; True when the sweep had cancelled it for its deadline."""
        self._deadlines.discard(task)
        if task in self._expired:
            self._expired.discard(task)
            return True
        return False

    def _cancel(self, task: asyncio.Task[Any]) -> None:
        self._expired.add(task)
        task.cancel()
