"""Capped exponential backoff, the one retry delay of the control plane.

Its users, each with its own parameters:

- the work queue re-adds a failing key after a per-key delay (client-go's
  ``ItemExponentialFailureRateLimiter``: 5 ms doubling up to 30 s, reset when the key syncs);
- a reflector retries a failed list or watch of its resource (50 ms doubling up to 2 s, with
  jitter so informers that lost the server together do not come back in lockstep);
- the scheduling queue backs a pod off after failed attempts (upstream 1 s doubling up to 10 s);
  the pod's attempts are counted by the queue, so it only asks for :meth:`Backoff.delay`.

Only arithmetic and counters: no clock and no event loop, callers decide when a delay starts.
"""

from __future__ import annotations

import random
from typing import Generic, TypeVar

K = TypeVar("K")

# 2.0 ** 1024 overflows a float; any cap is reached long before.
_MAX_EXPONENT = 1023


class Backoff(Generic[K]):
    """``base * 2**failures`` seconds, at most ``cap``, times a random factor in ``1 ± jitter``."""

    def __init__(self, base: float, cap: float, *, jitter: float = 0.0) -> None:
        self.base = base
        self.cap = cap
        self.jitter = jitter
        self._failures: dict[K, int] = {}

    def delay(self, failures: int) -> float:
        """The delay after ``failures`` earlier failures (0: the first retry waits ``base``)."""
        delay = min(self.cap, self.base * 2.0 ** min(failures, _MAX_EXPONENT))
        if self.jitter:
            delay *= random.uniform(1 - self.jitter, 1 + self.jitter)
        return delay

    def when(self, key: K) -> float:
        """Record one more failure of ``key`` and return how long to wait before retrying it."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        return self.delay(failures)

    def retries(self, key: K) -> int:
        """Failures of ``key`` recorded since it was last forgotten."""
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        """``key`` succeeded: its next failure starts from ``base`` again."""
        self._failures.pop(key, None)
