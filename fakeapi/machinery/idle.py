"""Waiting until an event loop has nothing left to run: the in-process cluster's "settled".

The in-process control plane and its server share one loop and talk through in-memory pipes, so
all of their work under way is, at any moment, a callback ready to run, a real-time timer about
to fire (a retry's backoff, the scheduler's yield after a long cycle) or a request the server is
still serving (one held by an injected latency, say).  When none of these is left for two whole
loop iterations in a row, nothing can happen until new input arrives or a timer of the
control plane's clock fires.

asyncio has no public "is the loop idle" question; the ready queue and timer heap are read from
``asyncio.BaseEventLoop``'s attributes (``_ready``, ``_scheduled``, there since Python 3.4).  On
another loop (uvloop) they are not visible, and :func:`until_idle` settles for
:data:`BLIND_PASSES` iterations in a row in which the caller's ``activity`` count (the in-process
connections' deliveries) did not move: it cannot see a chain of callbacks that talks to nobody
for longer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

# A real-time timer due this soon is work under way (a rate-limited retry's first backoffs, the
# scheduler's yield after a long cycle), waited for; later ones (request deadlines, keep-alives,
# backoffs grown long) are the loop waiting, as a clock timer is.  At most NEAR_WAITS such waits
# per settle: a poller sharing the loop (a test's own wait loop) re-arms one for ever.
NEAR = 0.1
NEAR_WAITS = 10
# Iterations without any callback but this one: the first sees the ready queue empty, the second
# that nothing the first iteration's callbacks wrote to a socket came back (the selector of the
# iteration after a write reports it).
QUIET_PASSES = 2
BLIND_PASSES = 20  # on a loop whose queue is not visible
POLL = 0.001  # how often to look again while ``busy`` names work and the loop has none to run


def _next_work(loop: asyncio.AbstractEventLoop, timers: bool) -> float | None:
    """0 when a callback is ready to run, the seconds until a real-time timer due within
    :data:`NEAR` (if ``timers``), else None; None too when ``loop`` does not show its queue."""
    ready = getattr(loop, "_ready", None)
    if not isinstance(ready, deque):
        return None
    if ready:
        return 0.0
    if not timers:
        return None
    now = loop.time()
    due = min((t.when() for t in getattr(loop, "_scheduled", ()) if not t.cancelled()), default=None)
    return None if due is None or due > now + NEAR else max(due - now, 0.0)


def loop_shows_queue(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether :func:`until_idle` can see ``loop``'s ready callbacks (asyncio's own loops)."""
    return isinstance(getattr(loop, "_ready", None), deque)


async def until_idle(busy: Callable[[], str | None], timeout: float,
                     activity: Callable[[], object] | None = None) -> None:
    """Return once the running loop has had nothing to run but this coroutine for
    :data:`QUIET_PASSES` iterations in a row, no real-time timer is due within :data:`NEAR`
    (waited for up to :data:`NEAR_WAITS` times), ``busy()`` (asked each iteration) says None, and
    ``activity()`` (a count of anything that moves while work goes on) stayed the same.  ``busy``
    names work the loop cannot show, such as requests in flight.  TimeoutError after ``timeout``
    seconds, naming what was still busy."""
    loop = asyncio.get_running_loop()
    needed = QUIET_PASSES if loop_shows_queue(loop) else BLIND_PASSES
    deadline = loop.time() + timeout
    quiet, delay, near_waits = 0, 0.0, 0
    seen = activity() if activity is not None else None
    while True:
        await asyncio.sleep(delay)
        reason = busy()
        work = _next_work(loop, timers=near_waits < NEAR_WAITS)
        near_waits += bool(work)
        if activity is not None and (now := activity()) != seen:
            seen, work = now, 0.0 if work is None else work
        if reason is None and work is None:
            quiet += 1
            if quiet >= needed:
                return
            delay = 0.0
            continue
        # Busy with nothing to run: a request waits in real time; look again shortly, not at once.
        quiet, delay = 0, POLL if work is None else work
        if loop.time() + delay > deadline:
            what = reason or ("callbacks ready to run" if work == 0.0 else "a real-time timer due")
            raise TimeoutError(f"the cluster did not settle within {timeout:g} s: {what}")
