"""The DRA structured-parameters allocator: first-fit depth-first search with undo.

Pure and synchronous.  One :class:`Allocator` serves one pod's scheduling attempt (the allocated
state it sees is a snapshot); :meth:`Allocator.allocate` is called once per candidate node.
Work that does not depend on the node (parsing claims, class lookups, CEL results) is done once
per Allocator or cached on the device records of the :class:`DeviceIndex`.

Search order follows upstream (``structured/internal/incubating``) so results are identical:
claims → requests → device slots; ``firstAvailable`` tries subrequests in order; ``All``
takes its pre-computed device list; ``ExactCount`` scans pools → slices → devices starting
after the previous pick of the same request (combinations, not permutations).  Per candidate,
cheap checks first: in use → selectors → counters → taints → constraints → capacity.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fakeapi.scheduler.dra import capacity
from fakeapi.scheduler.dra.constraints import Constraint, MatchAttribute, build_constraints
from fakeapi.scheduler.dra.counters import CounterSets, CounterTracker
from fakeapi.scheduler.dra.devices import Device, DriverEquals, driver_equality
from fakeapi.scheduler.dra.errors import AllocationError, NodeAllocationError
from fakeapi.scheduler.dra.features import Features
from fakeapi.scheduler.dra.index import DeviceIndex
from fakeapi.scheduler.dra.pools import Pool, PoolID, node_matches
from fakeapi.scheduler.dra.results import Picked, build_config, device_result, node_selector
from fakeapi.scheduler.dra.state import AllocatedState
from fakeapi.scheduler.dra.taints import taints_block
from fakeapi.scheduler.rules.keys import DeviceID, device_id_text

from fakeapi.machinery.cel import CelError, CompiledSelector, compile_selector
from fakeapi.machinery.resourcelimits import RESULTS_MAX

__all__ = ["AllocatedState", "AllocationError", "Allocator", "DeviceIndex", "Features", "GroupMatch",
           "NodeAllocationError"]

_DEADLINE_EVERY = 64  # search steps between clock reads


@dataclass(frozen=True)
class GroupMatch:
    """A ``matchAttribute`` across several of the claims being allocated (a pod group's, fakeapi's
    draft extension), optionally pinned to the typed value its other devices already have."""

    attribute: str
    claims: frozenset[int]  # positions in the ``claims`` passed to :meth:`Allocator.allocate`
    value: tuple[str, Any] | None = None


class _MaxSizeExceeded(Exception):
    """Internal signal: this branch cannot stay within 32 results (aggressive backtracking)."""


@dataclass(eq=False)
class _Request:
    """A request or subrequest, validated once per Allocator."""

    name: str
    parent: str  # "" unless a subrequest
    spec: dict[str, Any]
    error: AllocationError | None = None
    cls: dict[str, Any] | None = None
    class_selectors: tuple[str, ...] = ()
    selectors: tuple[str, ...] = ()
    all_mode: bool = False
    count: int = 0
    admin: bool = False
    tolerations: tuple[dict[str, Any], ...] = ()
    capacity_requests: dict[str, Any] | None = None
    # CEL verdict per device record (node-independent), shared by all nodes of this Allocator.
    selectable: dict[Device, bool | AllocationError] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass(eq=False)
class _Claim:
    claim: dict[str, Any]
    ref: str  # namespace/name, as klog.KObj prints it
    requests: list[list[_Request]]  # one entry per request: [exact] or its subrequests
    first_available: list[bool]
    error: AllocationError | None = None  # claim-level pre-pass error (before any request)
    constraint_specs: list[dict[str, Any]] = field(default_factory=list)


class Allocator:
    """Allocates devices for the claims of one pod, node by node."""

    def __init__(self, index: DeviceIndex, allocated: AllocatedState, *, deadline: float | None = None) -> None:
        self._index = index
        self._state = allocated
        self._features = index.features
        self._deadline = deadline
        self._claims: dict[int, _Claim] = {}
        self._compiled: dict[str, CompiledSelector | DriverEquals | CelError] = {}
        self._counters: dict[PoolID, CounterSets] = {}

    def allocate(self, node: dict[str, Any], claims: Sequence[dict[str, Any]],
                 group_matches: Sequence[GroupMatch] = ()) -> list[dict[str, Any]] | None:
        """One AllocationResult per claim, or None if the claims do not fit on ``node``.

        ``group_matches`` add constraints spanning claims, checked like a claim's own.

        Raises :class:`NodeAllocationError` when only this node is broken (invalid pools) and
        :class:`AllocationError` when the pod cannot be allocated anywhere.  Inputs are never
        mutated; the result is deterministic (upstream first-fit order).
        """
        prepared = [self._prepare(claim) for claim in claims]
        pools = self._index.pools_for_node(node)
        run = _Search(self, node, pools, prepared)
        run.prepass(group_matches)
        try:
            done = run.one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(pool.invalid for pool in pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return run.results()

    # -- per-Allocator caches ------------------------------------------------------------------

    def _prepare(self, claim: dict[str, Any]) -> _Claim:
        cached = self._claims.get(id(claim))
        if cached is None or cached.claim is not claim:
            cached = self._claims[id(claim)] = self._parse_claim(claim)
        return cached

    def _parse_claim(self, claim: dict[str, Any]) -> _Claim:
        meta = claim.get("metadata") or {}
        ref = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        devices = (claim.get("spec") or {}).get("devices") or {}
        parsed = _Claim(claim, ref, [], [], constraint_specs=list(devices.get("constraints") or ()))
        for request in devices.get("requests") or ():
            name = request.get("name", "")
            subs = request.get("firstAvailable") or ()
            if subs and not self._features.prioritized_list:
                parsed.error = parsed.error or AllocationError(
                    f"claim {ref}, request {name}: has subrequests, but the DRAPrioritizedList feature is disabled")
            if not self._features.consumable_capacity:
                exact = request.get("exactly") or {}
                offender = (f"request {name}" if exact.get("capacity") is not None else
                            next((f"subrequest {s.get('name', '')}" for s in subs if s.get("capacity") is not None),
                                 ""))
                if offender:
                    parsed.error = parsed.error or AllocationError(
                        f"claim {ref}, {offender}: has capacity requests, but the DRAConsumableCapacity "
                        "feature is disabled")
            if subs:
                parsed.requests.append([self._parse_request(ref, s, s.get("name", ""), name) for s in subs])
            else:
                parsed.requests.append([self._parse_request(ref, request.get("exactly") or {}, name, "")])
            parsed.first_available.append(bool(subs))
        return parsed

    def _parse_request(self, ref: str, spec: dict[str, Any], name: str, parent: str) -> _Request:
        req = _Request(name, parent, spec)
        for i, selector in enumerate(spec.get("selectors") or ()):
            if not (selector.get("cel") or {}).get("expression"):
                req.error = AllocationError(f"claim {ref}, request {name}, selector #{i}: "
                                            "CEL expression empty (unsupported selector type?)")
                return req
        req.selectors = tuple(s["cel"]["expression"] for s in spec.get("selectors") or ())
        req.admin = bool(spec.get("adminAccess")) and not parent
        if spec.get("adminAccess") is not None and not parent and not self._features.admin_access:
            req.error = AllocationError(f"claim {ref}, request {name}: admin access is requested, "
                                        "but the feature is disabled")
            return req
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            req.error = AllocationError(f"claim {ref}, request {name}: missing device class name "
                                        "(unsupported request type?)")
            return req
        req.cls = self._index.device_class(class_name)
        if req.cls is None:
            req.error = AllocationError(f"claim {ref}, request {name}: could not retrieve device class "
                                        f"{class_name}: deviceclass.resource.k8s.io \"{class_name}\" not found")
            return req
        req.class_selectors = tuple(((s.get("cel") or {}).get("expression") or "")
                                    for s in (req.cls.get("spec") or {}).get("selectors") or ())
        mode = spec.get("allocationMode") or "ExactCount"
        if mode not in ("ExactCount", "All"):
            req.error = AllocationError(f"claim {ref}, request {name}: unsupported count mode {mode}")
            return req
        req.all_mode = mode == "All"
        req.count = int(spec.get("count") or 1)
        req.tolerations = tuple(spec.get("tolerations") or ())
        req.capacity_requests = (spec.get("capacity") or {}).get("requests") or None
        return req

    def _compile(self, expression: str) -> CompiledSelector | DriverEquals | CelError:
        compiled = self._compiled.get(expression)
        if compiled is None:
            try:
                compiled = driver_equality(expression) or compile_selector(expression)
            except CelError as err:
                compiled = err
            self._compiled[expression] = compiled
        return compiled

    def cel_selectable(self, claim: _Claim, req: _Request, device: Device) -> bool:
        """Class selectors, then request selectors; cached per (request, device)."""
        verdict = req.selectable.get(device)
        if verdict is None:
            try:
                class_name = req.cls["metadata"]["name"] if req.cls else ""
                verdict = (self._selectors_match(f"class {class_name}", req.class_selectors, device)
                           and self._selectors_match(f"claim {claim.ref}", req.selectors, device))
            except AllocationError as err:
                verdict = err
            req.selectable[device] = verdict
        if isinstance(verdict, AllocationError):
            raise verdict
        return verdict

    def _selectors_match(self, owner: str, expressions: Sequence[str], device: Device) -> bool:
        for i, expression in enumerate(expressions):
            result = device.selector_results.get(expression)
            if result is None:
                compiled = self._compile(expression)
                if isinstance(compiled, CelError):
                    raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {compiled}")
                try:
                    result = compiled.evaluate(device.cel_env())
                except CelError as err:
                    result = err
                device.selector_results[expression] = result
            if isinstance(result, CelError):
                raise AllocationError(f"{owner}: selector #{i} on device {device_id_text(device.id)}: "
                                      f"CEL runtime error: {result}")
            if not result:
                return False
        return True


class _Search:
    """State of one ``allocate`` call: tentative picks and everything they consume."""

    def __init__(self, owner: Allocator, node: dict[str, Any], pools: list[Pool], claims: list[_Claim]) -> None:
        self.owner = owner
        self.node = node
        self.pools = pools
        self.claims = claims
        self.features = owner._features
        self.state = owner._state
        self.constraints: list[list[Constraint]] = []
        self.all_devices: dict[int, list[tuple[Pool, Device]]] = {}  # id(_Request) -> devices
        self.num_devices: dict[int, int] = {}
        self.allocating: dict[DeviceID, set[int]] = {}  # device -> claim indices
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.shares: dict[DeviceID, int] = {}  # tentative shared allocations per device
        self.counters = CounterTracker(owner._state, owner._counters)
        self.picks: list[list[Picked]] = [[] for _ in claims]
        self.selected: dict[tuple[int, int], int] = {}
        self.steps = 0

    # -- pre-pass --------------------------------------------------------------------------------

    def prepass(self, group_matches: Sequence[GroupMatch] = ()) -> None:
        """Validate requests, enumerate ``All`` requests, check the 32-device limit, and set up
        the constraints of each claim (its own, then the group's that span it)."""
        for claim in self.claims:
            if claim.error:
                raise claim.error
            minimum = 0
            for subs in claim.requests:
                counts = []
                for req in subs:
                    if req.error:
                        raise req.error
                    if req.all_mode:
                        self._enumerate_all(claim, req)
                        counts.append(self.num_devices[id(req)])
                    else:
                        counts.append(req.count)
                minimum += min(counts)
            if minimum > RESULTS_MAX:
                raise AllocationError(f"claim {claim.ref}: number of requested devices {minimum} exceeds "
                                      f"the claim limit of {RESULTS_MAX}")
            self.constraints.append(build_constraints(claim.ref, claim.constraint_specs))
        for match in group_matches:
            spanning = MatchAttribute(match.attribute, (), match.value)
            for c in match.claims:
                self.constraints[c].append(spanning)

    def _enumerate_all(self, claim: _Claim, req: _Request) -> None:
        found: list[tuple[Pool, Device]] = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(f"claim {claim.ref}, request {req.name}: asks for all devices, but "
                                      f"resource pool {pool} is currently being updated")
            if pool.invalid:
                raise AllocationError(f"claim {claim.ref}, request {req.name}: asks for all devices, but "
                                      f"resource pool {pool} is currently invalid")
            for slice_ in pool.slices:
                for device in slice_.devices:
                    if not self.selectable(claim, req, device):
                        continue
                    if self.features.consumable_capacity and self._consumption(req, device) is None:
                        continue
                    found.append((pool, device))
        self.all_devices[id(req)] = found
        self.num_devices[id(req)] = len(found)

    # -- search ----------------------------------------------------------------------------------

    def one(self, c: int, r: int, s: int, d: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        """Allocate device slot ``d`` of (sub)request ``r``/``s`` of claim ``c`` and everything after."""
        self.steps += 1
        if self.owner._deadline is not None and self.steps % _DEADLINE_EVERY == 1 \
                and time.monotonic() > self.owner._deadline:
            raise AllocationError("filter operation aborted: allocation timed out (context deadline exceeded)")
        if c >= len(self.claims):
            return True
        claim = self.claims[c]
        if r >= len(claim.requests):
            try:
                return self.one(c + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False  # a later claim may fit with other choices here; not fatal
        if claim.first_available[r] and not in_sub:
            return self._first_available(c, r)
        req = claim.requests[r][s]
        wanted = self.num_devices[id(req)] if req.all_mode else req.count
        if req.all_mode and not wanted:
            return False
        if d >= wanted:
            return self.one(c, r + 1, 0, 0, False, (0, 0, 0))
        if len(self.picks[c]) + wanted - d > RESULTS_MAX:
            raise _MaxSizeExceeded
        if req.all_mode:
            pool, device = self.all_devices[id(req)][d]
            return self._try(c, r, s, d, in_sub, req, pool, device, True, (0, 0, 0))
        for p in range(start[0], len(self.pools)):
            pool = self.pools[p]
            if not pool.usable:
                continue
            first_slice = start[1] if p == start[0] else 0
            for i in range(first_slice, len(pool.slices)):
                devices = pool.slices[i].devices
                first_device = start[2] if p == start[0] and i == start[1] else 0
                for j in range(first_device, len(devices)):
                    device = devices[j]
                    if req.admin:
                        if c in self.allocating.get(device.id, ()):
                            continue
                    elif self.in_use(device.id):
                        continue
                    if not self.selectable(claim, req, device):
                        continue
                    if self._try(c, r, s, d, in_sub, req, pool, device, False, (p, i, j + 1)):
                        return True
        return False

    def _first_available(self, c: int, r: int) -> bool:
        all_exceeded = True
        for s in range(len(self.claims[c].requests[r])):
            try:
                done = self.one(c, r, s, 0, True, (0, 0, 0))
            except _MaxSizeExceeded:
                continue
            all_exceeded = False
            if done:
                self.selected[(c, r)] = s
                return True
        if all_exceeded:
            raise _MaxSizeExceeded
        return False

    def _try(self, c: int, r: int, s: int, d: int, in_sub: bool, req: _Request, pool: Pool, device: Device,
             must: bool, next_start: tuple[int, int, int]) -> bool:
        undo = self._take(c, req, pool, device, must)
        if undo is None:
            return False
        try:
            done = self.one(c, r, s, d + 1, in_sub, next_start)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def in_use(self, device_id: DeviceID) -> bool:
        return self.state.is_dedicated(device_id) or bool(self.allocating.get(device_id))

    def selectable(self, claim: _Claim, req: _Request, device: Device) -> bool:
        if not self.owner.cel_selectable(claim, req, device):
            return False
        if device.slice.per_device:
            return node_matches(self.node, device.node_name, device.node_all, device.node_selector)
        return True

    def _consumption(self, req: _Request, device: Device) -> capacity.Consumption | None:
        shared = device.allow_multiple
        if not shared and not req.capacity_requests and self.state.consumed_capacity(device.id) is None:
            return {}  # dedicated device, nothing requested, nothing shared: always fits
        return capacity.fit(device, req.capacity_requests, self.state.consumed_capacity(device.id),
                            self.allocating_capacity.get(device.id))

    def _take(self, c: int, req: _Request, pool: Pool, device: Device, must: bool) -> Callable[[], None] | None:
        """Tentatively allocate ``device``; return the undo function, or None if not usable."""
        shared = self.features.consumable_capacity and device.allow_multiple
        if not shared and req.admin and c in self.allocating.get(device.id, ()):
            return None
        if not req.admin and self.in_use(device.id):
            return None
        if device.consumes and not self.features.partitionable:
            return None
        capacity_in_use = self.state.consumed_capacity(device.id) is not None or device.id in self.shares
        took_counters = bool(device.consumes) and not (shared and capacity_in_use)
        if took_counters and not self.counters.try_consume(pool, device):
            return None
        if self.features.device_taints and taints_block(self.owner._index.taints(device), req.tolerations):
            return self._release_counters(took_counters, pool, device)
        claim = self.claims[c]
        base, sub = (req.parent, req.name) if req.parent else (req.name, "")
        constraints = self.constraints[c]
        for k, constraint in enumerate(constraints):
            if constraint.add(base, sub, device):
                continue
            if must:
                raise AllocationError(f"claim {claim.ref}, request {req.name}: cannot add device "
                                      f"{device_id_text(device.id)} because a claim constraint would not be satisfied")
            for earlier in constraints[:k]:
                earlier.remove(base, sub, device)
            return self._release_counters(took_counters, pool, device)
        consumption: capacity.Consumption | None = {}
        if self.features.consumable_capacity:
            consumption = self._consumption(req, device)
        if consumption is None:
            for constraint in constraints:
                constraint.remove(base, sub, device)
            return self._release_counters(took_counters, pool, device)
        share_id = None
        if shared:
            share_id = str(uuid.uuid4())
            self.shares[device.id] = self.shares.get(device.id, 0) + 1
            held = self.allocating_capacity.setdefault(device.id, {})
            for name, (amount, _) in consumption.items():
                held[name] = held.get(name, 0) + amount
        else:
            self.allocating.setdefault(device.id, set()).add(c)
        picks = self.picks[c]
        picks.append(Picked(req.full_name, base, sub, device, req.admin, req.tolerations, share_id,
                            consumption if shared else None))

        def undo() -> None:
            picks.pop()
            for constraint in constraints:
                constraint.remove(base, sub, device)
            if shared:
                held = self.allocating_capacity[device.id]
                for name, (amount, _) in consumption.items():
                    held[name] -= amount
                self.shares[device.id] -= 1
                if not self.shares[device.id]:
                    del self.shares[device.id], self.allocating_capacity[device.id]
            else:
                self.allocating[device.id].discard(c)
            if took_counters:
                self.counters.release(pool.id, device)

        return undo

    def _release_counters(self, took: bool, pool: Pool, device: Device) -> None:
        if took:
            self.counters.release(pool.id, device)
        return None

    # -- results ---------------------------------------------------------------------------------

    def results(self) -> list[dict[str, Any]]:
        node_name = self.node["metadata"]["name"]
        out = []
        for c, claim in enumerate(self.claims):
            used = []
            for r, subs in enumerate(claim.requests):
                req = subs[self.selected.get((c, r), 0)] if claim.first_available[r] else subs[0]
                used.append((req.full_name, req.cls))
            devices: dict[str, Any] = {"results": [device_result(p) for p in self.picks[c]]}
            config = build_config(claim.claim, used)
            if config:
                devices["config"] = config
            allocation: dict[str, Any] = {"devices": devices}
            selector = node_selector(self.picks[c], node_name)
            if selector is not None:
                allocation["nodeSelector"] = selector
            out.append(allocation)
        return out
