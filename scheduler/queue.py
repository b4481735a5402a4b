"""The scheduling queue: active heap, backoff heap and unschedulable pool (``scheduling_queue.go``).

- *active*: pods ready for a scheduling attempt, highest ``spec.priority`` first, then FIFO.
- *backoff*: pods that failed recently; they return to *active* when their backoff expires
  (``initial * 2**(attempts-1)``, capped; upstream 1 s / 10 s, configurable here).
- *unschedulable*: pods rejected by plugins, or gated by a PreEnqueue plugin.  They leave the
  pool only when a cluster event registered by a rejecting plugin arrives *and* that plugin's
  queueing hint says the event may help — requeue on events, not by polling — or, as a safety
  net, after ``max_unschedulable`` seconds.

Events that arrive while a pod is in flight (popped, its attempt not finished) are remembered
and replayed through the hints when the pod comes back rejected, so a device freed during a
binding cycle is never missed.  The clock is injected so the backoff logic tests without sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
)


@dataclass(eq=False)
class QueuedPodInfo:
    """A pod and its scheduling history while it lives in the queue."""

    pod: dict[str, Any]
    timestamp: float                       # last time it entered the queue (orders FIFO, starts backoff)
    attempts: int = 0
    rejected_by: frozenset[str] = frozenset()   # plugins whose events may move it
    gated_by: str = ""                      # PreEnqueue plugin holding it back
    pop_seq: int = 0

    @property
    def uid(self) -> str:
        return self.pod["metadata"]["uid"]

    @property
    def priority(self) -> int:
        return int((self.pod.get("spec") or {}).get("priority") or 0)


class SchedulingQueue:
    """Priority queue of pending pods with backoff and event-driven requeue."""

    def __init__(self, pre_enqueue: Callable[[dict[str, Any]], Status], *,
                 clock: Callable[[], float] = time.monotonic,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_unschedulable: float = 300.0) -> None:
        self._pre_enqueue = pre_enqueue
        self._clock = clock
        # Per-pod attempts live in QueuedPodInfo, so only the delay arithmetic is used.
        self._backoff_delay: Backoff[str] = Backoff(initial_backoff, max_backoff)
        self.max_unschedulable = max_unschedulable
        self._seq = itertools.count()
        self._active: list[tuple[int, float, int, str]] = []       # (-priority, timestamp, seq, uid)
        self._active_entry: dict[str, int] = {}                    # uid -> seq of its live heap entry
        # (expiry, seq, uid); pods rejected by plugins and pods that hit an error back off apart.
        self._backoff: list[tuple[float, int, str]] = []
        self._error_backoff: list[tuple[float, int, str]] = []
        self._backoff_entry: dict[str, int] = {}
        # Both pools are in insertion (= timestamp) order, so the oldest entry comes first.
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated: dict[str, QueuedPodInfo] = {}
        self._infos: dict[str, QueuedPodInfo] = {}                 # every queued or in-flight pod
        self._in_flight: dict[str, int] = {}                       # uid -> pop seq (pop order)
        self._in_flight_events: deque[tuple[int, ClusterEvent, Any, Any]] = deque()
        self._registered: dict[str, list[ClusterEventWithHint]] = {}
        self._wakeup = asyncio.Event()
        self._closed = False

    def register_events(self, events: Iterable[tuple[str, ClusterEventWithHint]]) -> None:
        for plugin, event in events:
            self._registered.setdefault(plugin, []).append(event)

    # -- pod lifecycle --------------------------------------------------------------------------
    def add(self, pod: dict[str, Any]) -> None:
        """A new pending pod was observed."""
        uid = pod["metadata"]["uid"]
        if uid in self._infos:
            self.update(pod)
            return
        info = QueuedPodInfo(pod, self._clock())
        self._infos[uid] = info
        self._activate_or_gate(info)

    def update(self, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        info = self._infos.get(uid)
        if info is None:
            self.add(pod)
            return
        old, info.pod = info.pod, pod
        if uid in self._gated:
            del self._gated[uid]
            self._activate_or_gate(info)
        elif uid in self._unschedulable and self._hints_say_queue(
                info, ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE), old, pod):
            self._move(info)

    def delete(self, uid: str) -> None:
        self._infos.pop(uid, None)
        self._active_entry.pop(uid, None)
        self._backoff_entry.pop(uid, None)
        self._unschedulable.pop(uid, None)
        self._gated.pop(uid, None)

    def __contains__(self, uid: str) -> bool:
        return uid in self._infos

    # -- popping -------------------------------------------------------------------------------
    def pop_nowait(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None.

        Expired backoffs move to active first.  When nothing is active, a pod still backing off
        after a *rejection* is taken early (upstream SchedulerPopFromBackoffQ, on by default
        since 1.33): an idle scheduler has no reason to wait.  Pods backing off after an error
        always wait their full backoff.
        """
        self.flush()
        uid = self._pop_live(self._active, self._active_entry, 2)
        if uid is None:
            uid = self._pop_live(self._backoff, self._backoff_entry, 1)
        if uid is None:
            return None
        info = self._infos[uid]
        info.attempts += 1
        info.pop_seq = next(self._seq)
        self._in_flight[uid] = info.pop_seq
        return info

    @staticmethod
    def _pop_live(heap: list[Any], entries: dict[str, int], seq_at: int) -> str | None:
        """Pop the first heap entry still current in ``entries`` (lazy deletion)."""
        while heap:
            entry = heapq.heappop(heap)
            uid = entry[-1]
            if entries.get(uid) == entry[seq_at]:
                del entries[uid]
                return uid
        return None

    async def pop(self) -> QueuedPodInfo:
        """Wait for the next pod; wakes up on adds, moves and backoff expiry."""
        while True:
            info = self.pop_nowait()
            if info is not None:
                return info
            if self._closed:
                raise asyncio.CancelledError
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), self._next_deadline())
            except TimeoutError:
                pass

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    def _next_deadline(self) -> float | None:
        deadlines = []
        for heap in (self._backoff, self._error_backoff):
            while heap and self._backoff_entry.get(heap[0][2]) != heap[0][1]:
                heapq.heappop(heap)
            if heap:
                deadlines.append(heap[0][0])
        if self._unschedulable:
            deadlines.append(next(iter(self._unschedulable.values())).timestamp + self.max_unschedulable)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - self._clock())

    def flush(self) -> None:
        """Move expired backoffs to active and long-unschedulable pods out of the pool."""
        now = self._clock()
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] <= now:
                _, seq, uid = heapq.heappop(heap)
                if self._backoff_entry.get(uid) == seq:
                    del self._backoff_entry[uid]
                    self._push_active(self._infos[uid])
        while self._unschedulable:
            oldest = next(iter(self._unschedulable.values()))
            if now - oldest.timestamp < self.max_unschedulable:
                break
            self._move(oldest)

    # -- after an attempt ----------------------------------------------------------------------
    def backoff_duration(self, attempts: int) -> float:
        """How long a pod backs off after ``attempts`` attempts (none before its first)."""
        return self._backoff_delay.delay(attempts - 1) if attempts > 0 else 0.0

    def add_unschedulable(self, info: QueuedPodInfo, rejected_by: Iterable[str] = ()) -> None:
        """Return a pod after a failed attempt.

        ``rejected_by`` names the plugins that rejected it; their events may move it back.  An
        empty set (an error, not a rejection) sends the pod to backoff directly.
        """
        uid = info.uid
        if uid not in self._infos:
            self.done(uid)
            return   # deleted meanwhile
        info.timestamp = self._clock()
        info.rejected_by = frozenset(rejected_by)
        if not info.rejected_by:
            self._push_backoff(info, self._error_backoff)
        elif any(self._hints_say_queue(info, event, old, new)
                 for seq, event, old, new in self._in_flight_events if seq > info.pop_seq):
            self._push_backoff(info)
        else:
            self._unschedulable[uid] = info
        self.done(uid)

    def done(self, uid: str) -> None:
        """The attempt (scheduling and binding) for ``uid`` is over."""
        if self._in_flight.pop(uid, None) is None:
            return
        oldest = next(iter(self._in_flight.values()), None)
        while self._in_flight_events and (oldest is None or self._in_flight_events[0][0] < oldest):
            self._in_flight_events.popleft()

    def activate(self, uids: Iterable[str]) -> None:
        """Move these pods from the unschedulable pool or backoff straight to active (upstream ``Activate``).

        A gang member waiting at Permit uses it so its peers get their attempt now instead of
        after a backoff or an event.  Gated and in-flight pods are left alone.
        """
        for uid in uids:
            info = self._unschedulable.pop(uid, None)
            if info is None and self._backoff_entry.pop(uid, None) is not None:
                info = self._infos[uid]
            if info is not None:
                self._push_active(info)

    def forget(self, uid: str) -> None:
        """The pod was bound: it leaves the queue for good."""
        self.done(uid)
        self.delete(uid)

    # -- events --------------------------------------------------------------------------------
    def on_event(self, event: ClusterEvent, old: Any = None, new: Any = None,
                 only: Iterable[str] | None = None) -> None:
        """A cluster change: move the parked pods it may help (queueing hints decide).

        ``only`` restricts the candidates to these pod UIDs when the caller knows, from an
        index, that no other pod can care (e.g. pods referencing a changed claim).
        """
        if self._in_flight:
            self._in_flight_events.append((next(self._seq), event, old, new))
        if only is None:
            gated, parked = list(self._gated.values()), list(self._unschedulable.values())
        else:
            uids = list(only)
            gated = [self._gated[u] for u in uids if u in self._gated]
            parked = [self._unschedulable[u] for u in uids if u in self._unschedulable]
        for info in gated:
            if self._plugin_interested(info.gated_by, info, event, old, new):
                del self._gated[info.uid]
                self._activate_or_gate(info)
        for info in parked:
            if self._hints_say_queue(info, event, old, new):
                self._move(info)

    def _hints_say_queue(self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> bool:
        return any(self._plugin_interested(p, info, event, old, new) for p in info.rejected_by)

    def _plugin_interested(self, plugin: str, info: QueuedPodInfo, event: ClusterEvent,
                           old: Any, new: Any) -> bool:
        for registered in self._registered.get(plugin, ()):
            if registered.event.matches(event):
                if registered.hint is None or registered.hint(info.pod, old, new) == QueueingHint.QUEUE:
                    return True
        return False

    # -- moving between sub-queues -------------------------------------------------------------
    def _activate_or_gate(self, info: QueuedPodInfo) -> None:
        status = self._pre_enqueue(info.pod)
        if status.is_success:
            info.gated_by = ""
            self._push_active(info)
        else:
            info.gated_by = status.plugin or "PreEnqueue"
            self._gated[info.uid] = info

    def _move(self, info: QueuedPodInfo) -> None:
        """Leave the unschedulable pool: to backoff while it lasts, else straight to active."""
        self._unschedulable.pop(info.uid, None)
        if self._clock() < info.timestamp + self.backoff_duration(info.attempts):
            self._push_backoff(info)
        else:
            self._push_active(info)

    def _push_active(self, info: QueuedPodInfo) -> None:
        seq = next(self._seq)
        self._active_entry[info.uid] = seq
        heapq.heappush(self._active, (-info.priority, info.timestamp, seq, info.uid))
        self._wakeup.set()

    def _push_backoff(self, info: QueuedPodInfo, heap: list[tuple[float, int, str]] | None = None) -> None:
        seq = next(self._seq)
        self._backoff_entry[info.uid] = seq
        expiry = info.timestamp + self.backoff_duration(info.attempts)
        heapq.heappush(self._backoff if heap is None else heap, (expiry, seq, info.uid))
        self._wakeup.set()

    def stats(self) -> dict[str, int]:
        """Sizes of the sub-queues (for tests and debugging)."""
        return {"active": len(self._active_entry), "backoff": len(self._backoff_entry),
                "unschedulable": len(self._unschedulable), "gated": len(self._gated),
                "in_flight": len(self._in_flight)}
