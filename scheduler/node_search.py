"""Host selection for one pod: upstream's ``findNodesThatFitPod``, ``prioritizeNodes`` and
``selectHost``, with what makes them cheap for pods of one shape.

- Filter runs from a rotating start until enough nodes fit (``percentageOfNodesToScore``); the
  best-scoring feasible node wins, ties at random.
- A deferred (costly, score-less) Filter plugin runs on the candidates in score order only.
- The first pass and the scores of a signed pod come from the :class:`FitMemo` where a node has
  not changed; a shape's attempt that fit nowhere is remembered
  (:class:`~fakeapi.scheduler.attempts.FailedAttempts`), and its next attempt filters only the
  nodes changed since.
- Once a signature's memo covers every node of a large cluster, its windows come from an index of
  the nodes that pass (:class:`FitIndex`), kept current from the node cache's change journal.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
from array import array
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from fakeapi.scheduler.attempts import FailedAttempts
from fakeapi.scheduler.dra.index import DeviceIndex
from fakeapi.scheduler.dra.state import AllocatedState
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code, NodeStatuses, Status
from fakeapi.scheduler.framework.runtime import Framework
from fakeapi.scheduler.snapshot import FitMemo, MemoTable, NodeCache, NodeInfo

# percentageOfNodesToScore (upstream adaptive default and floor).
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_PERCENTAGE = 5
BASE_PERCENTAGE = 50
# From how many nodes a signature's windows come from a FitIndex (below, a scan costs as little),
# and how many changed nodes an index catches up on before it is built afresh.
INDEX_FROM = 256
INDEX_CATCH_UP = 64
_SCORE = itemgetter(2)   # a memo entry's score
UNSCORED = -(1 << 63)    # a FitIndex's score of a node not scored yet (no score is that low)


def num_feasible_nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes to look for before scoring (upstream ``numFeasibleNodesToFind``)."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    if percentage <= 0:   # adaptive: 50% minus 1% per 125 nodes, at least 5%
        percentage = max(BASE_PERCENTAGE - num_nodes // 125, MIN_FEASIBLE_PERCENTAGE)
    if percentage >= 100:
        return num_nodes
    return max(num_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


class FitIndex:
    """The nodes of one ``NodeCache.nodes()`` list whose first pass passed, by position, over one
    :class:`~fakeapi.scheduler.snapshot.MemoTable`: every node's entry, current as of ``stamp`` in
    the node cache's journal, and the scores of the passing ones side by side in one array.  A
    cycle's window (upstream's rotating search for percentageOfNodesToScore feasible nodes) is
    then a bisection and two slices: at 5,000 nodes, scanning the ~540 entries of each window was
    two thirds of a cycle, and with positions alone, reading the scores entry by entry was most of
    what remained (500 scattered objects touched per pod)."""

    __slots__ = ("entries", "fit", "nodes", "scores", "stamp")

    def __init__(self, nodes: list[NodeInfo], entries: list[list[Any]], stamp: int) -> None:
        self.nodes = nodes
        self.entries = entries
        self.stamp = stamp
        self.fit = [i for i, entry in enumerate(entries) if entry[1].code == Code.SUCCESS]
        self.scores = array("q", (_score_of(entries[i]) for i in self.fit))

    def update(self, i: int, entry: list[Any]) -> None:
        """Node ``i``'s entry is now ``entry``."""
        passed = self.entries[i][1].code == Code.SUCCESS
        passes = entry[1].code == Code.SUCCESS
        self.entries[i] = entry
        if passed or passes:
            at = bisect.bisect_left(self.fit, i)
            if passed and passes:
                self.scores[at] = _score_of(entry)
            elif passed:
                del self.fit[at]
                del self.scores[at]
            else:
                self.fit.insert(at, i)
                self.scores.insert(at, _score_of(entry))

    def window(self, start: int, wanted: int) -> Window:
        """The first ``wanted`` nodes that pass from ``start`` on, wrapping around."""
        fit, total = self.fit, len(self.nodes)
        at = bisect.bisect_left(fit, start)
        first = min(wanted, len(fit) - at)
        wrapped = min(at, wanted - first)
        if first + wrapped < wanted:
            visited = total
        else:
            visited = ((fit[at + first - 1] if not wrapped else fit[wrapped - 1]) - start) % total + 1
        return Window(self, at, first, wrapped, visited)

    def rejections(self, start: int, visited: int) -> NodeStatuses:
        """The statuses of the nodes that did not pass among the ``visited`` from ``start``, in
        the order a scan visits them."""
        statuses = NodeStatuses()
        total = len(self.nodes)
        for offset in range(visited):
            i = (start + offset) % total
            status = self.entries[i][1]
            if status.code != Code.SUCCESS:
                statuses[self.nodes[i].name] = status
        return statuses


