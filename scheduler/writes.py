"""Writes whose outcome must be known before the writer moves on.

A write that fails without a clear answer (see :func:`~fakeapi.scheduler.client.outcome_unknown`)
may have been committed.  Where acting on a wrong guess does harm — allocating devices a lost
answer already gave to a claim, binding a bound pod again, giving up a condition that never
arrived — the writer uses :func:`write_until_known`: after such a failure it re-reads the object
and either finds its write there (done) or writes again.  Writing again is what settles the
question: every such write carries a precondition (a resourceVersion, an unbound pod, a UID), so
of the lost attempt and the new one at most one can apply, and a 409 sends the writer back to
re-read.

Such a loop only ends on an answer: it waits out an unreachable server with capped backoff, as
the informers do.  Writes whose outcome nobody depends on (Events) or that a control loop
re-derives from its informer anyway (the controllers' and the kubelet's updates with a
resourceVersion) need none of this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.client import outcome_unknown

from fakeapi.errors import Conflict

T = TypeVar("T")
log = logging.getLogger(__name__)

# Between attempts whose outcome is unknown: quick while a connection merely broke, at most 1 s.
_BACKOFF: Backoff[str] = Backoff(0.02, 1.0, jitter=0.2)
# Attempts before a 409 that is not the writer's own is given up (client-go's retry.DefaultRetry).
CONFLICT_ATTEMPTS = 5


async def write_until_known(write: Callable[[], Awaitable[T]], landed: Callable[[], Awaitable[T | None]], *,
                            what: str, conflict_attempts: int = CONFLICT_ATTEMPTS) -> T:
    """Run ``write`` until the server's answer says whether it applied; return what was written.

    ``landed`` re-reads the server: it returns the written state when the write (this one or a
    lost earlier attempt) is there, None when ``write`` should run again (it may refresh what
    ``write`` sends), and raises when the write can no longer apply.  It runs after a failure of
    unknown outcome and after a 409 — possibly caused by the writer's own committed attempt; the
    ``conflict_attempts``-th 409 not explained that way is raised.  Other errors of ``write``
    and ``landed`` are raised as they are.
    """
    failures = 0
    conflicts = 0
    while True:
        conflict: Conflict | None = None
        try:
            return await write()
        except Conflict as exc:
            conflicts += 1
            conflict = exc
        except Exception as exc:
            if not outcome_unknown(exc):
                raise
            failures += 1
            log.info("%s: outcome unknown (%s), re-reading", what, exc)
            await asyncio.sleep(_BACKOFF.delay(failures - 1))
        while True:   # a read is safe to repeat until it gets an answer
            try:
                result = await landed()
                break
            except Exception as exc:
                if not outcome_unknown(exc):
                    raise
                failures += 1
                await asyncio.sleep(_BACKOFF.delay(failures - 1))
        if result is not None:
            return result
        if conflict is not None and conflicts >= conflict_attempts:
            raise conflict
