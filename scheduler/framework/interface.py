"""Scheduling framework contracts: status values, cluster events and one Protocol per extension point.

Mirrors ``pkg/scheduler/framework/interface.go``.  Expected outcomes are values (:class:`Status`);
exceptions are reserved for bugs and I/O failures.  The scheduling cycle (PreFilter .. Permit)
is synchronous and runs on one consistent snapshot; only the binding cycle (PreBind, Bind)
awaits the API server, so those two hooks are coroutines.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import orjson

if TYPE_CHECKING:
    from fakeapi.scheduler.framework.cycle_state import CycleState
    from fakeapi.scheduler.snapshot import NodeInfo


class Code(enum.IntEnum):
    """How a plugin's answer steers the scheduler and the queue."""

    SUCCESS = 0
    # Internal problem (bad CEL, API error): the pod goes to backoff, condition reason SchedulerError.
    ERROR = 1
    # Not schedulable now; another node or preemption might help.
    UNSCHEDULABLE = 2
    # Not schedulable and no preemption on this node can help.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    # Permit only: hold the pod before binding until allowed, rejected or timed out.
    WAIT = 4
    # PreFilter/PreScore only: the plugin has nothing to do for this pod; its later hooks are skipped.
    SKIP = 5
    # The pod waits for something outside the scheduler (e.g. a claim being allocated).
    PENDING = 6