class Window:
    """A cycle's candidates from a :class:`FitIndex`: its ``first`` passing nodes from ``at`` on,
    then its ``wrapped`` first ones; ``visited``: how many nodes a scan would have visited."""

    __slots__ = ("at", "count", "first", "index", "visited")

    def __init__(self, index: FitIndex, at: int, first: int, wrapped: int, visited: int) -> None:
        self.index, self.at, self.first, self.visited = index, at, first, visited
        self.count = first + wrapped

    def _slot(self, k: int) -> int:
        return self.at + k if k < self.first else k - self.first

    def node(self, k: int) -> NodeInfo:
        """The ``k``-th candidate."""
        index = self.index
        return index.nodes[index.fit[self._slot(k)]]

    def scores(self, fw: Framework, state: CycleState, pod: dict[str, Any]) -> array[int]:
        """The candidates' scores, those not known yet computed and kept in the index and memo."""
        index = self.index
        scores = index.scores[self.at:self.at + self.first] + index.scores[:self.count - self.first]
        if UNSCORED in scores:
            todo = list(_where(scores, UNSCORED))
            for k, score in zip(todo, fw.run_score(state, pod, [self.node(k) for k in todo]), strict=True):
                slot = self._slot(k)
                index.scores[slot] = scores[k] = score
                index.entries[index.fit[slot]][2] = score
        return scores


def _score_of(entry: list[Any]) -> int:
    return UNSCORED if entry[2] is None else entry[2]


def _where(values: Sequence[int], value: int) -> Iterator[int]:
    """The positions of ``value`` in ``values``, in order (the comparisons run in C)."""
    return itertools.compress(range(len(values)), map(value.__eq__, values))


def _nth(values: Sequence[int], value: int, n: int) -> int:
    """Where ``value`` occurs in ``values`` for the ``n``-th time (from 0)."""
    return next(itertools.islice(_where(values, value), n, None))


