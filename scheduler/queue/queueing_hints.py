"""Which plugins care about a cluster event, and whether their queueing hints say it may help a pod."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakeapi.scheduler.framework.interface import ClusterEvent, ClusterEventWithHint, QueueingHint
from fakeapi.scheduler.queue.entities import QueuedPodInfo


class QueueingHints:
    """The events each plugin registered (``EventsToRegister``) with their hint functions."""

    def __init__(self) -> None:
        self._registered: dict[str, list[ClusterEventWithHint]] = {}
        self._interest: dict[ClusterEvent, frozenset[str]] = {}   # event -> plugins registered for it

    def register(self, events: Iterable[tuple[str, ClusterEventWithHint]]) -> None:
        """Add ``(plugin, event)`` registrations."""
        for plugin, event in events:
            self._registered.setdefault(plugin, []).append(event)
        self._interest.clear()

    def interested(self, event: ClusterEvent) -> frozenset[str]:
        """The plugins that registered for ``event`` (their hints decide per pod)."""
        plugins = self._interest.get(event)
        if plugins is None:
            plugins = self._interest[event] = frozenset(
                plugin for plugin, registered in self._registered.items()
                if any(r.event.matches(event) for r in registered))
        return plugins

    def say_queue(self, plugin: str, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> bool:
        """Whether ``plugin`` registered for ``event`` and its hint (if any) says it may help ``info``."""
        for registered in self._registered.get(plugin, ()):
            if registered.event.matches(event):
                if registered.hint is None or registered.hint(info.pod, old, new) == QueueingHint.QUEUE:
                    return True
        return False

    def any_say_queue(self, plugins: Iterable[str], infos: list[QueuedPodInfo], event: ClusterEvent,
                      old: Any, new: Any) -> bool:
        """Whether one of ``plugins`` says ``event`` may help one of ``infos``."""
        return any(self.say_queue(p, info, event, old, new) for p in plugins for info in infos)
