"""Entities waiting for a cluster event, indexed by the plugins whose events may release them.

The scheduling queue keeps two such pools: *gated* (held back by a PreEnqueue check) and
*unschedulable* (rejected by plugins).  An event looks only at the entities one of its
interested plugins holds back instead of at every waiting entity: 50,000 pods waiting for their
claims would otherwise make every pod event cost O(pods).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from fakeapi.scheduler.queue.entities import Entity, QueuedGroupInfo


class WaitingPool:
    """Entities in arrival order, each filed under the plugins ``plugins_of`` names for it.

    ``plugins_of`` returning None files an entity under every event (a pod group, whose members
    may be held back by different plugins)."""

    def __init__(self, plugins_of: Callable[[Entity], Iterable[str] | None]) -> None:
        self._plugins_of = plugins_of
        self._entities: dict[str, Entity] = {}
        self._order: dict[str, int] = {}
        self._indexed: dict[str, tuple[str, ...] | None] = {}    # key -> plugins it is filed under
        self._by_plugin: dict[str, dict[str, Entity]] = {}
        self._always: dict[str, Entity] = {}
        self._seq = itertools.count()

    def __contains__(self, key: str) -> bool:
        return key in self._entities

    def __len__(self) -> int:
        return len(self._entities)

    def values(self) -> Iterable[Entity]:
        """The entities, oldest first."""
        return self._entities.values()

    def add(self, entity: Entity) -> None:
        """Add ``entity``, or file it again under its current plugins (keeping its place)."""
        key = entity.key
        if key not in self._entities:
            self._entities[key] = entity
            self._order[key] = next(self._seq)
        self._unindex(key)
        plugins = self._plugins_of(entity)
        if plugins is None:
            self._always[key] = entity
            self._indexed[key] = None
            return
        self._indexed[key] = tuple(plugins)
        for plugin in self._indexed[key]:   # type: ignore[union-attr]
            self._by_plugin.setdefault(plugin, {})[key] = entity

    def pop(self, key: str, default: Entity | None = None) -> Entity | None:
        """Remove the entity under ``key`` and return it (``default`` when absent)."""
        entity = self._entities.pop(key, None)
        if entity is None:
            return default
        del self._order[key]
        self._unindex(key)
        return entity

    def __delitem__(self, key: str) -> None:
        if self.pop(key) is None:
            raise KeyError(key)

    def candidates(self, plugins: Iterable[str]) -> list[Entity]:
        """The entities filed under any of ``plugins`` (and those looked at always), oldest first."""
        found = dict(self._always)
        for plugin in plugins:
            found.update(self._by_plugin.get(plugin, {}))
        order = self._order
        return sorted(found.values(), key=lambda entity: order[entity.key])

    def _unindex(self, key: str) -> None:
        plugins = self._indexed.pop(key, ())
        if plugins is None:
            del self._always[key]
            return
        for plugin in plugins:
            bucket = self._by_plugin[plugin]
            del bucket[key]
            if not bucket:
                del self._by_plugin[plugin]


def gating_plugins(entity: Entity) -> Iterable[str] | None:
    """The gated pool's index: the PreEnqueue plugin holding a pod back; None for a group."""
    return None if isinstance(entity, QueuedGroupInfo) else (entity.gated_by,)


def rejecting_plugins(entity: Entity) -> Iterable[str]:
    """The unschedulable pool's index: the plugins that rejected the entity."""
    return entity.rejected_by
