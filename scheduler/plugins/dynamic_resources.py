"""DynamicResources: ResourceClaims must exist, be allocatable on the node, and get allocated + reserved.

Flow (``plugins/dynamicresources/dynamicresources.go``):

- PreEnqueue: every claim the pod references exists (template claims: the name comes from
  ``pod.status.resourceClaimStatuses``, written by the ResourceClaim controller) and is not being
  deleted.  Otherwise the pod is parked until a claim or pod event arrives.
- PreFilter: allocated claims contribute their ``allocation.nodeSelector``; unallocated ones
  need their device classes and one allocator for the cycle (allocated state from the assume
  cache, which already counts in-flight allocations).
- Filter: node selector of allocated claims; ``Allocator.allocate`` for the others, result kept
  per node for Reserve.
- Reserve: the chosen node's allocations become *pending* in the assume cache: no other pod
  gets those devices, and a pod sharing the claim waits until it is written.
- PreBind (binding task): add the ``delete-protection`` finalizer, then write
  ``status.allocation`` + ``status.reservedFor`` through the status subresource, retrying on
  conflicts with a fresh object.  PodGroup claims (KEP-5729, gate DRAWorkloadResourceClaims)
  are reserved for the group instead of the pod.  A write that fails without a clear answer may
  have been committed: the allocation stays pending (its devices in use) while the claim is
  re-read and, unless it shows the write, written again (``writes.write_until_known``).
  Upstream drops the in-flight allocation on any failed write; a lost answer then frees devices
  a committed allocation holds until the informer catches up.
- Unreserve: drop pending allocations, restore the cache, remove the pod's reservation.
- Pod groups: a claim whose pending allocation was chosen for a pod of the same group instance
  is usable by the others as if allocated (the pod-group cycle places every member before
  anything is written, so making them wait for the write would fail the group); their PreBind
  waits until that member's write landed, then only adds its reservation.
- Group-level constraint (fakeapi's draft extension, v1alpha1): the member claims an entry
  with ``constraints`` covers get each ``matchAttribute`` as a constraint spanning them, pinned
  to the value the instance's allocated claims (pending ones included) already hold.  With no
  value held, a pod-group cycle tries the candidates :meth:`DynamicResources.group_placements`
  lists, one per attempt, through the cycle state's ``placement``; a basic group's first member
  picks first-fit.
- PostFilter: an allocated claim that kept the pod off every node and is reserved by nobody
  gets deallocated so the next attempt can allocate it elsewhere.
- Queueing hints (which events may help a rejected pod): :mod:`.dynamic_resources_hints`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fakeapi.scheduler.assume_cache import ClaimAssumeCache
from fakeapi.scheduler.client import RESOURCE_CLAIMS, ApiClient, outcome_unknown, trim_managed_fields
from fakeapi.scheduler.dra.allocator import AllocationError, Allocator, DeviceIndex, GroupMatch, NodeAllocationError
from fakeapi.scheduler.dra.group_values import (
    TypedValue,
    candidate_values,
    constraint_reason,
    device_values,
    devices_per_claim,
)
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Status,
    error,
    sign_fragment,
    skip,
    unresolvable,
    unschedulable,
)
from fakeapi.scheduler.plugins import dynamic_resources_hints as hints
from fakeapi.scheduler.rules.claims import (
    can_be_reserved,
    group_consumer_ref,
    is_allocated,
    is_owned_by,
    is_reserved_for,
    is_written,
    pod_claim_name,
    pod_consumer_ref,
    reserved_for,
)
from fakeapi.scheduler.rules.devicetaints import NO_EXECUTE, SourcedTaint, claim_eviction
from fakeapi.scheduler.rules.keys import DeviceID, object_key
from fakeapi.scheduler.rules.podgroups import (
    GroupDeviceConstraint,
    GroupLookup,
    PodGroupInstance,
    group_device_constraints,
    group_resource_claims,
    matching_group_claim,
    pod_group_instance,
)
from fakeapi.scheduler.snapshot import NodeInfo
from fakeapi.scheduler.writes import write_until_known

from fakeapi.errors import Conflict, StatusError
from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER
from fakeapi.machinery.nodeselector import node_selector_matches

log = logging.getLogger(__name__)

NAME = "DynamicResources"
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_IN_USE = "resourceclaim in use"
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"
_SIBLING_WRITE_TIMEOUT = 30.0   # bound on waiting for a group member's allocation write
_NO_FIT_ENTRIES = 100_000         # (claims' shape, node) pairs remembered to fit nowhere


_NO_FIT = unresolvable(NAME, ERR_CANNOT_ALLOCATE)   # Status is immutable: one for every remembered refusal


# --- pure helpers ------------------------------------------------------------------------------

def _being_allocated(claim: dict[str, Any]) -> Status:
    return unresolvable(NAME, f"resource claim {object_key(claim)} is in the process of being allocated")


def unsupported_request(claim: dict[str, Any], request: dict[str, Any], prioritized_list: bool,
                        class_exists: Callable[[str], bool]) -> str:
    """Why PreFilter cannot allocate ``request`` now (missing class, disabled feature); '' if fine."""
    if request.get("exactly") is not None:
        cls = request["exactly"].get("deviceClassName", "")
        return "" if class_exists(cls) else f"request {request.get('name')}: device class {cls} does not exist"
    subrequests = request.get("firstAvailable") or ()
    if not subrequests:
        return f"resource claim {object_key(claim)}, request {request.get('name')}: unsupported request type"
    if not prioritized_list:
        return (f"resource claim {object_key(claim)}, request {request.get('name')}: has subrequests, "
                "but the DRAPrioritizedList feature is disabled")
    for sub in subrequests:
        cls = sub.get("deviceClassName", "")
        if not class_exists(cls):
            return f"request {request.get('name')}/{sub.get('name')}: device class {cls} does not exist"
    return ""


def _covered_claim_names(pod: dict[str, Any], constraint: GroupDeviceConstraint) -> list[str]:
    """Names of the pod's claims a group-level constraint covers (those generated so far)."""
    names = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        if constraint.covers(pod_claim):
            try:
                name, _ = pod_claim_name(pod, pod_claim)
            except ValueError:   # not generated yet, or an unusable entry: nothing allocated
                continue
            if name:
                names.append(name)
    return names


