"""Attempts in flight, and the cluster events that arrived during them.

An event that arrives while an entity is popped and its attempt is not over is remembered, so
it can be replayed through the queueing hints when the entity comes back rejected: a device
freed during a binding cycle is never missed.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from typing import Any

from fakeapi.scheduler.framework.interface import ClusterEvent
from fakeapi.scheduler.queue.entities import Entity


class InFlight:
    """The pods of popped entities until their attempt is done, and the events seen meanwhile."""

    def __init__(self) -> None:
        self._seq = itertools.count()   # orders pops and events
        self._pods: dict[str, int] = {}   # pod uid -> pop seq, in pop order
        self._events: deque[tuple[int, ClusterEvent, Any, Any]] = deque()

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def start(self, entity: Entity) -> None:
        """``entity`` was popped: its pods are in flight, its ``pop_seq`` says since when."""
        entity.pop_seq = next(self._seq)
        for info in entity.pods():
            self._pods[info.uid] = entity.pop_seq

    def record(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """Remember ``event`` while a pod is in flight (only then can it be missed)."""
        if self._pods:
            self._events.append((next(self._seq), event, old, new))

    def events_since(self, pop_seq: int) -> Iterator[tuple[ClusterEvent, Any, Any]]:
        """The events recorded after the pop numbered ``pop_seq``, oldest first."""
        return ((event, old, new) for seq, event, old, new in self._events if seq > pop_seq)

    def done(self, uid: str) -> None:
        """Pod ``uid``'s attempt is over: forget the events no pod in flight may still need."""
        if self._pods.pop(uid, None) is None:
            return
        oldest = next(iter(self._pods.values()), None)
        events = self._events
        while events and (oldest is None or events[0][0] < oldest):
            events.popleft()
