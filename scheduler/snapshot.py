"""The scheduler's node view: per-node usage kept up to date incrementally, read by each cycle.

Upstream copies a generation-stamped snapshot of its cache for every cycle because its event
handlers run concurrently with the cycle.  Here the scheduling cycle is synchronous inside one
event loop, so informer handlers can never run in the middle of it: the live cache *is* a
consistent snapshot for the duration of a cycle and nothing has to be copied.  Only what changes
is recomputed: a pod's requests once when it is added, a node's allocatable when the node changes.

Assumed pods (reserved, binding in flight) count against their node exactly like bound pods, so
the next cycle never double-books cpu/memory/pod slots; a failed binding forgets them.

Every change to a node's object or usage stamps it with a new ``generation``, so what was
computed for a node (:class:`FitMemo`: Filter statuses and scores per pod signature) stays
valid exactly as long as the stamp it was computed at.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from fakeapi.scheduler.journal import ChangeJournal
from fakeapi.scheduler.rules.pods import is_pod_terminal, node_of

from fakeapi.machinery.podresources import POD_LEVEL_RESOURCES, aggregate_container_requests
from fakeapi.machinery.quantity import quantity_milli as _parse_milli

if TYPE_CHECKING:   # node_search imports this module
    from fakeapi.scheduler.node_search import FitIndex

CPU, MEMORY, PODS = "cpu", "memory", "pods"
# Upstream scores pods without requests as if they asked for this much (non-zero requests).
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY_MILLI = 200 * 1024 * 1024 * 1000
# One counter for every NodeInfo: a node deleted and created again never reuses a stamp.
_generations = itertools.count(1)
# Pods of one workload repeat the same few quantities ("100m", "1Gi"): parse each once.
quantity_milli = functools.lru_cache(maxsize=4096)(_parse_milli)


def _container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    # The API server defaults requests to limits; accept both so a pod stored without
    # defaulting is accounted the same way.
    merged = dict(resources.get("limits") or {})
    merged.update(resources.get("requests") or {})
    return {name: quantity_milli(value) for name, value in merged.items()}


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """Effective requests in milli-units: the containers' at their busiest (sidecars included, see
    :mod:`fakeapi.machinery.podresources`), the pod-level request of cpu and memory instead where
    the pod sets one (PodLevelResources; the API server drops the field when the gate is off),
    plus overhead."""
    spec = pod.get("spec") or {}
    total = aggregate_container_requests(spec, _container_requests)
    pod_level = (spec.get("resources") or {}).get("requests")
    if pod_level:
        for name in POD_LEVEL_RESOURCES:
            if name in pod_level:
                total[name] = quantity_milli(pod_level[name])
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + quantity_milli(value)
    return total


def non_zero_requests(requests: Mapping[str, int]) -> tuple[int, int]:
    """(milli-cpu, memory milli) as upstream's scoring sees them."""
    return requests.get(CPU) or DEFAULT_MILLI_CPU, requests.get(MEMORY) or DEFAULT_MEMORY_MILLI


class NodeInfo:
    """One node and what the pods placed on it (bound or assumed) use."""

    __slots__ = ("_journal", "allocatable", "generation", "name", "node", "non_zero", "pod_count", "pods",
                 "requested")

    def __init__(self, name: str, node: dict[str, Any] | None = None,
                 journal: ChangeJournal[str] | None = None) -> None:
        """``journal`` (its cache's) is told of every change, as the generation is."""
        self.name = name
        self._journal = journal
        self.generation = next(_generations)
        self.node: dict[str, Any] | None = None
        # None = the node reports no allocatable at all: treated as unlimited (see report).
        self.allocatable: dict[str, int] | None = None
        self.requested: dict[str, int] = {}
        self.non_zero = [0, 0]
        self.pod_count = 0
        self.pods: dict[str, dict[str, int]] = {}
        if node is not None:
            self.set_node(node)

    def _changed(self) -> None:
        self.generation = next(_generations)
        if self._journal is not None:
            self._journal.touch(self.name)

    def set_node(self, node: dict[str, Any]) -> None:
        self._changed()
        self.node = node
        allocatable = (node.get("status") or {}).get("allocatable")
        self.allocatable = (None if allocatable is None
                            else {k: quantity_milli(v) for k, v in allocatable.items()})

    def add_pod(self, uid: str, requests: dict[str, int]) -> None:
        if uid in self.pods:
            return
        self.pods[uid] = requests
        self._account(requests, 1)

    def remove_pod(self, uid: str) -> None:
        requests = self.pods.pop(uid, None)
        if requests is not None:
            self._account(requests, -1)

    def _account(self, requests: dict[str, int], sign: int) -> None:
        self._changed()
        for name, value in requests.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        cpu, memory = non_zero_requests(requests)
        self.non_zero[0] += sign * cpu
        self.non_zero[1] += sign * memory
        self.pod_count += sign