# --- per-attempt state -------------------------------------------------------------------------

@dataclass
class _ClaimInfo:
    pod_claim: dict[str, Any]          # the pod's spec.resourceClaims[] entry
    claim: dict[str, Any]
    consumer: dict[str, Any]           # the reservedFor entry this pod needs
    reserved: bool                     # already reserved for that consumer
    allocation: dict[str, Any] | None = None   # chosen at Reserve, written at PreBind
    written: bool = False              # PreBind added our reservation
    sibling: _GroupPending | None = None       # allocation pending for a pod of our group


@dataclass
class _GroupPending:
    """A pending allocation chosen for a pod of a group; ``done`` is set once written or dropped."""

    instance: PodGroupInstance
    claim: dict[str, Any]              # the claim with the chosen allocation
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class _State:
    infos: list[_ClaimInfo]
    instance: PodGroupInstance | None
    group: dict[str, Any] | None
    to_allocate: list[int] = field(default_factory=list)
    group_matches: list[GroupMatch] = field(default_factory=list)
    group_reason: str = ""              # the rejection naming the group's attributes
    allocator: Allocator | None = None
    shape: bytes | None = None          # what the allocator reads of the claims (None: group constraints)
    node_allocations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)


# --- the plugin --------------------------------------------------------------------------------

