"""The loop of the in-server controllers (garbage collector, CRD controllers): one asyncio task
working through a queue of keys, each key queued at most once until it is taken.

Controllers feed it synchronously from commit listeners and process keys through the registry's
reads and writes.  A ``StatusError`` while processing (a concurrent writer won, the object
vanished) is expected: the commit that caused it queues the key again if work is left.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from fakeapi.errors import StatusError
from fakeapi.machinery.tasks import cancel_and_wait

K = TypeVar("K", bound=Hashable)


class Worker(Generic[K]):
    """A de-duplicating queue of keys and the task that hands each to ``process``."""

    def __init__(self, name: str, process: Callable[[K], None], log: logging.Logger) -> None:
        self._name = name
        self._process = process
        self._log = log
        self._queue: asyncio.Queue[K] = asyncio.Queue()
        self._pending: set[K] = set()
        self._task: asyncio.Task[None] | None = None

    def enqueue(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting."""
        if key not in self._pending:
            self._pending.add(key)
            self._queue.put_nowait(key)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self._name)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])

    async def _run(self) -> None:
        while True:
            key = await self._queue.get()
            self._pending.discard(key)
            try:
                self._process(key)
            except StatusError as exc:
                self._log.debug("%s: %s on %s", self._name, exc, key)
            except Exception:
                self._log.exception("%s: failed processing %s", self._name, key)
            await asyncio.sleep(0)
