"""The backoff sub-queue: entities that failed recently, until their backoff expires."""

from __future__ import annotations

from fakeapi.scheduler.queue.keyed_heap import KeyedHeap


class BackoffQueue:
    """Entity keys by backoff expiry, those rejected by plugins and those that hit an error
    apart: only a rejected one may be taken before its expiry (:meth:`pop_early`)."""

    def __init__(self) -> None:
        self._rejected = KeyedHeap()
        self._errored = KeyedHeap()

    def __contains__(self, key: str) -> bool:
        return key in self._rejected or key in self._errored

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errored)

    def push(self, key: str, expiry: float, *, error: bool = False) -> None:
        """Back ``key`` off until ``expiry``, replacing an earlier backoff of it."""
        # Pushing replaces the key's entry in its own heap; only the other one needs a discard.
        if error:
            self._rejected.discard(key)
            self._errored.push(key, expiry)
        else:
            self._errored.discard(key)
            self._rejected.push(key, expiry)

    def discard(self, key: str) -> None:
        """Forget ``key`` if backing off."""
        self._rejected.discard(key)
        self._errored.discard(key)

    def pop_expired(self, now: float) -> list[str]:
        """Remove and return the keys whose backoff expired by ``now``, rejected ones first."""
        return self._rejected.pop_through(now) + self._errored.pop_through(now)

    def pop_early(self) -> str | None:
        """The rejected key that expires first, taken before its expiry; None if there is none."""
        return self._rejected.pop()

    def next_expiry(self) -> float | None:
        """When the first backoff expires, None when nothing backs off."""
        expiries = [e for e in (self._rejected.first_rank(), self._errored.first_rank()) if e is not None]
        return min(expiries, default=None)