class DynamicResources:
    name = NAME
    # Filter is an allocator search per node and there is no Score: run it last, lazily.
    deferred = True

    def __init__(self, api: ApiClient, claims: ClaimAssumeCache, index: DeviceIndex,
                 class_exists: Callable[[str], bool], *, groups: GroupLookup | None = None,
                 members: Callable[[PodGroupInstance], list[dict[str, Any]]] | None = None,
                 prioritized_list: bool = True, filter_timeout: float = 10.0) -> None:
        """``groups`` finds a pod's group object, ``members`` its live pods (both None: gate off)."""
        self._api = api
        self._members = members
        self._claims = claims
        self._index = index
        self._class_exists = class_exists
        self._groups = groups
        self._prioritized_list = prioritized_list
        self._filter_timeout = filter_timeout
        self._tasks: set[asyncio.Task[None]] = set()
        self._group_pending: dict[str, _GroupPending] = {}   # claim uid -> pending for a group member
        # (claims' shape, node) -> the inputs the allocator found no devices with; while they are
        # unchanged, claims of that shape still fit nowhere on the node.  A pod that fits on no
        # node filters every node with the allocator: at 5,000 nodes 100 ms a pod, for every pod
        # a freed device wakes.
        self._no_fit: dict[tuple[bytes, str], tuple[int, int, tuple[int, ...]]] = {}

    # -- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ALL), hints.claim_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, add_update), hints.has_claims_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, add_update), hints.has_claims_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_TAINT_RULE, ActionType.ALL),
                                 hints.has_claims_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, add_update), hints.node_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
                                 hints.pod_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, add_update), hints.group_hint),
        ]

    # -- claims of a pod --------------------------------------------------------------------------
    def _group(self, pod: dict[str, Any]) -> tuple[PodGroupInstance | None, dict[str, Any] | None]:
        if self._groups is None:
            return None, None
        instance = pod_group_instance(pod)
        return instance, (self._groups(instance) if instance is not None else None)

    def _pod_claims(self, pod: dict[str, Any]) -> tuple[list[_ClaimInfo], PodGroupInstance | None,
                                                        dict[str, Any] | None]:
        """The pod's claims with their consumers, its group instance and object; raises
        ValueError with the user-facing reason."""
        instance, group = self._group(pod)
        group_claims = group_resource_claims(group, instance) if group is not None and instance else []
        pod_consumer = pod_consumer_ref(pod)
        namespace = pod["metadata"].get("namespace", "")
        infos = []
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            name, check_owner = pod_claim_name(pod, pod_claim)
            if name is None:
                continue
            claim = self._claims.get(namespace, name)
            if claim is None:
                raise ValueError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim["metadata"].get("deletionTimestamp"):
                raise ValueError(f'resourceclaim "{name}" is being deleted')
            is_group_claim = bool(group_claims) and matching_group_claim(pod_claim, group_claims) is not None
            if check_owner and not is_group_claim and not is_owned_by(claim, pod):
                raise ValueError(f"ResourceClaim {namespace}/{name} was not created for pod "
                                 f"{object_key(pod)} (pod is not owner)")
            consumer = group_consumer_ref(group, instance) if is_group_claim and group and instance else pod_consumer
            infos.append(_ClaimInfo(pod_claim, claim, consumer, is_reserved_for(claim, consumer, instance)))
        return infos, instance, group

    # -- extension points -----------------------------------------------------------------------
    def pre_enqueue(self, pod: dict[str, Any]) -> Status:
        if not (pod.get("spec") or {}).get("resourceClaims"):
            return SUCCESS
        try:
            self._pod_claims(pod)
        except ValueError as exc:
            return unresolvable(NAME, str(exc))
        return SUCCESS

    def pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Sequence[NodeInfo]) -> Status:
        if not (pod.get("spec") or {}).get("resourceClaims"):
            return skip(NAME)
        try:
            infos, instance, group = self._pod_claims(pod)
        except ValueError as exc:
            return unresolvable(NAME, str(exc))
        if not infos:
            return skip(NAME)
        st = _State(infos, instance, group)
        state.write(NAME, st)   # before any rejection: PostFilter looks at these claims too
        for index, info in enumerate(infos):
            claim = info.claim
            if is_allocated(claim):
                if not info.reserved and self._index.features.device_taints and self._being_evicted(claim):
                    # KEP-5055: no new pod reserves a claim whose pods are being evicted.
                    return unresolvable(NAME, f"resourceclaim {object_key(claim)}: an allocated device has a "
                                              "NoExecute taint that the claim does not tolerate")
                continue
            if self._claims.has_pending(claim["metadata"]["uid"]):
                shared = self._group_pending.get(claim["metadata"]["uid"])
                if shared is None or shared.instance != instance:
                    return _being_allocated(claim)
                info.claim, info.sibling = shared.claim, shared
                continue
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                reason = unsupported_request(claim, request, self._prioritized_list, self._class_exists)
                if reason:
                    return unresolvable(NAME, reason)
            st.to_allocate.append(index)
        if st.to_allocate:
            st.allocator = Allocator(self._index, self._claims.allocated,
                                     deadline=time.monotonic() + self._filter_timeout)
            self._add_group_matches(st, state.placement.get(NAME) or {})
            if not st.group_matches:
                st.shape = sign_fragment([(st.infos[i].claim.get("spec") or {}) for i in st.to_allocate])
        return SUCCESS

    def _being_evicted(self, claim: dict[str, Any]) -> bool:
        """Whether the device-taint-eviction controller evicts (now or later) the pods using
        ``claim``: an allocated device has a NoExecute taint no NoExecute toleration of its
        result tolerates for ever."""
        def no_execute(device_id: DeviceID) -> list[SourcedTaint]:
            device = self._index.device(device_id)
            taints = self._index.taints(device) if device is not None else ()
            return [(t, None) for t in taints if t.get("effect") == NO_EXECUTE]
        return claim_eviction(claim, no_execute) is not None

    def attempt_key(self, state: CycleState) -> bytes | None:
        """What Filter reads of this cycle's pod, for remembering a whole attempt (see
        ``NodeSearch.find``): the shape of its claims when the allocator decides alone for
        every one of them (``b""`` when the plugin is skipped).  Beyond the key, Filter reads only
        the node, the device index and the allocations in the node's pools.  None when it reads
        more (allocated claims' node selectors, a group's constraints or pending allocation)."""
        if NAME in state.skip_filter:
            return b""
        st: _State | None = state.read(NAME)
        if st is None or st.shape is None or len(st.to_allocate) != len(st.infos):
            return None
        return st.shape

    # -- the group-level constraint (fakeapi's draft extension) -----------------------------------
    def _constraints(self, instance: PodGroupInstance | None, group: dict[str, Any] | None
                     ) -> list[GroupDeviceConstraint]:
        if instance is None or group is None or self._members is None:
            return []
        return group_device_constraints(group, instance)

    def _add_group_matches(self, st: _State, placement: dict[tuple[int, str], TypedValue]) -> None:
        """Constraints spanning the claims to allocate that a group-level constraint covers."""
        values: dict[str, TypedValue | None] = {}
        attributes: list[str] = []
        for k, constraint in enumerate(self._constraints(st.instance, st.group)):
            positions = frozenset(j for j, i in enumerate(st.to_allocate) if constraint.covers(st.infos[i].pod_claim))
            if not positions:
                continue
            held = self._held_values(st.instance, constraint)   # type: ignore[arg-type]
            for attribute in constraint.attributes:
                value = held.get(attribute) or placement.get((k, attribute))
                st.group_matches.append(GroupMatch(attribute, positions, value))
                values[attribute] = value
                attributes.append(attribute)
        if attributes:
            st.group_reason = constraint_reason(attributes, values)

    def _held_values(self, instance: PodGroupInstance, constraint: GroupDeviceConstraint) -> dict[str, TypedValue]:
        """The values the instance's allocated (or being allocated) constrained claims hold."""
        assert self._members is not None
        held: dict[str, TypedValue] = {}
        for member in self._members(instance):
            namespace = member["metadata"].get("namespace", "")
            for name in _covered_claim_names(member, constraint):
                allocation = self._claims.current_allocation(namespace, name)
                for result in ((allocation or {}).get("devices") or {}).get("results") or ():
                    device = self._index.device((result.get("driver", ""), result.get("pool", ""),
                                                 result.get("device", "")))
                    values = device_values(device, constraint.attributes) if device is not None else None
                    if values is not None:
                        for attribute, value in zip(constraint.attributes, values, strict=True):
                            held.setdefault(attribute, value)
                if len(held) == len(constraint.attributes):
                    return held
        return held

    def group_placements(self, instance: PodGroupInstance, group: dict[str, Any], members: list[dict[str, Any]],
                         needed: int) -> list[dict[tuple[int, str], TypedValue]] | None:
        """What a pod-group cycle should try, one attempt each: a value for every attribute of
        the group's constraints, for ``needed`` more ``members`` to place.  None when there is
        nothing to choose (no constraint, or every value is held already)."""
        constraints = self._constraints(instance, group)
        options: list[list[dict[tuple[int, str], TypedValue]]] = []
        for k, constraint in enumerate(constraints):
            if self._held_values(instance, constraint):
                continue
            per_member = self._devices_per_member(members, constraint)
            if not per_member:
                continue
            found = candidate_values(self._index.devices(), constraint.attributes,
                                     free=lambda d: not self._claims.allocated.is_dedicated(d.id),
                                     needed=per_member * needed)
            options.append([{(k, a): v for a, v in zip(constraint.attributes, values, strict=True)}
                            for values in found])
        if not options:
            return None
        return [{key: value for part in combination for key, value in part.items()}
                for combination in itertools.product(*options)]

    def _devices_per_member(self, members: list[dict[str, Any]], constraint: GroupDeviceConstraint) -> int:
        """Devices one member needs under the constraint, judged by the first member whose claims exist."""
        for member in members:
            namespace = member["metadata"].get("namespace", "")
            claims = [self._claims.get(namespace, name) for name in _covered_claim_names(member, constraint)]
            if claims and all(claims):
                return sum(devices_per_claim(claim) for claim in claims if claim)
        return 0

    def filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        st: _State = state.read(NAME)
        node = node_info.node or {}
        for index, info in enumerate(st.infos):
            status = (info.claim.get("status") or {})
            allocation = status.get("allocation")
            if not allocation:
                continue
            if not info.reserved and not can_be_reserved(info.claim):
                return unresolvable(NAME, ERR_IN_USE)
            selector = allocation.get("nodeSelector")
            if selector and not node_selector_matches(selector, node):
                st.unavailable.add(index)
                return unresolvable(NAME, ERR_NOT_AVAILABLE)
        if st.allocator is None:
            return SUCCESS
        key = inputs = None
        if st.shape is not None:
            key = (st.shape, node_info.name)
            allocated = self._claims.allocated
            inputs = (self._index.generation, node_info.generation,
                      tuple(allocated.pool_generation(pool.id) for pool in self._index.pools_for_node(node)))
            if self._no_fit.get(key) == inputs:
                return _NO_FIT
        try:
            results = st.allocator.allocate(node, [st.infos[i].claim for i in st.to_allocate], st.group_matches)
        except NodeAllocationError as exc:
            return unresolvable(NAME, str(exc))
        except AllocationError as exc:
            return error(NAME, str(exc))
        if results is None:
            if key is not None and inputs is not None:
                if len(self._no_fit) > _NO_FIT_ENTRIES:
                    self._no_fit.clear()
                self._no_fit[key] = inputs
            return unresolvable(NAME, st.group_reason or ERR_CANNOT_ALLOCATE)
        st.node_allocations[node_info.name] = results
        return SUCCESS

    def post_filter(self, state: CycleState, pod: dict[str, Any], statuses: dict[str, Status]) -> Status:
        st: _State | None = state.read(NAME)
        if st is None:
            return Status(Code.UNSCHEDULABLE)
        for index in sorted(st.unavailable):
            claim = st.infos[index].claim
            reserved = reserved_for(claim)
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod["metadata"]["uid"]):
                self._spawn(self._deallocate(claim))
                return unschedulable(NAME, DEALLOCATED)
        return unschedulable(NAME, NO_CLAIMS_TO_DEALLOCATE)

    def reserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        st: _State | None = state.read(NAME)
        if st is None or not st.to_allocate:
            return SUCCESS
        for index in st.to_allocate:
            claim = st.infos[index].claim
            if self._claims.has_pending(claim["metadata"]["uid"]):
                return _being_allocated(claim)
        allocations = st.node_allocations.get(node_name)
        if allocations is None:
            return error(NAME, f"internal error: no allocation cached for node {node_name}")
        for index, allocation in zip(st.to_allocate, allocations, strict=True):
            info = st.infos[index]
            info.allocation = allocation
            claim = info.claim
            pending = {**claim, "status": {**(claim.get("status") or {}), "allocation": allocation}}
            self._claims.signal_pending(pending)
            if st.instance is not None:
                self._group_pending[claim["metadata"]["uid"]] = _GroupPending(st.instance, pending)
        return SUCCESS

    def _drop_pending(self, uid: str) -> bool:
        """Forget a pending allocation (written or rolled back) and wake group members waiting on it."""
        shared = self._group_pending.pop(uid, None)
        if shared is not None:
            shared.done.set()
        return self._claims.remove_pending(uid)

    def unreserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> None:
        st: _State | None = state.read(NAME)
        if st is None:
            return
        for info in st.infos:
            meta = info.claim["metadata"]
            if info.allocation is not None and self._drop_pending(meta["uid"]):
                self._claims.restore(meta.get("namespace", ""), meta["name"])
            if info.written and info.consumer.get("resource") == "pods":
                self._spawn(self._remove_reservation(info.claim, pod["metadata"]["uid"]))

    async def pre_bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        st: _State | None = state.read(NAME)
        if st is None:
            return SUCCESS
        for info in st.infos:
            if info.sibling is not None:
                status = await self._await_sibling(info, st.instance)
                if status is not None:
                    return status
            if info.reserved:
                continue
            try:
                await self._bind_claim(info)
            except (StatusError, ValueError) as exc:
                return error(NAME, str(exc))
        return SUCCESS

    async def _await_sibling(self, info: _ClaimInfo, instance: PodGroupInstance | None) -> Status | None:
        """Wait for the group member allocating ``info``'s claim; None once it is allocated."""
        assert info.sibling is not None
        meta = info.claim["metadata"]
        try:
            async with asyncio.timeout(_SIBLING_WRITE_TIMEOUT):
                await info.sibling.done.wait()
        except TimeoutError:
            return error(NAME, f"claim {object_key(info.claim)} was not allocated by its pod group in time")
        claim = self._claims.get(meta.get("namespace", ""), meta["name"])
        if claim is None or not is_allocated(claim):
            return error(NAME, f"claim {object_key(info.claim)} was not allocated by its pod group")
        info.claim = claim
        info.reserved = is_reserved_for(claim, info.consumer, instance)
        return None

    # -- API writes -----------------------------------------------------------------------------
    async def _bind_claim(self, info: _ClaimInfo) -> None:
        """Write ``info``'s allocation (if any) and reservation; keep the allocation pending until
        the server's answer says whether it was written (a lost answer must not free the devices)."""
        claim, allocation, consumer = info.claim, info.allocation, info.consumer
        meta = claim["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta["uid"]

        async def write() -> dict[str, Any]:
            return await self._write_claim(claim, allocation, consumer)

        async def landed() -> dict[str, Any] | None:
            nonlocal claim
            claim = await self._api.get(RESOURCE_CLAIMS, namespace, name)
            if claim["metadata"].get("uid") != uid:
                raise ValueError(f"claim {object_key(claim)} got deleted in the meantime")
            # Ours, or a group member reserved it for the group meanwhile.
            return claim if is_written(claim, allocation, consumer) else None

        written = None
        try:
            written = await write_until_known(write, landed, what=f"reserve claim {namespace}/{name}")
        finally:
            if written is not None:
                self._claims.assume(written)
            if allocation is not None:
                self._drop_pending(uid)
        info.written = True
        info.claim = written

    async def _write_claim(self, claim: dict[str, Any], allocation: dict[str, Any] | None,
                           consumer: dict[str, Any]) -> dict[str, Any]:
        """One attempt; a 409 or a failure of unknown outcome is raised as is, for a re-read."""
        meta = claim["metadata"]
        namespace, ref = meta.get("namespace", ""), object_key(claim)
        if meta.get("deletionTimestamp"):
            raise ValueError(f"claim {ref} got deleted in the meantime")
        status = dict(claim.get("status") or {})
        if allocation is not None:
            if status.get("allocation"):
                raise ValueError(f"claim {ref} got allocated elsewhere in the meantime")
            finalizers = meta.get("finalizers") or []
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                claim = {**claim, "metadata": {**meta, "finalizers": [*finalizers, DELETE_PROTECTION_FINALIZER]}}
                try:
                    # Sent on in the status write below, which leaves the stored managedFields as they are.
                    claim = trim_managed_fields(await self._api.update(RESOURCE_CLAIMS, namespace, claim))
                except StatusError as exc:
                    if isinstance(exc, Conflict) or outcome_unknown(exc):
                        raise
                    raise ValueError(f"add finalizer to claim {ref}: {exc}") from exc
            status = dict(claim.get("status") or {})
            status["allocation"] = allocation
        status["reservedFor"] = [*(status.get("reservedFor") or ()), consumer]
        try:
            # Kept in the assume cache beside the informer's objects, trimmed as those are.
            return trim_managed_fields(await self._api.update(RESOURCE_CLAIMS, namespace, {**claim, "status": status},
                                                              subresource="status"))
        except StatusError as exc:
            if isinstance(exc, Conflict) or outcome_unknown(exc):
                raise
            what = "allocation and reservation" if allocation is not None else "reservation"
            raise ValueError(f"add {what} to claim {ref}: {exc}") from exc

    async def _remove_reservation(self, claim: dict[str, Any], pod_uid: str) -> None:
        meta = claim["metadata"]
        patch = {"metadata": {"uid": meta["uid"]},
                 "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]}}
        await self._api.patch(RESOURCE_CLAIMS, meta.get("namespace", ""), meta["name"], patch,
                              patch_type="strategic", subresource="status")

    async def _deallocate(self, claim: dict[str, Any]) -> None:
        status = {k: v for k, v in (claim.get("status") or {}).items() if k not in ("allocation", "reservedFor")}
        await self._api.update(RESOURCE_CLAIMS, claim["metadata"].get("namespace", ""),
                               {**claim, "status": status}, subresource="status")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("DynamicResources background write failed: %s", task.exception())
