"""A heap of keys with lazy deletion, the shape of the queue's active and backoff sub-queues."""

from __future__ import annotations

import heapq
import itertools
from typing import Any


class KeyedHeap:
    """Keys ordered by a rank, smallest first, FIFO among equal ranks.

    Pushing a key again or discarding it leaves its old entry in the heap, skipped when it
    surfaces: a move between sub-queues costs O(log n), never a search of the heap.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[Any, ...]] = []    # (*rank, seq, key)
        self._live: dict[str, int] = {}          # key -> seq of its current entry
        self._seq = itertools.count()

    def __contains__(self, key: str) -> bool:
        return key in self._live

    def __len__(self) -> int:
        return len(self._live)

    def push(self, key: str, *rank: float) -> None:
        """Queue ``key`` at ``rank``, replacing its earlier entry if it has one."""
        seq = next(self._seq)
        self._live[key] = seq
        heapq.heappush(self._heap, (*rank, seq, key))

    def discard(self, key: str) -> None:
        """Forget ``key`` if queued."""
        self._live.pop(key, None)

    def pop_through(self, bound: float) -> list[str]:
        """Remove and return the live keys whose first rank component is at most ``bound``, in order."""
        heap, live = self._heap, self._live
        keys = []
        while heap and heap[0][0] <= bound:
            entry = heapq.heappop(heap)
            key = entry[-1]
            if live.get(key) == entry[-2]:
                del live[key]
                keys.append(key)
        return keys

    def first_rank(self) -> float | None:
        """The first rank component of the smallest live entry, None when empty."""
        heap, live = self._heap, self._live
        while heap and live.get(heap[0][-1]) != heap[0][-2]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def pop(self) -> str | None:
        """Remove and return the smallest live key, None when empty."""
        heap, live = self._heap, self._live
        while heap:
            entry = heapq.heappop(heap)
            key = entry[-1]
            if live.get(key) == entry[-2]:
                del live[key]
                return key
        return None
