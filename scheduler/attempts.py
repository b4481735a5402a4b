"""Whole failed attempts, remembered per pod shape (upstream's equivalence-class idea, carried
from one node to the whole cycle).

When the cluster is full, every freed device wakes every pod rejected for devices (as
upstream's DRA queueing hint does), and each of them is filtered again on every node: at 5,000
nodes ~2-5 ms a pod, for thousands of pods, most of which still fit nowhere.  A pod's verdict on
a node depends only on what its signature and claim shape say of the pod (equal for pods of one
workload), on the node (its object and usage: :class:`~fakeapi.scheduler.snapshot.NodeCache`'s
journal), on the device index (one generation) and on the allocations in the pools the node
sees (:class:`~fakeapi.scheduler.dra.state.AllocatedState`'s journal).  So an attempt that fit
nowhere is remembered with the stamps of those journals, and the next attempt of that shape
re-filters only the nodes changed since: if none of them fits now, no other node can, and the
remembered statuses (with the changed nodes' new ones) are the answer a full evaluation would
give.  As soon as one changed node fits, the scheduler evaluates every node as before, so
placements are exactly those of a full evaluation.

Re-filtering stops at the first node that fits: the scheduler then evaluates the candidates in
score order, filtering only those whose rejection is not known.  Either way the attempt is
brought up to date: the node that fit and those not filtered after it have no current rejection,
so they stay *unsettled*, filtered again next time with the nodes changed since.  (Re-filtering
every changed node, and stamping only attempts that still fit nowhere, made each attempt of a
full cluster that freed devices here and there re-filter every node changed since it filled up:
~800 nodes' allocations per attempt at 5,000 nodes.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from fakeapi.scheduler.dra.index import DeviceIndex
from fakeapi.scheduler.dra.state import AllocatedState
from fakeapi.scheduler.framework.interface import NodeStatuses
from fakeapi.scheduler.snapshot import NodeCache, NodeInfo


@dataclass
class FailedAttempt:
    """An attempt that fit on no node, and the state it was found in."""

    nodes: list[NodeInfo]            # the node list it covered (a changed node set makes a new one)
    index_generation: int
    node_stamp: int
    pool_stamp: int
    statuses: NodeStatuses           # every node's rejection, but an unsettled node's may be stale
    unsettled: frozenset[str] = frozenset()   # nodes whose rejection is not current


class FailedAttempts:
    """The last failed attempt per key (signature, deferred filtering, claim shape), for the
    ``size`` keys used last."""

    def __init__(self, nodes: NodeCache, index: DeviceIndex, allocated: AllocatedState, size: int = 16) -> None:
        self._nodes = nodes
        self._index = index
        self._allocated = allocated
        self._size = size
        self._attempts: OrderedDict[Hashable, FailedAttempt] = OrderedDict()

    def remember(self, key: Hashable, nodes: list[NodeInfo], statuses: NodeStatuses) -> None:
        """An attempt of ``key`` over ``nodes`` fit nowhere, with these statuses, just now."""
        self._attempts[key] = FailedAttempt(nodes, self._index.generation, self._nodes.changes.stamp,
                                            self._allocated.changes.stamp, statuses)
        self._attempts.move_to_end(key)
        if len(self._attempts) > self._size:
            self._attempts.popitem(last=False)

    def changed_since(self, key: Hashable, nodes: list[NodeInfo], pools: bool
                      ) -> tuple[FailedAttempt, list[NodeInfo]] | None:
        """The remembered attempt of ``key`` and the nodes of ``nodes`` to filter again (in node
        order): those changed since, counting changes to their pools' allocations when ``pools``,
        and the unsettled ones; None when there is none, or too much changed for re-filtering a
        few nodes to pay."""
        attempt = self._attempts.get(key)
        if attempt is None or attempt.nodes is not nodes or attempt.index_generation != self._index.generation:
            return None
        limit = max(len(nodes) // 4, 1)
        names = self._nodes.changes.since(attempt.node_stamp, limit)
        if names is None:
            return None
        changed = attempt.unsettled.union(names)
        if pools:
            changed_pools = self._allocated.changes.since(attempt.pool_stamp, limit)
            if changed_pools is None:
                return None
            for pool in changed_pools:
                seen_by = self._index.nodes_of_pool(pool)
                if seen_by is None:
                    return None
                changed |= seen_by
        if len(changed) > limit:
            return None
        self._attempts.move_to_end(key)
        return attempt, [info for name in sorted(changed) if (info := self._nodes.get(name)) is not None]

    def refresh(self, attempt: FailedAttempt) -> None:
        """``attempt`` was brought up to date (each node :meth:`changed_since` gave has its
        rejection in the statuses, or is in ``unsettled``): stamp it now."""
        attempt.node_stamp = self._nodes.changes.stamp
        attempt.pool_stamp = self._allocated.changes.stamp
