"""A bounded memo for answers that recur: names, specs made from one template, field sets.

The keys are user data, so no memo may grow without bound; answers come back so often that
forgetting all of them once the memo is full (and refilling it from the next writes) costs less
than keeping an order of use, as ``functools.lru_cache`` does.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """A dict of remembered answers that forgets them all once it holds ``limit``.

    Lookups are the dict's own (``get``, ``in``); answers enter through :meth:`keep`.
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def keep(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` (first forgetting everything when full); returns it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
