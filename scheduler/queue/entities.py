"""What the scheduling queue holds: a pod, or a pod-group instance with its pending members.

A group member is never queued alone: it joins its group's entity, which is queued and popped
as a whole.  The group keeps the bookkeeping of its members' arrivals: members that arrive while
the group is in flight wait in ``pending``, members a PreEnqueue check of their own holds back
are counted in ``gated_members``, and ``arrivals`` remembers who joined since the scheduler last
asked (:meth:`QueuedGroupInfo.take_arrivals`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fakeapi.scheduler.rules.podgroups import PodGroupInstance


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


def group_key(instance: PodGroupInstance) -> str:
    """The queue key of a pod-group instance's entity (never a pod UID)."""
    return "podgroup/" + instance.key


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
        return group_key(self.instance)

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

    def join(self, info: QueuedPodInfo) -> None:
        """Take ``info`` in as a member, or into ``pending`` while the group is in flight."""
        info.group = self
        (self.pending if self.in_flight else self.members)[info.uid] = info
        self.arrivals[info.uid] = None
        if info.gated_by:
            self.gated_members.add(info.uid)

    def leave(self, info: QueuedPodInfo) -> None:
        """Forget ``info`` (its pod was deleted)."""
        uid = info.uid
        self.members.pop(uid, None)
        self.pending.pop(uid, None)
        self.gated_members.discard(uid)
        self.arrivals.pop(uid, None)
        info.group = None

    def mark_gated(self, info: QueuedPodInfo) -> None:
        """Count ``info`` as held back, or no longer, by a PreEnqueue check of its own."""
        if info.gated_by:
            self.gated_members.add(info.uid)
        else:
            self.gated_members.discard(info.uid)

    def end_attempt(self, failed_uids: set[str]) -> None:
        """The attempt is over: members not in ``failed_uids`` went to binding and leave; the
        pending members join."""
        for uid in list(self.members):
            if uid not in failed_uids:
                member = self.members.pop(uid)
                self.arrivals.pop(uid, None)
                member.group = None
        self.in_flight = False
        self.members.update(self.pending)
        self.pending.clear()

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
