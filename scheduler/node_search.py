"""Host selection for one pod: upstream's ``findNodesThatFitPod``, ``prioritizeNodes`` and
``selectHost``, with what makes them cheap for pods of one shape.

- Filter runs from a rotating start until enough nodes fit (``percentageOfNodesToScore``); the
  best-scoring feasible node wins, ties at random.
- A deferred (costly, score-less) Filter plugin runs on the candidates in score order only.
- The first pass and the scores of a signed pod come from the :class:`FitMemo` where a node has
  not changed; a shape's attempt that fit nowhere is remembered
  (:class:`~fakeapi.scheduler.attempts.FailedAttempts`), and its next attempt filters only the
  nodes changed since.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

from fakeapi.scheduler.attempts import FailedAttempts
from fakeapi.scheduler.dra.index import DeviceIndex
from fakeapi.scheduler.dra.state import AllocatedState
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code, NodeStatuses, Status
from fakeapi.scheduler.framework.runtime import Framework
from fakeapi.scheduler.snapshot import FitMemo, NodeCache, NodeInfo

# percentageOfNodesToScore (upstream adaptive default and floor).
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_PERCENTAGE = 5
BASE_PERCENTAGE = 50


def num_feasible_nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes to look for before scoring (upstream ``numFeasibleNodesToFind``)."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    if percentage <= 0:   # adaptive: 50% minus 1% per 125 nodes, at least 5%
        percentage = max(BASE_PERCENTAGE - num_nodes // 125, MIN_FEASIBLE_PERCENTAGE)
    if percentage >= 100:
        return num_nodes
    return max(num_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


class NodeSearch:
    """Finds the node for a pod; keeps the rotating start and what makes the next search cheap."""

    def __init__(self, nodes: NodeCache, index: DeviceIndex, allocated: AllocatedState,
                 claims_shape: Callable[[CycleState], bytes | None], percentage: int = 0) -> None:
        """``claims_shape`` is DynamicResources' ``attempt_key`` (what its Filter reads of a cycle's pod)."""
        self._percentage = percentage
        self._claims_shape = claims_shape
        self._fit_memo = FitMemo()
        self.failed_attempts = FailedAttempts(nodes, index, allocated)
        self.next_start = 0

    def find(self, fw: Framework, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo]
             ) -> tuple[str | None, NodeStatuses, Status | None]:
        """(best feasible node, rejections per node, error) — upstream ``findNodesThatFitPod`` + scoring.

        Filter runs from a rotating start until enough nodes fit (percentageOfNodesToScore); the
        best-scoring one wins.  Deferred filters (see ``Framework.deferred_active``) run only on
        candidates that passed the others, best score first, stopping at the first that passes;
        only when all of them fail are the remaining nodes filtered in full.  The first pass and
        the scores of a signed pod come from the :class:`FitMemo` where a node has not changed;
        when its last attempt fit nowhere, only the nodes changed since are filtered first
        (:class:`~fakeapi.scheduler.attempts.FailedAttempts`): if none of them fits, that is the
        answer; else the evaluation below takes the other nodes' rejections from that attempt
        instead of filtering them again.  An attempt that fits nowhere processed every node, so
        the start does not move.
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
        known, fitting = None, frozenset[str]()
        if attempt_key is not None:
            known, fitting = self._recheck_failed(fw, attempt_key, state, pod, nodes, memo, first_pass, deferred)
            if known is not None and not fitting:
                return None, known, None
        start = self.next_start % total
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
                return None, statuses, status
            else:
                statuses[info.name] = status
        self.next_start = (start + visited) % total
        if not deferred:
            if candidates:
                return self._best(fw, state, pod, candidates, entries), statuses, None
            if attempt_key is not None:
                self.failed_attempts.remember(attempt_key, nodes, statuses)
            return None, statuses, None
        for info in self._by_score(fw, state, pod, candidates, entries):
            if known is None or info.name in fitting:
                status = fw.run_deferred_filter(state, pod, info)
            else:
                status = known[info.name]
            if status.code == Code.SUCCESS:
                return info.name, statuses, None
            if status.code == Code.ERROR:
                return None, statuses, status
            statuses[info.name] = status
        feasible: list[NodeInfo] = []
        for i in range(visited, total):
            info = nodes[(start + i) % total]
            status = fw.run_filter(state, pod, info) if known is None or info.name in fitting else known[info.name]
            if status.code == Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= wanted:
                    break
            elif status.code == Code.ERROR:
                return None, statuses, status
            else:
                statuses[info.name] = status
        if feasible:
            return self._best(fw, state, pod, feasible), statuses, None
        self.next_start = start
        if attempt_key is not None:
            self.failed_attempts.remember(attempt_key, nodes, statuses)
        return None, statuses, None

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
        """When the last attempt of ``key`` fit nowhere: every node's rejection now, the nodes
        changed since filtered again, and those of them that fit now.  (None, ()) when a full
        evaluation must decide alone (nothing remembered, too much changed, a filter erred)."""
        found = self.failed_attempts.changed_since(key, nodes, deferred)
        if found is None:
            return None, frozenset()
        attempt, changed = found
        fitting = set()
        for info in changed:
            status, _ = self._first_pass(state, pod, info, memo, first_pass)
            if deferred and status.code == Code.SUCCESS:
                status = fw.run_deferred_filter(state, pod, info)
            if status.code == Code.ERROR:
                return None, frozenset()
            if status.code == Code.SUCCESS:
                fitting.add(info.name)
            else:
                attempt.statuses.put(info.name, status)
        if not fitting:
            self.failed_attempts.refresh(attempt)
        return attempt.statuses, frozenset(fitting)

    def _by_score(self, fw: Framework, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo],
                  entries: list[list[Any]] | None = None) -> Iterator[NodeInfo]:
        """Best first; ties in random order, as upstream's reservoir sampling would pick them.
        Lazily (the caller usually stops at the first node): one score at a time, and within a
        score one random pick at a time."""
        if len(nodes) <= 1:
            yield from nodes
            return
        scores = self._scores(fw, state, pod, nodes, entries)
        for score in sorted(set(scores), reverse=True):
            tied = [info for info, s in zip(nodes, scores, strict=True) if s == score]
            while tied:
                i = random.randrange(len(tied))
                tied[i], tied[-1] = tied[-1], tied[i]
                yield tied.pop()

    def _best(self, fw: Framework, state: CycleState, pod: dict[str, Any], feasible: list[NodeInfo],
              entries: list[list[Any]] | None = None) -> str:
        if len(feasible) == 1:
            return feasible[0].name
        scores = self._scores(fw, state, pod, feasible, entries)
        best = max(scores)
        return random.choice([n for n, s in zip(feasible, scores, strict=True) if s == best]).name

    @staticmethod
    def _scores(fw: Framework, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo],
                entries: list[list[Any]] | None) -> list[int]:
        """``Framework.run_score``, taking the scores the nodes' memo ``entries`` (current for
        these nodes, one per node) hold already and keeping the others there."""
        if entries is None:
            return fw.run_score(state, pod, nodes)
        todo = [i for i, entry in enumerate(entries) if entry[2] is None]
        if todo:
            for i, score in zip(todo, fw.run_score(state, pod, [nodes[i] for i in todo]), strict=True):
                entries[i][2] = score
        return [entry[2] for entry in entries]
