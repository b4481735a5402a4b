"""What the API server says of its objects when it shares the control plane's process.

A ``FakeCluster`` with its control plane in the same process hands it a :class:`Presence` (the
server's ``fakeapi.presence.StorePresence``): whether a resource has objects, read off the store
instead of a watch, and a call when one is committed.  The informer factory defers the watch of
an empty resource, and the control plane the loops of ``controllers.triggers``, until then.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol

Resource = tuple[str, str, str]
"""(API group, version, plural)."""


class Presence(Protocol):
    """Which objects the server holds, and which changed since its bootstrap."""

    def exists(self, resource: Resource) -> bool:
        """Whether an object of ``resource`` exists now (True for a resource the server does not
        know, whose watch must say so itself)."""
        ...

    def present(self, resources: Collection[Resource]) -> bool:
        """Whether an object of one of ``resources`` was created or changed since the bootstrap."""
        ...

    def when_present(self, resources: Collection[Resource], callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once, synchronously, right after the next commit (a create, update
        or delete) of an object of one of ``resources``; returns a function that cancels the call."""
        ...
