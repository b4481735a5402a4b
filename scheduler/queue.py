"""The scheduling queue: active heap, backoff heap and unschedulable pool (``scheduling_queue.go``).

What is queued is an *entity*: a plain pod, or a pod-group instance (gate ``GenericWorkload``)
holding the pending pods of one PodGroup or one v1alpha1 (workload, podGroup, replicaKey).  A
group member is never queued alone; its group is popped as a whole and scheduled in one
pod-group cycle.

- *active*: entities ready for an attempt, highest priority first (a group's is its members'),
  then FIFO.
- *backoff*: entities that failed recently; they return to *active* when their backoff expires
  (``initial * 2**(attempts-1)``, capped at ``max`` — for a group ``max * sqrt(size)``;
  upstream 1 s / 10 s).
- *gated*: entities a PreEnqueue check holds back: a member's own (a claim not generated yet)
  or the group's (its PodGroup missing, fewer than ``minCount`` members observed).  One gated
  member holds back its whole group.
- *unschedulable*: entities rejected by plugins.  They leave the pool only when a cluster event
  registered by a rejecting plugin arrives *and* that plugin's queueing hint says the event may
  help one of their pods — requeue on events, not by polling — or, as a safety net, after
  ``max_unschedulable`` seconds.

Events that arrive while an entity is in flight (popped, its attempt not finished) are
remembered and replayed through the hints when it comes back rejected, so a device freed
during a binding cycle is never missed.  Members created while their group is in flight wait
in the group's ``pending`` buffer and join it once the attempt is over.  Time comes from the
control plane's clock (``now`` and ``call_later``), so backoffs run on a manual clock in tests.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
)
from fakeapi.scheduler.rules.podgroups import PodGroupInstance


class QueueClock(Protocol):
    """What the queue needs of :class:`fakeapi.scheduler.clock.Clock`."""

    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any: ...


@dataclass(eq=False)
class QueuedPodInfo:
    """A pod and its scheduling history while it lives in the queue."""

    pod: dict[str, Any]
    timestamp: float                       # last time it entered the queue (orders FIFO, starts backoff)
    attempts: int = 0
    rejected_by: frozenset[str] = frozenset()   # plugins whose events may move it
    gated_by: str = ""                      # PreEnqueue plugin holding it back
    pop_seq: int = 0
    initial_timestamp: float = 0.0          # first time it was queued (orders group members)
    group: QueuedGroupInfo | None = None    # the pod-group entity it belongs to, if any

    @property
    def uid(self) -> str:
        return self.pod["metadata"]["uid"]

    @property
    def key(self) -> str:
        return self.uid

    @property
    def priority(self) -> int:
        return int((self.pod.get("spec") or {}).get("priority") or 0)

    def infos(self) -> list[QueuedPodInfo]:
        return [self]

    def pods(self) -> list[QueuedPodInfo]:
        return [self]

    def gated(self) -> bool:
        return bool(self.gated_by)


@dataclass(eq=False)
class QueuedGroupInfo:
    """A pod-group instance with its pending members, queued and popped as one entity."""

    instance: PodGroupInstance
    timestamp: float
    members: dict[str, QueuedPodInfo] = field(default_factory=dict)   # uid -> member, arrival order
    pending: dict[str, QueuedPodInfo] = field(default_factory=dict)   # arrived while in flight
    attempts: int = 0
    rejected_by: frozenset[str] = frozenset()
    gated_by: str = ""
    pop_seq: int = 0
    in_flight: bool = False
    gated_members: set[str] = field(default_factory=set)   # members a PreEnqueue check of their own holds
    arrivals: dict[str, None] = field(default_factory=dict)   # joined since take_arrivals(), in order

    @property
    def key(self) -> str:
        return "podgroup/" + self.instance.key

    @property
    def priority(self) -> int:
        # Members must share their group's priority (the cycle checks it): any member tells it.
        return max((m.priority for m in self.members.values()), default=0)

    def infos(self) -> list[QueuedPodInfo]:
        """The members in cycle order: higher priority first, then the earliest queued."""
        return sorted(self.members.values(), key=lambda m: (-m.priority, m.initial_timestamp))

    def pods(self) -> list[QueuedPodInfo]:
        """The members in no particular order (for the checks that look at every one)."""
        return list(self.members.values())

    def take_arrivals(self) -> list[str]:
        """The members that joined (or joined again) since the last call, in arrival order;
        those still waiting in ``pending`` stay for a later call."""
        taken = [uid for uid in self.arrivals if uid in self.members]
        for uid in taken:
            del self.arrivals[uid]
        return taken

    def gated(self) -> bool:
        """Whether one of its members is held back by a check of its own."""
        # Over the held-back members, not the members: a big group's check must not cost O(members).
        return any(uid in self.members for uid in self.gated_members)


Entity = QueuedPodInfo | QueuedGroupInfo


class _Pool:
    """Entities waiting for an event (gated or unschedulable), in arrival order, indexed by the
    plugins whose events may release them, so an event looks only at the entities one of its
    interested plugins holds back instead of at every waiting entity (50,000 pods waiting for
    their claims would otherwise make every pod event cost O(pods)).

    ``plugins_of`` names an entity's plugins; None: look at it on every event (a pod group,
    whose members may be held back by different plugins)."""

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


def _gating_plugins(entity: Entity) -> Iterable[str] | None:
    """The PreEnqueue plugin holding a pod back; None for a group (see :class:`_Pool`)."""
    return None if isinstance(entity, QueuedGroupInfo) else (entity.gated_by,)


def _rejecting_plugins(entity: Entity) -> Iterable[str]:
    return entity.rejected_by


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
        self._seq = itertools.count()
        self._active: list[tuple[int, float, int, str]] = []       # (-priority, timestamp, seq, key)
        self._active_entry: dict[str, int] = {}                    # key -> seq of its live heap entry
        # (expiry, seq, key); entities rejected by plugins and entities that hit an error back off apart.
        self._backoff: list[tuple[float, int, str]] = []
        self._error_backoff: list[tuple[float, int, str]] = []
        self._backoff_entry: dict[str, int] = {}
        # Both pools are in insertion (= timestamp) order, so the oldest entry comes first.
        self._unschedulable = _Pool(_rejecting_plugins)
        self._gated = _Pool(_gating_plugins)
        self._interest: dict[ClusterEvent, frozenset[str]] = {}   # event -> plugins registered for it
        self._entities: dict[str, Entity] = {}                     # every queued or in-flight entity
        self._infos: dict[str, QueuedPodInfo] = {}                 # every queued or in-flight pod
        self._in_flight: dict[str, int] = {}                       # pod uid -> pop seq (pop order)
        self._in_flight_events: deque[tuple[int, ClusterEvent, Any, Any]] = deque()
        self._registered: dict[str, list[ClusterEventWithHint]] = {}
        self._wakeup = asyncio.Event()
        self._closed = False

    def register_events(self, events: Iterable[tuple[str, ClusterEventWithHint]]) -> None:
        for plugin, event in events:
            self._registered.setdefault(plugin, []).append(event)
        self._interest.clear()

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
        elif entity.key in self._unschedulable and self._hints_say_queue(
                entity, ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE), old, pod, [info]):
            self._move(entity)

    def delete(self, uid: str) -> None:
        info = self._infos.pop(uid, None)
        if info is None:
            return
        group = info.group
        if group is None:
            self._drop(info.key)
            return
        group.members.pop(uid, None)
        group.pending.pop(uid, None)
        group.gated_members.discard(uid)
        group.arrivals.pop(uid, None)
        info.group = None
        if not group.members and not group.pending and not group.in_flight:
            self._drop(group.key)

    def _drop(self, key: str) -> None:
        self._entities.pop(key, None)
        self._active_entry.pop(key, None)
        self._backoff_entry.pop(key, None)
        self._unschedulable.pop(key, None)
        self._gated.pop(key, None)

    def __contains__(self, uid: str) -> bool:
        return uid in self._infos

    def _entity_of(self, info: QueuedPodInfo) -> Entity | None:
        entity = info.group if info.group is not None else info
        return entity if self._entities.get(entity.key) is entity else None

    def _join(self, info: QueuedPodInfo, instance: PodGroupInstance) -> QueuedGroupInfo:
        """Put a member into its group entity (created if needed), or into the group's pending
        buffer while the group is in flight."""
        key = "podgroup/" + instance.key
        group = self._entities.get(key)
        if not isinstance(group, QueuedGroupInfo):
            group = QueuedGroupInfo(instance, info.timestamp)
            self._entities[key] = group
        info.group = group
        (group.pending if group.in_flight else group.members)[info.uid] = info
        group.arrivals[info.uid] = None
        if info.gated_by:
            group.gated_members.add(info.uid)
        return group

    def _is_queued(self, key: str) -> bool:
        return key in self._active_entry or key in self._backoff_entry

    # -- popping -------------------------------------------------------------------------------
    def pop_nowait(self) -> Entity | None:
        """The next pod or pod group to schedule, or None.

        Expired backoffs move to active first.  When nothing is active, an entity still backing
        off after a *rejection* is taken early (upstream SchedulerPopFromBackoffQ, on by default
        since 1.33): an idle scheduler has no reason to wait.  Entities backing off after an
        error always wait their full backoff.
        """
        self.flush()
        key = self._pop_live(self._active, self._active_entry, 2)
        if key is None:
            key = self._pop_live(self._backoff, self._backoff_entry, 1)
        if key is None:
            return None
        entity = self._entities[key]
        if isinstance(entity, QueuedGroupInfo) and entity.gated():
            # A member that joined while the group was queued holds it back.
            self._gated.add(entity)
            return self.pop_nowait()
        entity.attempts += 1
        entity.pop_seq = next(self._seq)
        if isinstance(entity, QueuedGroupInfo):
            entity.in_flight = True
        for info in entity.pods():
            self._in_flight[info.uid] = entity.pop_seq
        return entity

    @staticmethod
    def _pop_live(heap: list[Any], entries: dict[str, int], seq_at: int) -> str | None:
        """Pop the first heap entry still current in ``entries`` (lazy deletion)."""
        while heap:
            entry = heapq.heappop(heap)
            key = entry[-1]
            if entries.get(key) == entry[seq_at]:
                del entries[key]
                return key
        return None

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
        return max(0.0, min(deadlines) - self._clock.now())

    def flush(self) -> None:
        """Move expired backoffs to active and long-unschedulable entities out of the pool."""
        now = self._clock.now()
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] <= now:
                _, seq, key = heapq.heappop(heap)
                if self._backoff_entry.get(key) == seq:
                    del self._backoff_entry[key]
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
        for uid in list(group.members):
            if uid not in failed_uids:
                member = group.members.pop(uid)
                group.arrivals.pop(uid, None)
                member.group = None
        group.in_flight = False
        group.members.update(group.pending)
        group.pending.clear()
        members = list(group.members.values())
        if not members:
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
            self._push_backoff(entity, self._error_backoff)
        elif any(self._hints_say_queue(entity, event, old, new, infos)
                 for seq, event, old, new in self._in_flight_events if seq > entity.pop_seq):
            self._push_backoff(entity)
        else:
            self._unschedulable.add(entity)

    def done(self, uid: str) -> None:
        """The attempt (scheduling and binding) for pod ``uid`` is over."""
        if self._in_flight.pop(uid, None) is None:
            return
        oldest = next(iter(self._in_flight.values()), None)
        while self._in_flight_events and (oldest is None or self._in_flight_events[0][0] < oldest):
            self._in_flight_events.popleft()

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
        if self._in_flight:
            self._in_flight_events.append((next(self._seq), event, old, new))
        interested = self._interested(event)
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
            if self._hints_say_queue(entity, event, old, new, infos):
                self._move(entity)

    def _members_of(self, uids: Iterable[str], pool: _Pool) -> list[tuple[Entity, list[QueuedPodInfo]]]:
        """The entities of ``pool`` these pods belong to, each with those of its pods among them."""
        by_entity: dict[str, tuple[Entity, list[QueuedPodInfo]]] = {}
        for uid in uids:
            info = self._infos.get(uid)
            entity = self._entity_of(info) if info is not None else None
            if entity is not None and entity.key in pool:
                by_entity.setdefault(entity.key, (entity, []))[1].append(info)   # type: ignore[arg-type]
        return list(by_entity.values())

    def _interested(self, event: ClusterEvent) -> frozenset[str]:
        """The plugins that registered for ``event`` (their hints decide per pod)."""
        plugins = self._interest.get(event)
        if plugins is None:
            plugins = self._interest[event] = frozenset(
                plugin for plugin, registered in self._registered.items()
                if any(r.event.matches(event) for r in registered))
        return plugins

    def _gate_may_open(self, entity: Entity, infos: list[QueuedPodInfo], event: ClusterEvent,
                       old: Any, new: Any) -> bool:
        """Re-run the member checks the event may have changed; whether the entity may pass now."""
        changed = False
        for info in infos:
            if info.gated_by and self._plugin_interested(info.gated_by, info, event, old, new):
                self._gate(info)
                changed = True
        if isinstance(entity, QueuedGroupInfo) and entity.gated_by:
            changed = changed or any(self._plugin_interested(entity.gated_by, i, event, old, new) for i in infos)
        return changed

    def _hints_say_queue(self, entity: Entity, event: ClusterEvent, old: Any, new: Any,
                         infos: list[QueuedPodInfo]) -> bool:
        return any(self._plugin_interested(p, info, event, old, new) for p in entity.rejected_by for info in infos)

    def _plugin_interested(self, plugin: str, info: QueuedPodInfo, event: ClusterEvent,
                           old: Any, new: Any) -> bool:
        for registered in self._registered.get(plugin, ()):
            if registered.event.matches(event):
                if registered.hint is None or registered.hint(info.pod, old, new) == QueueingHint.QUEUE:
                    return True
        return False

    # -- moving between sub-queues -------------------------------------------------------------
    def _gate(self, info: QueuedPodInfo) -> None:
        """Run the pod's own PreEnqueue checks; a group keeps count of its held-back members."""
        status = self._pre_enqueue(info.pod)
        info.gated_by = "" if status.is_success else (status.plugin or "PreEnqueue")
        if info.group is not None:
            if info.gated_by:
                info.group.gated_members.add(info.uid)
            else:
                info.group.gated_members.discard(info.uid)

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
        seq = next(self._seq)
        self._active_entry[entity.key] = seq
        heapq.heappush(self._active, (-entity.priority, entity.timestamp, seq, entity.key))
        self._wakeup.set()

    def _push_backoff(self, entity: Entity, heap: list[tuple[float, int, str]] | None = None) -> None:
        seq = next(self._seq)
        self._backoff_entry[entity.key] = seq
        expiry = entity.timestamp + self._backoff_for(entity)
        heapq.heappush(self._backoff if heap is None else heap, (expiry, seq, entity.key))
        self._wakeup.set()

    def stats(self) -> dict[str, int]:
        """Sizes of the sub-queues in entities (for tests and debugging)."""
        return {"active": len(self._active_entry), "backoff": len(self._backoff_entry),
                "unschedulable": len(self._unschedulable), "gated": len(self._gated),
                "in_flight": len(self._in_flight)}