class NodeSearch:
    """Finds the node for a pod; keeps the rotating start and what makes the next search cheap."""

    def __init__(self, nodes: NodeCache, index: DeviceIndex, allocated: AllocatedState,
                 claims_shape: Callable[[CycleState], bytes | None], percentage: int = 0,
                 index_from: int = INDEX_FROM) -> None:
        """``claims_shape`` is DynamicResources' ``attempt_key`` (what its Filter reads of a cycle's
        pod); from ``index_from`` nodes on, windows come from a :class:`FitIndex`."""
        self._percentage = percentage
        self._claims_shape = claims_shape
        self._fit_memo = FitMemo()
        self._nodes = nodes
        self._journal = nodes.changes
        self._index_from = index_from
        self.failed_attempts = FailedAttempts(nodes, index, allocated)
        self.next_start = 0

    def find(self, fw: Framework, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo]
             ) -> tuple[str | None, NodeStatuses, Status | None]:
        """(best feasible node, rejections per node, error) — upstream ``findNodesThatFitPod`` + scoring.

        Filter runs from a rotating start until enough nodes fit (percentageOfNodesToScore); the
        best-scoring one wins.  Deferred filters (see ``Framework.deferred_active``) run only on
        candidates that passed the others, best score first, stopping at the first that passes;
        only when all of them fail are the remaining nodes filtered in full.  The first pass and
        the scores of a signed pod come from the :class:`FitMemo` where a node has not changed,
        and its window from the memo's :class:`FitIndex` once the memo covers every node;
        when its last attempt fit nowhere, only the nodes changed since are filtered first
        (:class:`~fakeapi.scheduler.attempts.FailedAttempts`): if none of them fits, that is the
        answer; else the evaluation below takes the settled nodes' rejections from that attempt
        instead of filtering them again.  An attempt that fits nowhere processed every node, so
        the start does not move.  The rejections are complete when no node is found.
        """
        total = len(nodes)
        wanted = num_feasible_nodes_to_find(total, self._percentage)
        deferred = fw.deferred_active(state)
        first_pass = fw.run_eager_filter if deferred else fw.run_filter
        signature = fw.sign_pod(state, pod)
        memo = None if signature is None else self._fit_memo.table((signature, deferred), total)
        attempt_key = None
        if signature is not None:
            claims_shape = self._claims_shape(state)
            attempt_key = None if claims_shape is None else (signature, deferred, claims_shape)
        known, unsettled = None, frozenset[str]()
        if attempt_key is not None:
            known, unsettled = self._recheck_failed(fw, attempt_key, state, pod, nodes, memo, first_pass, deferred)
            if known is not None and not unsettled:
                return None, known, None
        start = self.next_start % total
        # (An index is kept over the node cache's own list, whose positions the cache knows.)
        index = (None if memo is None or total < self._index_from or nodes is not self._nodes.nodes()
                 else self._index(state, pod, nodes, wanted, memo, first_pass))
        statuses: NodeStatuses | None = None   # from the index, made only when no node is found
        # The candidates: how many, the k-th, and their scores when asked (one at most: alone, it wins).
        scores: Callable[[], Sequence[int]]
        if index is not None:
            window = index.window(start, wanted)
            count, pick, visited = window.count, window.node, window.visited
            scores = functools.partial(window.scores, fw, state, pod)
        else:
            scanned = self._scan(state, pod, nodes, start, wanted, memo, first_pass)
            if isinstance(scanned, Status):
                return None, NodeStatuses(), scanned
            candidates, entries, statuses, visited = scanned
            count, pick = len(candidates), candidates.__getitem__
            scores = functools.partial(self._scores, fw, state, pod, candidates, entries)
        self.next_start = (start + visited) % total
        if not deferred:
            if count:
                return self._best(count, scores, pick), statuses or NodeStatuses(), None
            if statuses is None:
                assert index is not None
                statuses = index.rejections(start, visited)
            if attempt_key is not None:
                self.failed_attempts.remember(attempt_key, nodes, statuses)
            return None, statuses, None
        failed: list[tuple[str, Status]] = []
        for info in self._by_score(count, scores, pick):
            if known is None or info.name in unsettled:
                status = fw.run_deferred_filter(state, pod, info)
            else:
                status = known[info.name]
            if status.code in (Code.SUCCESS, Code.ERROR):
                # Found (or failed): the window's rejections as the scan collected them, if it did.
                statuses = NodeStatuses() if statuses is None else statuses
                statuses.update(failed)
                return (info.name, statuses, None) if status.code == Code.SUCCESS else (None, statuses, status)
            failed.append((info.name, status))
        if statuses is None:
            assert index is not None
            statuses = index.rejections(start, visited)
        statuses.update(failed)
        feasible: list[NodeInfo] = []
        for i in range(visited, total):
            info = nodes[(start + i) % total]
            status = fw.run_filter(state, pod, info) if known is None or info.name in unsettled else known[info.name]
            if status.code == Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= wanted:
                    break
            elif status.code == Code.ERROR:
                return None, statuses, status
            else:
                statuses[info.name] = status
        if feasible:
            return (self._best(len(feasible), functools.partial(fw.run_score, state, pod, feasible),
                               feasible.__getitem__), statuses, None)
        self.next_start = start
        if attempt_key is not None:
            self.failed_attempts.remember(attempt_key, nodes, statuses)
        return None, statuses, None

    def _scan(self, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo], start: int, wanted: int,
              memo: MemoTable | None, first_pass: Callable[[CycleState, dict[str, Any], NodeInfo], Status]
              ) -> tuple[list[NodeInfo], list[list[Any]] | None, NodeStatuses, int] | Status:
        """The window without an index: (candidates, their memo entries, rejections, nodes
        visited), from ``start`` on until ``wanted`` pass; a first pass's error instead."""
        candidates: list[NodeInfo] = []
        entries: list[list[Any]] | None = None if memo is None else []   # the candidates' memo entries
        statuses = NodeStatuses()
        visited = 0
        for info in itertools.chain(nodes[start:], nodes[:start]):
            if len(candidates) >= wanted:
                break
            visited += 1
            entry = None if memo is None else memo.get(info.name)   # as _first_pass, inlined: the hot loop
            if entry is not None and entry[0] == info.generation:
                status = entry[1]
            else:
                status, entry = self._first_pass(state, pod, info, memo, first_pass)
            if status.code == Code.SUCCESS:
                candidates.append(info)
                if entries is not None:
                    entries.append(entry)   # type: ignore[arg-type]
            elif status.code == Code.ERROR:
                return status
            else:
                statuses[info.name] = status
        return candidates, entries, statuses, visited

    def _index(self, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo], wanted: int, memo: MemoTable,
               first_pass: Callable[[CycleState, dict[str, Any], NodeInfo], Status]) -> FitIndex | None:
        """``memo``'s :class:`FitIndex` over ``nodes``, brought up to date (the nodes changed since
        filtered again, as a scan would); built once the memo has an entry for every node, at most
        a window's worth (``wanted``) of them stale.  None while it cannot be (a filter erred,
        too much changed): scan instead."""
        index = memo.index
        if index is not None and index.nodes is nodes:
            changed = self._journal.since(index.stamp, INDEX_CATCH_UP)
            if changed is not None:
                stamp, positions = self._journal.stamp, self._nodes.positions()
                for name in changed:
                    i = positions.get(name)
                    if i is None:
                        continue   # a node out of the list (one that lost its object keeps its usage)
                    status, entry = self._first_pass(state, pod, nodes[i], memo, first_pass)
                    if status.code == Code.ERROR:
                        memo.index = None
                        return None
                    index.update(i, entry)   # type: ignore[arg-type]
                index.stamp = stamp
                return index
        memo.index = None
        if len(memo) < len(nodes):
            return None   # the scans have not reached every node yet
        stamp, stale_limit = self._journal.stamp, max(INDEX_CATCH_UP, wanted)
        entries: list[list[Any]] = []
        for info in nodes:
            entry = memo.get(info.name)
            if entry is None or entry[0] != info.generation:
                stale_limit -= 1
                if stale_limit < 0:
                    return None   # as much to filter again as a scan's window: let the scans do it
                status, entry = self._first_pass(state, pod, info, memo, first_pass)
                if status.code == Code.ERROR:
                    return None
            entries.append(entry)   # type: ignore[arg-type]
        memo.index = FitIndex(nodes, entries, stamp)
        return memo.index

    @staticmethod
    def _first_pass(state: CycleState, pod: dict[str, Any], info: NodeInfo, memo: dict[str, list[Any]] | None,
                    first_pass: Callable[[CycleState, dict[str, Any], NodeInfo], Status]
                    ) -> tuple[Status, list[Any] | None]:
        """The first pass's status on ``info`` and its memo entry (reused while the node is unchanged)."""
        if memo is None:
            return first_pass(state, pod, info), None
        entry = memo.get(info.name)
        if entry is not None and entry[0] == info.generation:
            return entry[1], entry
        status = first_pass(state, pod, info)
        entry = [info.generation, status, None]
        if status.code != Code.ERROR:
            memo[info.name] = entry
        return status, entry

    def _recheck_failed(self, fw: Framework, key: Any, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo],
                        memo: dict[str, list[Any]] | None,
                        first_pass: Callable[[CycleState, dict[str, Any], NodeInfo], Status],
                        deferred: bool) -> tuple[NodeStatuses | None, frozenset[str]]:
        """When the last attempt of ``key`` fit nowhere: every node's rejection, and the nodes
        whose rejection is not current.  The nodes changed since (and those left unsettled last
        time) are filtered again until one fits: then it and those after it are unsettled, for
        the evaluation to filter in score order (a full cluster that freed devices on hundreds of
        nodes otherwise ran the allocator on each of them for every pod); when none fits, none
        is.  (None, ()) when a full evaluation must decide alone (nothing remembered, too much
        changed, a filter erred)."""
        found = self.failed_attempts.changed_since(key, nodes, deferred)
        if found is None:
            return None, frozenset()
        attempt, changed = found
        unsettled: frozenset[str] = frozenset()
        for k, info in enumerate(changed):
            status, _ = self._first_pass(state, pod, info, memo, first_pass)
            if deferred and status.code == Code.SUCCESS:
                status = fw.run_deferred_filter(state, pod, info)
            if status.code == Code.ERROR:
                return None, frozenset()
            if status.code == Code.SUCCESS:
                unsettled = frozenset(other.name for other in changed[k:])
                break
            attempt.statuses.put(info.name, status)
        attempt.unsettled = unsettled
        self.failed_attempts.refresh(attempt)
        return attempt.statuses, unsettled

    @staticmethod
    def _by_score(count: int, scores: Callable[[], Sequence[int]], pick: Callable[[int], NodeInfo]
                  ) -> Iterator[NodeInfo]:
        """The ``count`` candidates (``pick(k)``: the k-th) best first; ties in random order, as
        upstream's reservoir sampling would pick them.  Lazily (the caller usually stops at the
        first node): one score at a time, and within a score one random pick at a time."""
        if count <= 1:
            yield from map(pick, range(count))
            return
        values = scores()
        for score in sorted(set(values), reverse=True):
            tied = list(_where(values, score))
            while tied:
                i = random.randrange(len(tied))
                tied[i], tied[-1] = tied[-1], tied[i]
                yield pick(tied.pop())

    @staticmethod
    def _best(count: int, scores: Callable[[], Sequence[int]], pick: Callable[[int], NodeInfo]) -> str:
        """The best-scoring of the ``count`` candidates, ties at random."""
        if count == 1:
            return pick(0).name
        values = scores()
        best = max(values)
        return pick(_nth(values, best, random.randrange(values.count(best)))).name

    @staticmethod
    def _scores(fw: Framework, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo],
                entries: list[list[Any]] | None) -> list[int]:
        """``Framework.run_score``, taking the scores the nodes' memo ``entries`` (current for
        these nodes, one per node) hold already and keeping the others there."""
        if entries is None:
            return fw.run_score(state, pod, nodes)
        scores = list(map(_SCORE, entries))
        if None in scores:
            todo = [i for i, score in enumerate(scores) if score is None]
            for i, score in zip(todo, fw.run_score(state, pod, [nodes[i] for i in todo]), strict=True):
                entries[i][2] = scores[i] = score
        return scores