class FitMemo:
    """What the eager Filter plugins answered and the Score plugins gave per node, for the pod
    signatures seen last (``Framework.sign_pod``), each entry valid while its node keeps the
    generation it was computed at.  Pods of a Deployment or a Job share one signature, and
    between two of their cycles only the nodes that got or lost a pod change: the other nodes'
    answers are reused instead of computed again (upstream's equivalence-class idea)."""

    def __init__(self, signatures: int = 16) -> None:
        self._signatures = signatures
        self._tables: OrderedDict[Hashable, MemoTable] = OrderedDict()

    def table(self, signature: Hashable, nodes: int) -> MemoTable:
        """Node name -> ``[generation, status, score or None]`` for ``signature`` (the least
        recently used signature's table goes when there are too many)."""
        table = self._tables.get(signature)
        if table is None:
            table = self._tables[signature] = MemoTable()
            if len(self._tables) > self._signatures:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(signature)
            if len(table) > 2 * nodes + 16:   # entries of deleted nodes: start afresh
                table.clear()
                table.index = None
        return table


class MemoTable(dict[str, list[Any]]):
    """One signature's entries of a :class:`FitMemo`, and the host selection's index over them
    (``index``, or None), which goes with them."""

    __slots__ = ("index",)

    def __init__(self) -> None:
        super().__init__()
        self.index: FitIndex | None = None


class NodeCache:
    """Node infos indexed by name, in a stable order, fed by node and assigned-pod events."""

    def __init__(self) -> None:
        self._infos: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}
        self._assumed: set[str] = set()
        self._ordered: list[NodeInfo] | None = None
        self._positions: dict[str, int] | None = None   # name -> place in _ordered, made when asked
        # Every change to a node's object or usage (a change to the node set makes a new
        # ``nodes()`` list: whoever compares with an earlier one sees that instead).
        self.changes: ChangeJournal[str] = ChangeJournal()

    # -- nodes --
    def set_node(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        info = self._infos.get(name)
        if info is None:
            self._infos[name] = NodeInfo(name, node, self.changes)
            self._ordered = None
        else:
            if info.node is None:
                self._ordered = None
            info.set_node(node)

    def remove_node(self, name: str) -> None:
        info = self._infos.get(name)
        if info is None:
            return
        if info.pods:
            info.node = None   # keep usage until its pods go, as upstream does
        else:
            del self._infos[name]
        self._ordered = None

    def nodes(self) -> list[NodeInfo]:
        """Nodes that exist, in a stable (name) order; cached until the node set changes."""
        if self._ordered is None:
            self._ordered = sorted((i for i in self._infos.values() if i.node is not None),
                                   key=lambda i: i.name)
            self._positions = None
        return self._ordered

    def positions(self) -> Mapping[str, int]:
        """Node name -> its place in :meth:`nodes` (made once per list, for every index over it)."""
        nodes = self.nodes()
        if self._positions is None:
            self._positions = {info.name: i for i, info in enumerate(nodes)}
        return self._positions

    def get(self, name: str) -> NodeInfo | None:
        info = self._infos.get(name)
        return info if info is not None and info.node is not None else None

    # -- pods --
    def set_pod(self, pod: dict[str, Any]) -> None:
        """An assigned pod was observed (add or update); terminal pods free their resources."""
        uid = pod["metadata"]["uid"]
        node_name = node_of(pod)
        if not node_name or is_pod_terminal(pod):
            self.remove_pod(uid)
            return
        self._assumed.discard(uid)   # the binding is confirmed
        current = self._pod_node.get(uid)
        if current == node_name:
            return
        if current is not None:
            self.remove_pod(uid)
        self._place(uid, node_name, pod_requests(pod))

    def remove_pod(self, uid: str) -> None:
        self._assumed.discard(uid)
        node_name = self._pod_node.pop(uid, None)
        if node_name is None:
            return
        info = self._infos.get(node_name)
        if info is None:
            return
        info.remove_pod(uid)
        if info.node is None and not info.pods:
            del self._infos[node_name]

    def assume_pod(self, pod: dict[str, Any], node_name: str) -> None:
        uid = pod["metadata"]["uid"]
        self._assumed.add(uid)
        self._place(uid, node_name, pod_requests(pod))

    def set_aside(self, uids: Iterable[str]) -> Callable[[], None]:
        """Take these pods' usage off their nodes for a simulation (preemption); the returned
        closure puts it back.  The pods stay known, so nothing else notices."""
        taken = []
        for uid in uids:
            info = self._infos.get(self._pod_node.get(uid, ""))
            if info is not None and uid in info.pods:
                taken.append((info, uid, info.pods[uid]))
                info.remove_pod(uid)

        def restore() -> None:
            for info, uid, requests in reversed(taken):
                info.add_pod(uid, requests)
        return restore

    def node_of(self, uid: str) -> str:
        """The node a placed (bound or assumed) pod counts against, or ''."""
        return self._pod_node.get(uid, "")

    def is_assumed(self, uid: str) -> bool:
        """Whether the pod is assumed (binding in flight), not yet seen bound."""
        return uid in self._assumed

    def forget_pod(self, uid: str) -> None:
        """Undo :meth:`assume_pod` after a failed binding (no-op once the binding was observed)."""
        if uid in self._assumed:
            self.remove_pod(uid)

    def _place(self, uid: str, node_name: str, requests: dict[str, int]) -> None:
        info = self._infos.get(node_name)
        if info is None:
            info = self._infos[node_name] = NodeInfo(node_name, journal=self.changes)
        info.add_pod(uid, requests)
        self._pod_node[uid] = node_name