@dataclass(frozen=True)
class Status:
    """The outcome of one plugin hook; ``reasons`` become the user-visible message."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, unresolvable or pending: the pod did not fit (as opposed to an error)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status()


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


def error(plugin: str, reason: str) -> Status:
    return Status(Code.ERROR, (reason,), plugin)


def skip(plugin: str) -> Status:
    return Status(Code.SKIP, (), plugin)


class NodeStatuses(dict[str, Status]):
    """Node name -> the Status that rejected the pod there, as a cycle collects them.

    What the failure message, the queue and PostFilter read of all of them (how many nodes gave
    each reason, the rejecting plugins, the nodes preemption might help) is counted on first use
    and then kept up to date by :meth:`put`: a remembered attempt changes a few of thousands of
    nodes, and counting them all again would cost as much as filtering them.
    """

    __slots__ = ("_plugins", "_reasons", "_unschedulable")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._reasons: Counter[str] | None = None
        self._plugins: Counter[str] = Counter()
        self._unschedulable: set[str] = set()

    def put(self, node: str, status: Status) -> None:
        """``self[node] = status``, keeping the counts current."""
        if self._reasons is not None:
            old = self.get(node)
            if old is not None:
                self._count(node, old, -1)
            self._count(node, status, 1)
        self[node] = status

    def _count(self, node: str, status: Status, sign: int) -> None:
        assert self._reasons is not None
        for counter, keys in ((self._reasons, status.reasons), (self._plugins, (status.plugin,))):
            for key in keys:
                counter[key] += sign
                if not counter[key]:
                    del counter[key]
        if status.code == Code.UNSCHEDULABLE:
            (self._unschedulable.add if sign > 0 else self._unschedulable.discard)(node)

    def _counted(self) -> Counter[str]:
        if self._reasons is None:
            self._reasons = Counter()
            for node, status in self.items():
                self._count(node, status, 1)
        return self._reasons

    def reasons(self) -> Mapping[str, int]:
        """How many nodes gave each reason."""
        return self._counted()

    def plugins(self) -> frozenset[str]:
        """The plugins that rejected the pod somewhere."""
        self._counted()
        return frozenset(self._plugins)

    def unschedulable(self) -> set[str]:
        """The nodes that rejected the pod as ``Unschedulable`` (where preemption might help)."""
        self._counted()
        return self._unschedulable


def fit_error_message(num_nodes: int, statuses: Mapping[str, Status], *, pre_filter_msg: str = "",
                      post_filter_msg: str = "", also: Mapping[str, int] | None = None) -> str:
    """``0/N nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint(s).``
    ``also`` counts reasons of nodes ``statuses`` leaves out."""
    message = f"0/{num_nodes} nodes are available:"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        histogram = Counter(statuses.reasons() if isinstance(statuses, NodeStatuses) else
                            (reason for status in statuses.values() for reason in status.reasons))
        histogram.update(also or {})
        if histogram:
            message += " " + ", ".join(sorted(f"{count} {reason}" for reason, count in histogram.items())) + "."
    if post_filter_msg:
        message += f" {post_filter_msg}."
    return message


# --- cluster events and queueing hints (requeue on events, not polling) --------------------------

class ActionType(enum.IntFlag):
    ADD = 1
    UPDATE = 2
    DELETE = 4
    ALL = ADD | UPDATE | DELETE


class EventResource(enum.StrEnum):
    """What changed.  ``ASSIGNED_POD`` is a pod bound to a node (its usage frees/takes resources)."""

    UNSCHEDULED_POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    NODE = "Node"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    DEVICE_TAINT_RULE = "DeviceTaintRule"
    POD_GROUP = "PodGroup"


@dataclass(frozen=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType

    def matches(self, other: ClusterEvent) -> bool:
        """Whether the registered event ``self`` covers the observed event ``other``."""
        return self.resource == other.resource and bool(self.action & other.action)


class QueueingHint(enum.Enum):
    SKIP = 0
    QUEUE = 1


# (pod, old object or None, new object or None) -> whether the event may make the pod schedulable.
QueueingHintFn = Callable[[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None], QueueingHint]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None   # None = always queue


def node_now_passes(passes: Callable[[dict[str, Any], dict[str, Any]], bool]) -> ClusterEventWithHint:
    """Requeue on a node add/update that makes ``passes(pod, node)`` true where it was not before.

    The hint shared by the node filters (affinity, taints, cordon): a change that leaves the
    node as acceptable or as unacceptable as it was is not what a rejected pod waits for.
    """
    def hint(pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None) -> QueueingHint:
        if new is None or not passes(pod, new):
            return QueueingHint.SKIP
        if old is not None and passes(pod, old):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    return ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE), hint)


def sign_fragment(*values: Any) -> bytes:
    """A signature fragment of plain JSON values: equal for equal values (key order aside)."""
    return orjson.dumps(values, option=orjson.OPT_SORT_KEYS)


# --- extension points ----------------------------------------------------------------------------

@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Events that may make a pod rejected by this plugin schedulable."""
        ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: dict[str, Any]) -> Status:
        """Gate entry to the active queue. Success, or UnschedulableAndUnresolvable (pod stays parked)."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Sequence[NodeInfo]) -> Status:
        """Once per cycle. Success, Skip (Filter not called), Unschedulable*, or Error."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        """Per node. Success, Unschedulable, UnschedulableAndUnresolvable, or Error."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: dict[str, Any],
                    statuses: dict[str, Status]) -> Status:
        """After no node fit. May change the cluster (e.g. deallocate) and returns Unschedulable."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    weight: int

    def score(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> int:
        """0..100 for a feasible node; higher is better."""
        ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    def sign(self, pod: dict[str, Any]) -> Hashable | None:
        """What of the pod this plugin's Filter and Score read (upstream's ``SignPlugin``, KEP-5598):
        two pods with equal fragments get the same answer on a node in the same state.  None when
        the answer depends on more (the pod is then filtered and scored without the memo)."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        """Claim in-memory resources for the chosen node. Failure triggers Unreserve."""
        ...

    def unreserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> None:
        """Idempotent roll-back of Reserve (and of whatever PreBind already wrote)."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: dict[str, Any], node_name: str) -> tuple[Status, float]:
        """Success, Wait with a timeout in seconds (the pod holds before binding), or a rejection."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        """API writes that must succeed before the pod is bound (e.g. claim allocation)."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        """Bind the pod; Skip lets the next bind plugin try."""
        ...
