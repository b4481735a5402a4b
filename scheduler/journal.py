"""A change journal: which keys (node names, device pools) changed since a stamp, in O(changes).

What the scheduler remembers about a node (a Filter verdict, a whole failed attempt) holds while
nothing the verdict read has changed.  Checking every node's stamps costs O(nodes) per pod; at
5,000 nodes and thousands of pods retried whenever a device is freed that is most of the
control plane's time.  A journal answers "what changed since stamp S" by walking back from the
newest change to S instead.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class ChangeJournal(Generic[K]):
    """The last change of each key, newest last; ``stamp`` counts every change so far."""

    __slots__ = ("_last", "stamp")

    def __init__(self) -> None:
        self._last: OrderedDict[K, int] = OrderedDict()
        self.stamp = 0

    def touch(self, key: K) -> None:
        """``key`` changed now."""
        self.stamp += 1
        last = self._last
        last[key] = self.stamp
        last.move_to_end(key)

    def since(self, stamp: int, limit: int) -> list[K] | None:
        """The keys changed after ``stamp`` (newest first), or None when more than ``limit`` did."""
        changed: list[K] = []
        if stamp >= self.stamp:
            return changed
        for key, at in reversed(self._last.items()):
            if at <= stamp:
                break
            if len(changed) == limit:
                return None
            changed.append(key)
        return changed
