"""Stopping background tasks without leaving their cancellation behind as cyclic garbage."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended (a task that ends by its CancelledError is
    done with; any other error it raises propagates).

    The CancelledError a task ends with holds, through its traceback, every frame it unwound, and
    some of those frames hold it back (asyncio's own ``TaskGroup.__aexit__`` in Python 3.11 keeps
    the error it raises in a local): a cycle that keeps the task's whole object graph (a
    controller, its informers, their connections) alive until CPython's collector finds it.  A
    test process that starts and stops clusters would pile that up and pay for it in full
    collections; dropping the tracebacks here lets reference counting free it at once."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        try:
            await task
        except asyncio.CancelledError as exc:
            error: BaseException | None = exc
            while error is not None:
                error.__traceback__ = None
                error = error.__context__
