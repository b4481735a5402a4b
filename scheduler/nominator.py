"""Nominated pods: pending pods the scheduler has promised a node to (``status.nominatedNodeName``).

A preemptor gets its node nominated while its victims go away; until it binds, the room it was
promised is counted against that node for every pod of lower or equal priority, so nobody else
takes it (upstream's ``RunFilterPluginsWithNominatedPods`` for NodeResourcesFit).  Nominations
come from the scheduler itself (at once, before the status write lands) and from the pods'
``status.nominatedNodeName`` as the informer shows it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fakeapi.scheduler.snapshot import pod_requests


class Nominated(NamedTuple):
    priority: int
    requests: dict[str, int]


class Nominator:
    """Nominated pods by node."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Nominated]] = {}
        self._node_of: dict[str, str] = {}

    def nominate(self, pod: dict[str, Any], node_name: str) -> None:
        """Promise ``node_name`` to the pending ``pod`` ("" withdraws the promise)."""
        uid = pod["metadata"]["uid"]
        self.remove(uid)
        if node_name:
            priority = int((pod.get("spec") or {}).get("priority") or 0)
            self._by_node.setdefault(node_name, {})[uid] = Nominated(priority, pod_requests(pod))
            self._node_of[uid] = node_name

    def observe(self, pod: dict[str, Any]) -> None:
        """A pending pod as the informer shows it: its ``status.nominatedNodeName`` counts."""
        node_name = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if node_name != self._node_of.get(pod["metadata"]["uid"], ""):
            self.nominate(pod, node_name)

    def remove(self, uid: str) -> None:
        """The pod bound, was deleted or lost its nomination."""
        node_name = self._node_of.pop(uid, None)
        if node_name is not None:
            pods = self._by_node[node_name]
            del pods[uid]
            if not pods:
                del self._by_node[node_name]

    def __len__(self) -> int:
        return len(self._node_of)

    def node_of(self, uid: str) -> str:
        """The node nominated for the pod, or ''."""
        return self._node_of.get(uid, "")

    def pods_on(self, node_name: str) -> dict[str, Nominated]:
        """The pods nominated to ``node_name`` by UID."""
        return self._by_node.get(node_name, {})

    def usage(self, node_name: str, priority: int, exclude: str) -> tuple[dict[str, int], int]:
        """(requests, pods) that nominated pods of at least ``priority`` claim on a node, ``exclude`` aside."""
        requested: dict[str, int] = {}
        count = 0
        for uid, nominated in self._by_node.get(node_name, {}).items():
            if uid == exclude or nominated.priority < priority:
                continue
            count += 1
            for name, value in nominated.requests.items():
                requested[name] = requested.get(name, 0) + value
        return requested, count
