"""The scheduling queue (``scheduling_queue.go``): where pending pods and pod groups wait.

An entity (:mod:`.entities`) is in at most one sub-queue:

- *active* (a :class:`.KeyedHeap`): ready for an attempt, highest priority first (a group's is
  its members'), then FIFO.
- *backoff* (:class:`.BackoffQueue`): failed recently; back to *active* when the backoff
  expires (``initial * 2**(attempts-1)``, capped at ``max`` — for a group ``max * sqrt(size)``;
  upstream 1 s / 10 s).
- *gated* (a :class:`.WaitingPool`): a PreEnqueue check holds it back: a member's own (a claim
  not generated yet) or the group's (its PodGroup missing, fewer than ``minCount`` members
  observed).  One gated member holds back its whole group.
- *unschedulable* (a :class:`.WaitingPool`): rejected by plugins.  It leaves the pool only when
  a cluster event registered by a rejecting plugin arrives *and* that plugin's queueing hint
  (:mod:`.queueing_hints`) says the event may help one of its pods — requeue on events, not by
  polling — or, as a safety net, after ``max_unschedulable`` seconds.

Events that arrive while an entity is in flight are replayed when it comes back rejected
(:mod:`.in_flight`).  Time comes from the control plane's clock (``now`` and ``call_later``), so
backoffs run on a manual clock in tests.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Status,
)
from fakeapi.scheduler.queue.backoff_queue import BackoffQueue
from fakeapi.scheduler.queue.entities import Entity, QueuedGroupInfo, QueuedPodInfo, group_key
from fakeapi.scheduler.queue.in_flight import InFlight
from fakeapi.scheduler.queue.keyed_heap import KeyedHeap
from fakeapi.scheduler.queue.queueing_hints import QueueingHints
from fakeapi.scheduler.queue.waiting_pool import WaitingPool, gating_plugins, rejecting_plugins
from fakeapi.scheduler.rules.podgroups import PodGroupInstance


class QueueClock(Protocol):
    """What the queue needs of :class:`fakeapi.scheduler.clock.Clock`."""

    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any: ...


class SchedulingQueue:
    """Priority queue of pending pods and pod groups with backoff and event-driven requeue."""

    def __init__(self, pre_enqueue: Callable[[dict[str, Any]], Status], clock: QueueClock, *,
                 group_of: Callable[[dict[str, Any]], PodGroupInstance | None] = lambda pod: None,
                 group_gate: Callable[[QueuedGroupInfo], Status] = lambda group: SUCCESS,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_unschedulable: float = 300.0) -> None:
        """``group_of`` names a pod's group (None: scheduled alone); ``group_gate`` is the
        group-level PreEnqueue check (group exists, quorum observed)."""
        self._pre_enqueue = pre_enqueue
        self._group_of = group_of
        self._group_gate = group_gate
        self._clock = clock
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self.max_unschedulable = max_unschedulable
        self._active = KeyedHeap()                 # ranked (-priority, timestamp)
        self._backoff = BackoffQueue()
        # Both pools are in insertion (= timestamp) order, so the oldest entry comes first.
        self._unschedulable = WaitingPool(rejecting_plugins)
        self._gated = WaitingPool(gating_plugins)
        self._hints = QueueingHints()
        self._entities: dict[str, Entity] = {}     # every queued or in-flight entity
        self._infos: dict[str, QueuedPodInfo] = {}  # every queued or in-flight pod
        self._in_flight = InFlight()
        self._wakeup = asyncio.Event()
        self._closed = False

    def register_events(self, events: Iterable[tuple[str, ClusterEventWithHint]]) -> None:
        """Add the plugins' ``(plugin, event)`` registrations that decide requeues."""
        self._hints.register(events)

    # -- pod lifecycle --------------------------------------------------------------------------
    def add(self, pod: dict[str, Any]) -> None:
        """A new pending pod was observed."""
        uid = pod["metadata"]["uid"]
        if uid in self._infos:
            self.update(pod)
            return
        now = self._clock.now()
        info = QueuedPodInfo(pod, now, initial_timestamp=now)
        self._infos[uid] = info
        instance = self._group_of(pod)
        if instance is None:
            self._gate(info)
            self._entities[info.key] = info
            self._activate_or_gate(info)
            return
        group = self._join(info, instance)
        self._gate(info)
        key = group.key
        if group.in_flight or self._is_queued(key):
            return
        if key in self._unschedulable:
            self._move(group)   # a new member is what a parked group may wait for (upstream hint)
            return
        self._gated.pop(key, None)
        self._activate_or_gate(group)

    def update(self, pod: dict[str, Any]) -> None:
        """A queued pod changed: re-run its gate, or ask the hints whether the change may help."""
        uid = pod["metadata"]["uid"]
        info = self._infos.get(uid)
        if info is None:
            self.add(pod)
            return
        old, info.pod = info.pod, pod
        entity = self._entity_of(info)
        if entity is None or uid in self._in_flight:
            return
        if info.gated_by:
            self._gate(info)
        if entity.key in self._gated:
            del self._gated[entity.key]
            self._activate_or_gate(entity)
        elif entity.key in self._unschedulable and self._hints.any_say_queue(
                entity.rejected_by, [info], ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
                old, pod):
            self._move(entity)

    def delete(self, uid: str) -> None:
        """The pod is gone (or no longer pending)."""
        info = self._infos.pop(uid, None)
        if info is None:
            return
        group = info.group
        if group is None:
            self._drop(info.key)
            return
        group.leave(info)
        if not group.members and not group.pending and not group.in_flight:
            self._drop(group.key)

    def _drop(self, key: str) -> None:
        self._entities.pop(key, None)
        self._active.discard(key)
        self._backoff.discard(key)
        self._unschedulable.pop(key, None)
        self._gated.pop(key, None)

    def __contains__(self, uid: str) -> bool:
        return uid in self._infos

    def _entity_of(self, info: QueuedPodInfo) -> Entity | None:
        entity = info.group if info.group is not None else info
        return entity if self._entities.get(entity.key) is entity else None

    def _join(self, info: QueuedPodInfo, instance: PodGroupInstance) -> QueuedGroupInfo:
        """Put a member into its group entity, created if needed."""
        key = group_key(instance)
        group = self._entities.get(key)
        if not isinstance(group, QueuedGroupInfo):
            group = QueuedGroupInfo(instance, info.timestamp)
            self._entities[key] = group
        group.join(info)
        return group

    def _is_queued(self, key: str) -> bool:
        return key in self._active or key in self._backoff

    # -- popping -------------------------------------------------------------------------------
    def pop_nowait(self) -> Entity | None:
        """The next pod or pod group to schedule, or None.

        Expired backoffs move to active first.  When nothing is active, an entity still backing
        off after a *rejection* is taken early (upstream SchedulerPopFromBackoffQ, on by default
        since 1.33): an idle scheduler has no reason to wait.  Entities backing off after an
        error always wait their full backoff.
        """
        self.flush()
        key = self._active.pop()
        if key is None:
            key = self._backoff.pop_early()
        if key is None:
            return None
        entity = self._entities[key]
        if isinstance(entity, QueuedGroupInfo) and entity.gated():
            # A member that joined while the group was queued holds it back.
            self._gated.add(entity)
            return self.pop_nowait()
        entity.attempts += 1
        if isinstance(entity, QueuedGroupInfo):
            entity.in_flight = True
        self._in_flight.start(entity)
        return entity

    async def pop(self) -> Entity:
        """Wait for the next entity; wakes up on adds, moves and backoff expiry."""
        while True:
            entity = self.pop_nowait()
            if entity is not None:
                return entity
            if self._closed:
                raise asyncio.CancelledError
            self._wakeup.clear()
            deadline = self._next_deadline()
            timer = None if deadline is None else self._clock.call_later(deadline, self._wakeup.set)
            try:
                await self._wakeup.wait()
            finally:
                if timer is not None:
                    timer.cancel()

    def close(self) -> None:
        """Wake :meth:`pop` up for good: it raises CancelledError once nothing is ready."""
        self._closed = True
        self._wakeup.set()

    def _next_deadline(self) -> float | None:
        deadlines = []
        expiry = self._backoff.next_expiry()
        if expiry is not None:
            deadlines.append(expiry)
        if self._unschedulable:
            deadlines.append(next(iter(self._unschedulable.values())).timestamp + self.max_unschedulable)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - self._clock.now())

    def flush(self) -> None:
        """Move expired backoffs to active and long-unschedulable entities out of the pool."""
        now = self._clock.now()
        for key in self._backoff.pop_expired(now):
            self._push_active(self._entities[key])
        while self._unschedulable:
            oldest = next(iter(self._unschedulable.values()))
            if now - oldest.timestamp < self.max_unschedulable:
                break
            self._move(oldest)

    # -- after an attempt ----------------------------------------------------------------------
    def backoff_duration(self, attempts: int, size: int = 1) -> float:
        """How long an entity of ``size`` pods backs off after ``attempts`` attempts.

        A group's cap grows with the square root of its size (upstream's entity backoff).
        """
        if attempts <= 0:
            return 0.0
        cap = self._max_backoff * (math.sqrt(size) if size > 1 else 1.0)
        return Backoff[str](self._initial_backoff, cap).delay(attempts - 1)

    def add_unschedulable(self, info: QueuedPodInfo, rejected_by: Iterable[str] = ()) -> None:
        """Return a pod after a failed attempt (or a failed binding of a group member).

        ``rejected_by`` names the plugins that rejected it; their events may move it back.  An
        empty set (an error, not a rejection) sends it to backoff directly.  A group member
        rejoins its group entity, which is then requeued as a whole.
        """
        uid = info.uid
        if self._infos.get(uid) is not info:
            self.done(uid)
            return   # deleted meanwhile
        instance = self._group_of(info.pod)
        if instance is None:
            self._requeue(info, rejected_by)
            self.done(uid)
            return
        group = self._join(info, instance)
        key = group.key
        if key in self._unschedulable:
            group.rejected_by |= frozenset(rejected_by)
            self._unschedulable.add(group)   # filed under the new plugins too
        elif not (group.in_flight or self._is_queued(key) or key in self._gated):
            self._requeue(group, rejected_by)
        self.done(uid)

    def requeue_group(self, group: QueuedGroupInfo, failed: Iterable[QueuedPodInfo],
                      rejected_by: Iterable[str] = ()) -> None:
        """End a pod-group attempt: ``failed`` members return with the group, the others went
        to binding (they come back through :meth:`add_unschedulable` if binding fails).
        Members that arrived during the attempt join now."""
        failed_uids = {info.uid for info in failed}
        group.end_attempt(failed_uids)
        if not group.members:
            self._drop(group.key)
        elif not failed_uids:
            # Nothing was tried and rejected: the new arrivals go through PreEnqueue.
            self._activate_or_gate(group)
        else:
            self._requeue(group, rejected_by)
        for uid in failed_uids:
            self.done(uid)

    def _requeue(self, entity: Entity, rejected_by: Iterable[str]) -> None:
        entity.timestamp = self._clock.now()
        entity.rejected_by = frozenset(rejected_by)
        infos = entity.pods()
        if not entity.rejected_by:
            self._push_backoff(entity, error=True)
        elif any(self._hints.any_say_queue(entity.rejected_by, infos, event, old, new)
                 for event, old, new in self._in_flight.events_since(entity.pop_seq)):
            self._push_backoff(entity)
        else:
            self._unschedulable.add(entity)

    def done(self, uid: str) -> None:
        """The attempt (scheduling and binding) for pod ``uid`` is over."""
        self._in_flight.done(uid)

    def forget(self, uid: str) -> None:
        """The pod was bound: it leaves the queue for good."""
        self.done(uid)
        self.delete(uid)

    # -- events --------------------------------------------------------------------------------
    def on_event(self, event: ClusterEvent, old: Any = None, new: Any = None,
                 only: Iterable[str] | None = None, gated_only: Iterable[str] | None = None) -> None:
        """A cluster change: move the parked entities it may help (queueing hints decide).

        ``only`` restricts the candidates to these pod UIDs when the caller knows, from an
        index, that no other pod can care (e.g. pods referencing a changed claim);
        ``gated_only`` restricts the gated ones alone (a freed device may help any rejected
        pod, but only a pod that references a claim waits at PreEnqueue for that claim).
        """
        self._in_flight.record(event, old, new)
        interested = self._hints.interested(event)
        if only is None:
            parked = [(e, e.pods()) for e in self._unschedulable.candidates(interested)]
        else:
            parked = self._members_of(only, self._unschedulable)
        if only is None and gated_only is None:
            gated = [(e, e.pods()) for e in self._gated.candidates(interested)]
        else:
            gated = self._members_of(gated_only if gated_only is not None else only, self._gated)   # type: ignore[arg-type]
        for entity, infos in gated:
            if self._gate_may_open(entity, infos, event, old, new):
                del self._gated[entity.key]
                self._activate_or_gate(entity)
        for entity, infos in parked:
            if self._hints.any_say_queue(entity.rejected_by, infos, event, old, new):
                self._move(entity)

    def _members_of(self, uids: Iterable[str], pool: WaitingPool) -> list[tuple[Entity, list[QueuedPodInfo]]]:
        """The entities of ``pool`` these pods belong to, each with those of its pods among them."""
        by_entity: dict[str, tuple[Entity, list[QueuedPodInfo]]] = {}
        for uid in uids:
            info = self._infos.get(uid)
            entity = self._entity_of(info) if info is not None else None
            if entity is not None and entity.key in pool:
                by_entity.setdefault(entity.key, (entity, []))[1].append(info)   # type: ignore[arg-type]
        return list(by_entity.values())

    def _gate_may_open(self, entity: Entity, infos: list[QueuedPodInfo], event: ClusterEvent,
                       old: Any, new: Any) -> bool:
        """Re-run the member checks the event may have changed; whether the entity may pass now."""
        changed = False
        for info in infos:
            if info.gated_by and self._hints.say_queue(info.gated_by, info, event, old, new):
                self._gate(info)
                changed = True
        if isinstance(entity, QueuedGroupInfo) and entity.gated_by:
            changed = changed or self._hints.any_say_queue((entity.gated_by,), infos, event, old, new)
        return changed

    # -- moving between sub-queues -------------------------------------------------------------
    def _gate(self, info: QueuedPodInfo) -> None:
        """Run the pod's own PreEnqueue checks; a group keeps count of its held-back members."""
        status = self._pre_enqueue(info.pod)
        info.gated_by = "" if status.is_success else (status.plugin or "PreEnqueue")
        if info.group is not None:
            info.group.mark_gated(info)

    def _activate_or_gate(self, entity: Entity) -> None:
        """PreEnqueue for the whole entity: every member's own checks, then the group's."""
        gated = entity.gated()
        if isinstance(entity, QueuedGroupInfo):
            entity.gated_by = ""
            if not gated:
                status = self._group_gate(entity)
                entity.gated_by = "" if status.is_success else (status.plugin or "PreEnqueue")
                gated = bool(entity.gated_by)
        if gated:
            self._gated.add(entity)
        else:
            self._push_active(entity)

    def _move(self, entity: Entity) -> None:
        """Leave the unschedulable pool: to backoff while it lasts, else straight to active."""
        self._unschedulable.pop(entity.key, None)
        if self._clock.now() < entity.timestamp + self._backoff_for(entity):
            self._push_backoff(entity)
        else:
            self._push_active(entity)

    def _backoff_for(self, entity: Entity) -> float:
        size = len(entity.members) if isinstance(entity, QueuedGroupInfo) else 1
        return self.backoff_duration(entity.attempts, size)

    def _push_active(self, entity: Entity) -> None:
        self._active.push(entity.key, -entity.priority, entity.timestamp)
        self._wakeup.set()

    def _push_backoff(self, entity: Entity, *, error: bool = False) -> None:
        self._backoff.push(entity.key, entity.timestamp + self._backoff_for(entity), error=error)
        self._wakeup.set()

    def stats(self) -> dict[str, int]:
        """Sizes of the sub-queues in entities (for tests and debugging)."""
        return {"active": len(self._active), "backoff": len(self._backoff),
                "unschedulable": len(self._unschedulable), "gated": len(self._gated),
                "in_flight": len(self._in_flight)}
