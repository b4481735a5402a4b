"""The scheduler loop: pod and pod-group cycles, binding cycle and failure handling (``schedule_one.go``).

What the queue yields is a plain pod or a pod group (gate ``GenericWorkload``).  A pod goes
through a synchronous *scheduling cycle* on the live cache (PreFilter, Filter over nodes until
enough feasible ones are found, Score, Reserve, Permit); a pod group goes through one *pod-group
cycle* (:mod:`fakeapi.scheduler.podgroup_cycle`) that places its members one after another on
the same view and either keeps them all or reverts them all.  Because neither cycle awaits,
informer handlers cannot interleave: the cache is a consistent snapshot for the whole cycle.
The *binding cycle* (wait on Permit, PreBind API writes, Bind) then runs as its own asyncio task
per pod, so the next cycle overlaps the API round trips of this one.
Failures put the pod (or the group) back into the queue (rejections wait for a helpful event,
errors back off) and are explained on the pod: ``PodScheduled=False`` with reason
``Unschedulable`` or ``SchedulerError`` and a ``FailedScheduling`` Event, and on a v1beta1
PodGroup by its ``PodGroupInitiallyScheduled`` condition; successes get a ``Scheduled`` Event.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, NamedTuple

from fakeapi.scheduler.assume_cache import ClaimAssumeCache
from fakeapi.scheduler.client import (
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    NODES,
    PODDISRUPTIONBUDGETS,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    TRANSPORT_ERRORS,
    WORKLOADS_V1ALPHA1,
    ApiClient,
)
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.dra.allocator import DeviceIndex, Features
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder, truncated_note
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    Code,
    EventResource,
    NodeStatuses,
    Status,
    error,
    fit_error_message,
)
from fakeapi.scheduler.framework.runtime import Framework
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.node_search import NodeSearch
from fakeapi.scheduler.nominator import Nominator
from fakeapi.scheduler.plugins.default_binder import DefaultBinder
from fakeapi.scheduler.plugins.default_preemption import NAME as DEFAULT_PREEMPTION
from fakeapi.scheduler.plugins.default_preemption import NOMINATION, DefaultPreemption, GroupView
from fakeapi.scheduler.plugins.dynamic_resources import NAME as DYNAMIC_RESOURCES
from fakeapi.scheduler.plugins.dynamic_resources import DynamicResources
from fakeapi.scheduler.plugins.gang import NAME as GANG_SCHEDULING
from fakeapi.scheduler.plugins.gang import GangScheduling, gang_min_count
from fakeapi.scheduler.plugins.node_affinity import NodeAffinity
from fakeapi.scheduler.plugins.node_name import NodeName
from fakeapi.scheduler.plugins.node_resources_fit import NodeResourcesFit
from fakeapi.scheduler.plugins.node_unschedulable import NodeUnschedulable
from fakeapi.scheduler.plugins.taint_toleration import TaintToleration
from fakeapi.scheduler.podgroup_cycle import (
    GroupResult,
    MemberResult,
    member_message,
    run_group_algorithm,
    run_placements,
    validate_group,
)
from fakeapi.scheduler.podgroup_status import REASON_SCHEDULED, PodGroupStatusWriter
from fakeapi.scheduler.queue.entities import QueuedGroupInfo, QueuedPodInfo
from fakeapi.scheduler.queue.scheduling_queue import SchedulingQueue
from fakeapi.scheduler.rules.claims import is_deallocation, pod_claim_keys
from fakeapi.scheduler.rules.keys import object_key
from fakeapi.scheduler.rules.podgroups import PodGroupInstance, group_priority, pod_group_instance, pod_group_keys
from fakeapi.scheduler.rules.pods import as_pod, is_assigned, is_pod_terminal, is_terminating, node_of
from fakeapi.scheduler.snapshot import NodeCache, NodeInfo

from fakeapi.config import FeatureGates
from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
LONG_CYCLE = 0.002  # seconds: a cycle this long is followed by as long a pause (see run)
_CLAIM_INDEX = "claims"
_GROUP_INDEX = "podgroup"
_NODE_INDEX = "node"


# --- pure helpers ------------------------------------------------------------------------------

def is_responsible_for(pod: Mapping[str, Any]) -> bool:
    """Pending pods this scheduler must place: our schedulerName, no node, not finished or deleting."""
    return ((pod.get("spec") or {}).get("schedulerName") in (None, "", SCHEDULER_NAME) and not is_assigned(pod)
            and not is_pod_terminal(pod) and not is_terminating(pod))


def _bound_node(pod: dict[str, Any]) -> list[str]:
    """The node a pod occupies (bound and not finished), for the index of pods by node."""
    node = node_of(pod)
    return [node] if node and not is_pod_terminal(pod) else []


class _Result(NamedTuple):
    """Outcome of a scheduling cycle up to host selection."""

    node: str | None
    status: Status
    message: str = ""
    rejected_by: frozenset[str] = frozenset()   # plugins whose events may help


# --- the scheduler -----------------------------------------------------------------------------

class Scheduler:
    """kube-scheduler's default profile over the wire; see the module docstring for the flow."""

    def __init__(self, api: ApiClient, factory: InformerFactory, gates: FeatureGates,
                 recorder: EventRecorder, *, clock: Clock | None = None, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0, percentage_of_nodes_to_score: int = 0,
                 filter_timeout: float = 10.0) -> None:
        self._api = api
        self._recorder = recorder
        self._factory = factory
        self.nodes = NodeCache()
        self.nominator = Nominator()
        self.claims = ClaimAssumeCache()
        self.index = DeviceIndex(Features.from_gates(gates))
        self._search = NodeSearch(self.nodes, self.index, self.claims.allocated,
                                  lambda state: self._dra.attempt_key(state), percentage_of_nodes_to_score)
        self._binding_tasks: set[asyncio.Task[None]] = set()
        # (reason, message) of the PodScheduled condition last sent per pod, until the informer shows it.
        self._explained: dict[str, tuple[str, str, str | None]] = {}
        # Per gated group: the PreEnqueue message its members were told.
        self._gate_notes: dict[str, str] = {}

        self._pods = factory.informer(PODS)
        self._pods.add_index(_CLAIM_INDEX, pod_claim_keys)
        self._pods.add_index(_GROUP_INDEX, pod_group_keys)
        self._pods.add_index(_NODE_INDEX, _bound_node)
        pdbs = factory.informer(PODDISRUPTIONBUDGETS)
        classes = factory.informer(DEVICE_CLASSES)
        self._group_informers = {}
        if gates.GenericWorkload:
            self._group_informers = {False: factory.informer(PODGROUPS), True: factory.informer(WORKLOADS_V1ALPHA1)}
        groups = self._group_lookup if self._group_informers else None
        self._gang = GangScheduling(self._group_lookup, self._member_count) if groups else None
        self._group_status = PodGroupStatusWriter(api)
        group_claims = groups is not None and gates.DRAWorkloadResourceClaims
        self._dra = DynamicResources(api, self.claims, self.index,
                                     lambda name: classes.lister.get(None, name) is not None,
                                     groups=groups if group_claims else None,
                                     members=self._live_members if group_claims else None,
                                     prioritized_list=gates.DRAPrioritizedList, filter_timeout=filter_timeout)
        fit = NodeResourcesFit(self.nominator)
        self._preemption = DefaultPreemption(
            api, recorder, self.nodes, self.nominator,
            run_filter=lambda state, pod, info: self.framework.run_filter(state, pod, info),
            fits_resources=fit.filter, pods_on=lambda node: self._pods.lister.by_index(_NODE_INDEX, node),
            group_view=self._group_view, pdbs=lambda: pdbs.lister.list())
        # DynamicResources before DefaultPreemption, as upstream orders them: freeing an idle claim
        # comes before evicting pods.
        self.framework = Framework([
            NodeUnschedulable(), NodeName(), TaintToleration(), NodeAffinity(), fit, self._dra, self._preemption,
            *([self._gang] if self._gang else []),
            DefaultBinder(api),
        ])
        self.queue = SchedulingQueue(self.framework.run_pre_enqueue, clock or Clock(),
                                     group_of=pod_group_instance if groups else lambda pod: None,
                                     group_gate=self._group_gate,
                                     initial_backoff=initial_backoff, max_backoff=max_backoff)
        self.queue.register_events(self.framework.events_to_register())

        self._pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        factory.informer(NODES).add_event_handler(
            lambda n: self._on_node(None, n), self._on_node, self._on_node_delete)
        factory.informer(RESOURCE_CLAIMS).add_event_handler(
            lambda c: self._on_claim(None, c), self._on_claim, lambda c: self._on_claim(c, None))
        self._watch_index(factory.informer(RESOURCE_SLICES), EventResource.RESOURCE_SLICE,
                          self.index.set_slice, self.index.remove_slice)
        self._watch_index(classes, EventResource.DEVICE_CLASS, self.index.set_class, self.index.remove_class)
        self._watch_index(factory.informer(DEVICE_TAINT_RULES), EventResource.DEVICE_TAINT_RULE,
                          self.index.set_taint_rule, self.index.remove_taint_rule)
        for informer in self._group_informers.values():
            informer.add_event_handler(
                lambda g: self._event(EventResource.POD_GROUP, ActionType.ADD, None, g),
                lambda old, new: self._event(EventResource.POD_GROUP, ActionType.UPDATE, old, new))

    # -- event handlers (synchronous, quick) -----------------------------------------------------
    def _event(self, resource: EventResource, action: ActionType, old: Any, new: Any,
               only: Iterable[str] | None = None) -> None:
        self.queue.on_event(ClusterEvent(resource, action), old, new, only)

    def _watch_index(self, informer: Any, resource: EventResource, upsert: Any, remove: Any) -> None:
        def on_add(obj: dict[str, Any]) -> None:
            upsert(obj)
            self._event(resource, ActionType.ADD, None, obj)

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            upsert(new)
            self._event(resource, ActionType.UPDATE, old, new)

        def on_delete(obj: dict[str, Any]) -> None:
            remove(obj["metadata"]["name"])
            self._event(resource, ActionType.DELETE, obj, None)

        informer.add_event_handler(on_add, on_update, on_delete)

    def _on_pod_add(self, pod: dict[str, Any]) -> None:
        if is_assigned(pod):
            self.nodes.set_pod(pod)
            instance = pod_group_instance(pod)
            if instance is not None:
                # A bound member may complete a waiting gang's quorum: ask its members only.
                # (A pending member joins its group in the queue, which re-checks the group then.)
                members = self._pods.lister.by_index(_GROUP_INDEX, instance.key)
                self._event(EventResource.ASSIGNED_POD, ActionType.ADD, None, pod,
                            [p["metadata"]["uid"] for p in members])
        elif is_responsible_for(pod):
            self.nominator.observe(pod)
            self.queue.add(pod)

    def _on_pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        uid = new["metadata"]["uid"]
        if is_assigned(new):
            if not is_assigned(old):
                self.queue.forget(uid)
                self.nominator.remove(uid)
                self._explained.pop(uid, None)
            self.nodes.set_pod(new)
            if is_pod_terminal(new) and not is_pod_terminal(old):
                self._event(EventResource.ASSIGNED_POD, ActionType.DELETE, old, None)
        elif is_responsible_for(new):
            self.nominator.observe(new)
            self.queue.update(new)
        else:
            self.nominator.remove(uid)
            self.queue.delete(uid)

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        self.queue.delete(uid)
        self.nominator.remove(uid)
        self._explained.pop(uid, None)
        waiting = self.framework.waiting_pods.get(uid)
        if waiting is not None:
            waiting.reject("", "pod deleted")
        if is_assigned(pod):
            self._preemption.victim_gone(uid)
            self.nodes.remove_pod(uid)
            self._event(EventResource.ASSIGNED_POD, ActionType.DELETE, pod, None)

    def _on_node(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        self.nodes.set_node(new)
        self._event(EventResource.NODE, ActionType.UPDATE if old else ActionType.ADD, old, new)

    def _on_node_delete(self, node: dict[str, Any]) -> None:
        self.nodes.remove_node(node["metadata"]["name"])
        self._event(EventResource.NODE, ActionType.DELETE, node, None)

    def _on_claim(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if new is None:
            self.claims.on_delete(old)   # type: ignore[arg-type]
            action = ActionType.DELETE
        else:
            self.claims.on_upsert(new)
            action = ActionType.UPDATE if old else ActionType.ADD
        claim = new or old
        assert claim is not None
        # Only pods referencing this claim can care (look them up instead of asking every pod),
        # except that freed devices may help any pod rejected for want of devices.  A pod held
        # at PreEnqueue waits for its own claims only.
        users = [p["metadata"]["uid"] for p in self._pods.lister.by_index(_CLAIM_INDEX, object_key(claim))]
        freed = is_deallocation(old, new)
        self.queue.on_event(ClusterEvent(EventResource.RESOURCE_CLAIM, action), old, new,
                            None if freed else users, gated_only=users)

    # -- pod groups --------------------------------------------------------------------------------
    def _group_lookup(self, instance: PodGroupInstance) -> dict[str, Any] | None:
        informer = self._group_informers[instance.is_workload_shape]
        return informer.lister.get(instance.namespace, instance.object_name)

    def _member_count(self, instance: PodGroupInstance) -> int:
        return self._pods.lister.count_index(_GROUP_INDEX, instance.key)

    def _live_members(self, instance: PodGroupInstance) -> list[dict[str, Any]]:
        """The pods of a group this scheduler has observed, bound or not, that still count."""
        return [p for p in self._pods.lister.by_index(_GROUP_INDEX, instance.key)
                if not is_pod_terminal(p) and not is_terminating(p)]

    def _group_view(self, instance: PodGroupInstance) -> GroupView | None:
        """A group as preemption ranks its pods (v1alpha1 Workloads have no priority of their own)."""
        group = self._group_lookup(instance) if self._group_informers else None
        priority = group_priority(group, instance) if group is not None else None
        if group is None or priority is None:
            return None
        disrupt_all = "all" in ((group.get("spec") or {}).get("disruptionMode") or {})
        return GroupView(priority, disrupt_all,
                         lambda: [p for p in self._live_members(instance) if is_assigned(p)])

    def _group_gate(self, group: QueuedGroupInfo) -> Status:
        """The group's PreEnqueue; a gang may wait long for its members, so the pods say why
        (other gates, such as a claim about to be created, clear up in moments and stay silent)."""
        assert self._gang is not None
        status = self._gang.pre_enqueue_group(group.instance)
        if status.is_success:
            self._gate_notes.pop(group.key, None)
            group.take_arrivals()
            return status
        # Only members that have not been told yet (a big gang is gated once per arriving
        # member): with an unchanged message, those that joined since the last call.
        arrived = group.take_arrivals()
        told_all = self._gate_notes.get(group.key) == status.message
        for uid in arrived if told_all else list(group.members):
            self._explain(as_pod(group.members[uid].pod), REASON_UNSCHEDULABLE, status.message)
        self._gate_notes[group.key] = status.message
        return status

    # -- the loop ----------------------------------------------------------------------------------
    async def run(self) -> None:
        """Schedule pods and pod groups until cancelled."""
        await self._factory.wait_for_cache_sync()
        try:
            while True:
                entity = await self.queue.pop()
                started = time.perf_counter()
                try:
                    if isinstance(entity, QueuedGroupInfo):
                        self.schedule_group(entity)
                    else:
                        self.schedule_one(entity)
                except Exception:   # a bug must cost one attempt, not the scheduler
                    log.exception("scheduling %s failed", entity.key)
                    if isinstance(entity, QueuedGroupInfo):
                        self.queue.requeue_group(entity, entity.infos())
                    else:
                        self.queue.add_unschedulable(entity)
                # Let the rest of the control plane run between cycles (pop() does not wait while
                # pods are queued).  Upstream's kube-scheduler and kube-controller-manager are
                # processes of their own, each with its CPU; here they share one loop, so after a
                # long cycle (pods that fit nowhere filter every node) the scheduler leaves the loop
                # to the others for as long again: else a queue of such pods starves the
                # controllers that free the devices they wait for (bench_scale stalled at capacity).
                spent = time.perf_counter() - started
                await asyncio.sleep(spent if spent > LONG_CYCLE else 0)
        finally:
            self.queue.close()
            self._group_status.close()
            self._preemption.close()
            for task in list(self._binding_tasks):
                task.cancel()
            await asyncio.gather(*self._binding_tasks, return_exceptions=True)

    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One synchronous scheduling cycle; starts the binding cycle as a task on success."""
        pod = info.pod
        if not is_responsible_for(pod):
            self.queue.forget(info.uid)
            return
        state = CycleState()
        result = self._schedule_pod(state, pod)
        if result.node is None:
            self._fail(info, result.status, result.message, result.rejected_by, nominated=state.read(NOMINATION))
            return
        self.nodes.assume_pod(pod, result.node)
        status = self.framework.run_reserve(state, pod, result.node)
        if not status.is_success:
            self._revert(state, pod, result.node)
            self._fail(info, status, _plugin_message(status, "Reserve" if status.code == Code.ERROR else ""),
                       _rejected_by(status))
            return
        self._start_binding(info, state, result.node)

    def _start_binding(self, info: QueuedPodInfo, state: CycleState, node_name: str) -> None:
        """Permit, then the binding cycle as a task (the pod is assumed and reserved on ``node_name``)."""
        status = self.framework.run_permit(state, info.pod, node_name)
        if not (status.is_success or status.code == Code.WAIT):
            self._revert(state, info.pod, node_name)
            self._fail(info, status, _plugin_message(status, "Permit" if status.code == Code.ERROR else ""),
                       _rejected_by(status))
            return
        self._spawn(self._binding_cycle(info, state, node_name))

    def _revert(self, state: CycleState, pod: dict[str, Any], node_name: str) -> None:
        """Undo Reserve and the assumption of ``pod`` on ``node_name``."""
        self.framework.run_unreserve(state, pod, node_name)
        self.nodes.forget_pod(pod["metadata"]["uid"])

    def _schedule_pod(self, state: CycleState, pod: dict[str, Any], *, post_filter: bool = True) -> _Result:
        """Filter and score; on failure run PostFilter unless a pod-group cycle handles it."""
        nodes = self.nodes.nodes()
        if not nodes:
            return _Result(None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_NODES_AVAILABLE,)),
                           NO_NODES_AVAILABLE)
        status = self.framework.run_pre_filter(state, pod, nodes)
        if status.code == Code.ERROR:
            return _Result(None, status, _plugin_message(status, "PreFilter"))
        if not status.is_success:
            statuses = NodeStatuses.fromkeys((n.name for n in nodes), status)
            post = self.framework.run_post_filter(state, pod, statuses) if post_filter else Status(Code.UNSCHEDULABLE)
            message = fit_error_message(len(nodes), statuses, pre_filter_msg=status.message,
                                        post_filter_msg=post.message)
            return _Result(None, status, message, frozenset({status.plugin}))
        nominated = self.nodes.get(self.nominator.node_of(pod["metadata"]["uid"]))
        if nominated is not None and self.framework.run_filter(state, pod, nominated).is_success:
            return _Result(nominated.name, status)   # the node preemption made room on comes first
        node, statuses, failed = self._find_node(state, pod, nodes)
        if failed is not None:
            return _Result(None, failed, _plugin_message(failed, "filter"))
        if node is None:
            post = self.framework.run_post_filter(state, pod, statuses) if post_filter else Status(Code.UNSCHEDULABLE)
            return _Result(None, Status(Code.UNSCHEDULABLE),
                           fit_error_message(len(nodes), statuses, post_filter_msg=post.message), statuses.plugins())
        return _Result(node, status)

    # -- pod-group cycle ---------------------------------------------------------------------------
    def schedule_group(self, group: QueuedGroupInfo) -> None:
        """One pod-group cycle (``scheduleOnePodGroup``): validate, place the members, submit."""
        instance = group.instance
        pending = []
        for info in group.infos():
            if is_responsible_for(info.pod):
                pending.append(info)
            else:
                self.queue.forget(info.uid)   # bound, finished or deleting meanwhile
        group_obj = self._group_lookup(instance)
        min_count = None
        if group_obj is not None:
            try:
                min_count = gang_min_count(group_obj, instance) or 1   # basic groups: 1
            except ValueError:
                pass
        if not pending or group_obj is None or min_count is None:
            # Nothing left, or the group went away meanwhile: its PreEnqueue will hold the pods.
            self.queue.requeue_group(group, pending, {GANG_SCHEDULING})
            return
        live = self._live_members(instance)
        invalid = validate_group(instance, group_priority(group_obj, instance), live)
        if invalid:
            self._submit_group(group, group_obj, pending, GroupResult(error("", invalid)))
            return
        pending_uids = {info.uid for info in pending}
        scheduled = sum(1 for p in live if p["metadata"]["uid"] not in pending_uids
                        and (is_assigned(p) or self.nodes.is_assumed(p["metadata"]["uid"])))
        placements = None
        if min_count > 1:   # a basic group's first member picks first-fit, the others follow
            placements = self._dra.group_placements(instance, group_obj, [i.pod for i in pending],
                                                    min_count - scheduled)

        def place() -> GroupResult:
            if placements is None:
                return run_group_algorithm(pending, min_count, scheduled, self)
            return run_placements(pending, min_count, scheduled, self, [{DYNAMIC_RESOURCES: p} for p in placements],
                                  f"no device attribute value of the pod group's constraint has room for "
                                  f"minCount ({min_count})")

        result = place()
        nominations: dict[str, str] | None = None
        if result.status.code == Code.UNSCHEDULABLE:
            nominations = self._preempt_for_group(group_obj, instance, pending, result, place)
        self._submit_group(group, group_obj, pending, result, nominations)

    def _preempt_for_group(self, group_obj: dict[str, Any], instance: PodGroupInstance,
                           pending: list[QueuedPodInfo], result: GroupResult,
                           place: Callable[[], GroupResult]) -> dict[str, str] | None:
        """Workload-aware preemption after a rejected cycle: the members' nominated nodes when
        victims are being evicted for them (None otherwise); its word is added to the group's."""
        members = [info.pod for info in pending]
        priority = group_priority(group_obj, instance)
        if priority is None:   # a v1alpha1 Workload: its pods carry the priority
            priority = int((members[0].get("spec") or {}).get("priority") or 0)

        def simulate() -> tuple[Status, dict[str, str], Callable[[], None]]:
            attempt = place()
            placed = {m.info.uid: m.node for m in attempt.members if m.node is not None}
            return attempt.status, placed if attempt.status.is_success else {}, attempt.revert

        status, placed = self._preemption.preempt_group("podgroup/" + instance.key, members, priority,
                                                        group_obj["metadata"].get("uid", ""), simulate)
        if status.code == Code.ERROR:
            result.status = status
            return None
        if status.message:
            result.status = Status(result.status.code, (*result.status.reasons, status.message), result.status.plugin)
        return placed if status.is_success else None

    def schedule_member(self, info: QueuedPodInfo, placement: dict[str, Any]) -> MemberResult:
        """Filter and score one member without PostFilter (:class:`~podgroup_cycle.MemberScheduler`)."""
        state = CycleState(placement)
        result = self._schedule_pod(state, info.pod, post_filter=False)
        return MemberResult(info, state, result.node, result.status, result.message, result.rejected_by)

    def assume_member(self, member: MemberResult) -> Callable[[], None] | Status:
        """Assume and reserve one placed member; the revert closure, or why Reserve failed."""
        pod, node_name, state = member.info.pod, member.node, member.state
        assert node_name is not None
        self.nodes.assume_pod(pod, node_name)
        status = self.framework.run_reserve(state, pod, node_name)
        if not status.is_success:
            self._revert(state, pod, node_name)
            message = _plugin_message(status, "Reserve" if status.code == Code.ERROR else "")
            return Status(status.code, (message,), status.plugin)
        return lambda: self._revert(state, pod, node_name)

    def _submit_group(self, group: QueuedGroupInfo, group_obj: dict[str, Any], pending: list[QueuedPodInfo],
                      result: GroupResult, nominations: dict[str, str] | None = None) -> None:
        """``submitPodGroupAlgorithmResult``: bind the placed members of a successful group,
        explain every other member, set the group's condition and requeue what is left.

        ``nominations`` (waiting on preemption) are the members' nominated nodes; a rejected
        group's members otherwise lose theirs."""
        status = result.status
        by_uid = {m.info.uid: m for m in result.members}
        failed: list[QueuedPodInfo] = []
        rejected_by: set[str] = set()
        for info in pending:
            member = by_uid.get(info.uid)
            if status.is_success and member is not None and member.fits:
                assert member.node is not None
                self._start_binding(info, member.state, member.node)
                continue
            failed.append(info)
            if status.code == Code.ERROR:
                own = member is not None and member.status.code == Code.ERROR
                self._report(info, REASON_SCHEDULER_ERROR, member.message if own and member else status.message, "")
                continue
            if member is None or member.fits:
                rejected_by.update({status.plugin} - {""})
            else:
                rejected_by.update(member.rejected_by)
            nominated = "" if nominations is None else nominations.get(info.uid, "")
            self._report(info, REASON_UNSCHEDULABLE, member_message(result, member) if member else status.message,
                         None if status.is_success else nominated)
        if nominations is not None:
            rejected_by.add(DEFAULT_PREEMPTION)   # the victims going away is what it waits for
        if status.is_success:
            self._group_status.set(group.instance, group_obj, "True", REASON_SCHEDULED, "")
        else:
            reason = REASON_SCHEDULER_ERROR if status.code == Code.ERROR else REASON_UNSCHEDULABLE
            self._group_status.set(group.instance, group_obj, "False", reason, status.message)
        self.queue.requeue_group(group, failed, () if status.code == Code.ERROR else rejected_by)

    def _find_node(self, state: CycleState, pod: dict[str, Any], nodes: list[NodeInfo]
                   ) -> tuple[str | None, NodeStatuses, Status | None]:
        """(best feasible node, rejections per node, error): :meth:`NodeSearch.find`."""
        return self._search.find(self.framework, state, pod, nodes)

    # -- binding cycle -----------------------------------------------------------------------------
    async def _binding_cycle(self, info: QueuedPodInfo, state: CycleState, node_name: str) -> None:
        pod = info.pod
        try:
            status = await self.framework.wait_on_permit(pod)
            stage = "Permit"
            if status.is_success:
                status, stage = await self.framework.run_pre_bind(state, pod, node_name), "PreBind"
            if status.is_success:
                status, stage = await self.framework.run_bind(state, pod, node_name), "Bind"
        except Exception as exc:   # a bug or an unexpected I/O error: roll back, retry later
            log.exception("binding %s failed", info.uid)
            status, stage = Status(Code.ERROR, (str(exc),)), "Bind"
        if status.is_success:
            self._recorder.event(as_pod(pod), NORMAL, "Scheduled",
                                 f"Successfully assigned {object_key(pod)} to {node_name}", action="Binding")
            self.queue.done(info.uid)
            return
        self._revert(state, pod, node_name)
        self._fail(info, status, _plugin_message(status, stage if status.code == Code.ERROR else ""),
                   _rejected_by(status))

    # -- failures ----------------------------------------------------------------------------------
    def _fail(self, info: QueuedPodInfo, status: Status, message: str,
              rejected_by: frozenset[str] = frozenset(), *, nominated: str | None = None) -> None:
        self.queue.add_unschedulable(info, rejected_by)
        self._report(info, REASON_UNSCHEDULABLE if status.is_rejected else REASON_SCHEDULER_ERROR, message,
                     nominated)

    def _report(self, info: QueuedPodInfo, reason: str, message: str, nominated: str | None = None) -> None:
        """``FailedScheduling`` Event and ``PodScheduled=False`` on the pod; ``nominated`` sets
        (a node) or clears ("") ``status.nominatedNodeName``, None keeps it."""
        pod = as_pod(info.pod)
        if nominated is not None:
            if nominated:
                self.nominator.nominate(pod, nominated)
            else:
                self.nominator.remove(info.uid)
        # The note is cut to the Event's limit; the pod's condition keeps the whole message.
        self._recorder.event(pod, WARNING, "FailedScheduling", truncated_note(message), action="Scheduling")
        self._explain(pod, reason, message, nominated)

    def _explain(self, pod: dict[str, Any], reason: str, message: str, nominated: str | None = None) -> None:
        """Set ``PodScheduled=False`` with ``reason`` and ``message`` (and the nomination, when
        given) unless the pod already says so."""
        uid = pod["metadata"]["uid"]
        status = pod.get("status") or {}
        current = next((c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None)
        if nominated == (status.get("nominatedNodeName") or ""):
            nominated = None   # nothing to change
        wanted = (reason, message, nominated)
        if nominated is None and current and \
                (current.get("status"), current.get("reason"), current.get("message")) == ("False", reason, message):
            self._explained.pop(uid, None)
            return
        if self._explained.get(uid) == wanted:
            return   # sent already; the informer has not shown it yet
        self._explained[uid] = wanted
        self._spawn(self._write_condition(pod, reason, message, nominated))

    async def _write_condition(self, pod: dict[str, Any], reason: str, message: str, nominated: str | None) -> None:
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                     "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
        meta = pod["metadata"]
        status: dict[str, Any] = {"conditions": [condition]}
        if nominated is not None:
            status["nominatedNodeName"] = nominated or None   # null clears it
        try:
            await self._api.patch(PODS, meta.get("namespace", ""), meta["name"],
                                  {"metadata": {"uid": meta["uid"]}, "status": status},
                                  patch_type="strategic", subresource="status")
        except NotFound:
            pass   # deleted meanwhile
        except (StatusError, *TRANSPORT_ERRORS) as exc:
            # Only an explanation, written again on the pod's next failure: no need to retry.
            self._explained.pop(meta["uid"], None)
            log.warning("cannot update PodScheduled of %s/%s: %s", meta.get("namespace"), meta["name"], exc)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._binding_tasks.add(task)
        task.add_done_callback(self._binding_tasks.discard)


def _rejected_by(status: Status) -> frozenset[str]:
    return frozenset({status.plugin}) if status.is_rejected and status.plugin else frozenset()


def _plugin_message(status: Status, stage: str) -> str:
    """Error texts as upstream wraps them (``running "X" filter plugin: ...``); rejections as is."""
    if not stage or not status.plugin:
        return status.message
    if stage == "filter":
        return f'running "{status.plugin}" filter plugin: {status.message}'
    return f'running {stage} plugin "{status.plugin}": {status.message}'
