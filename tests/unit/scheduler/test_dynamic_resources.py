"""DynamicResources plugin: claim resolution, hints, and the Filter/Reserve/PreBind/Unreserve flow."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.scheduler.assume_cache import ClaimAssumeCache
from fakeapi.scheduler.dra.allocator import Allocator, DeviceIndex, Features
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import Code, QueueingHint
from fakeapi.scheduler.plugins.dynamic_resources import (
    ERR_CANNOT_ALLOCATE,
    ERR_NOT_AVAILABLE,
    NAME,
    DynamicResources,
    unsupported_request,
)
from fakeapi.scheduler.plugins.dynamic_resources_hints import claim_hint, has_claims_hint, node_hint, pod_hint
from fakeapi.scheduler.snapshot import NodeInfo

from fakeapi.errors import Conflict
from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER as FINALIZER

from .builders import allocation, claim, node, pod

CLASS = "gpu.example.com"


@pytest.mark.parametrize(("request_", "prioritized", "want"), [
    ({"name": "r", "exactly": {"deviceClassName": CLASS}}, True, ""),
    ({"name": "r", "exactly": {"deviceClassName": "nope"}}, True, "request r: device class nope does not exist"),
    ({"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": CLASS},
                                      {"name": "b", "deviceClassName": "nope"}]}, True,
     "request r/b: device class nope does not exist"),
    ({"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": CLASS}]}, False,
     "resource claim default/c, request r: has subrequests, but the DRAPrioritizedList feature is disabled"),
], ids=["ok", "missing-class", "missing-subrequest-class", "prioritized-list-off"])
def test_unsupported_request(request_: dict[str, Any], prioritized: bool, want: str) -> None:
    assert unsupported_request(claim("c"), request_, prioritized, lambda name: name == CLASS) == want


@pytest.mark.parametrize(("old", "new", "want"), [
    (None, claim("mine"), QueueingHint.QUEUE),
    (None, claim("other"), QueueingHint.SKIP),
    (claim("other", allocation=allocation("d0")), claim("other"), QueueingHint.QUEUE),
    (claim("other"), claim("other", allocation=allocation("d0")), QueueingHint.SKIP),
    (claim("other", allocation=allocation("d0")), None, QueueingHint.QUEUE),
], ids=["own-claim", "unrelated", "deallocated-frees-devices", "allocated-elsewhere", "deleted-allocated"])
def test_claim_hint(old: Any, new: Any, want: QueueingHint) -> None:
    p = pod("p", claims=[{"name": "c", "resourceClaimName": "mine"}])
    assert claim_hint(p, old, new) == want


_WITH_CLAIM = pod("p", claims=[{"name": "c", "resourceClaimName": "mine"}])
_STATUS = [{"name": "c", "resourceClaimName": "p-c-abc"}]


@pytest.mark.parametrize(("hint", "p", "old", "new", "want"), [
    (has_claims_hint, _WITH_CLAIM, None, {}, QueueingHint.QUEUE),
    (has_claims_hint, pod("p"), None, {}, QueueingHint.SKIP),
    (node_hint, _WITH_CLAIM, None, node("n1"), QueueingHint.QUEUE),
    (node_hint, _WITH_CLAIM, node("n1"), node("n1", labels={"zone": "a"}), QueueingHint.QUEUE),
    (node_hint, _WITH_CLAIM, node("n1"), node("n1", unschedulable=True), QueueingHint.SKIP),
    (node_hint, pod("p"), None, node("n1"), QueueingHint.SKIP),
    (pod_hint, _WITH_CLAIM, pod("p"), pod("p", claim_statuses=_STATUS), QueueingHint.QUEUE),
    (pod_hint, _WITH_CLAIM, pod("p", claim_statuses=_STATUS), pod("p", claim_statuses=_STATUS, priority=5),
     QueueingHint.SKIP),
], ids=["slice-with-claims", "slice-without-claims", "node-added", "node-labels-changed", "node-spec-changed",
        "node-without-claims", "claim-status-named", "other-pod-change"])
def test_event_hints(hint: Callable[..., QueueingHint], p: dict[str, Any], old: Any, new: Any,
                     want: QueueingHint) -> None:
    assert hint(p, old, new) == want


# --- plugin flow against a real DeviceIndex and allocator -----------------------------------------

def _slice(node_name: str, devices: int) -> dict[str, Any]:
    return {"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": f"{node_name}-slice", "resourceVersion": "1"},
            "spec": {"driver": CLASS, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


DEVICE_CLASS = {"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": CLASS},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{CLASS}"'}}]}}


class FakeApi:
    """Records writes; status updates may answer with a Conflict, or break the connection before
    (``resets``) or after (``lost``) committing."""

    def __init__(self, conflicts: int = 0, *, resets: int = 0, lost: int = 0) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.conflicts = conflicts
        self.resets = resets
        self.lost = lost
        self.server: dict[str, dict[str, Any]] = {}
        self.rv = 10
        self.on_get: Callable[[], None] = lambda: None

    def _store(self, body: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        self.server[body["metadata"]["name"]] = stored
        return stored

    async def update(self, gvr: Any, namespace: str, body: dict[str, Any], *, subresource: str | None = None
                     ) -> dict[str, Any]:
        self.calls.append((f"update/{subresource or ''}", copy.deepcopy(body)))
        if subresource == "status" and self.conflicts:
            self.conflicts -= 1
            raise Conflict("the object has been modified")
        if subresource == "status" and self.resets:
            self.resets -= 1
            raise ConnectionResetError(104, "Connection reset by peer")
        stored = self._store(body)
        if subresource == "status" and self.lost:
            self.lost -= 1
            raise ConnectionResetError("the server closed the connection before its answer was complete")
        return stored

    async def get(self, gvr: Any, namespace: str, name: str) -> dict[str, Any]:
        self.calls.append(("get", name))
        self.on_get()
        return copy.deepcopy(self.server[name])

    async def patch(self, gvr: Any, namespace: str, name: str, body: dict[str, Any], **kwargs: Any) -> dict:
        self.calls.append(("patch", body))
        return {}


def _setup(devices: int = 1, api: FakeApi | None = None) -> tuple[DynamicResources, ClaimAssumeCache, FakeApi]:
    index = DeviceIndex(Features())
    index.set_class(DEVICE_CLASS)
    index.set_slice(_slice("n1", devices))
    cache = ClaimAssumeCache()
    api = api or FakeApi()
    plugin = DynamicResources(api, cache, index, lambda name: name == CLASS)  # type: ignore[arg-type]
    return plugin, cache, api


def _pod_with(claim_name: str, name: str = "p") -> dict[str, Any]:
    return pod(name, claims=[{"name": "gpu", "resourceClaimName": claim_name}])


def _cycle(plugin: DynamicResources, p: dict[str, Any], n: dict[str, Any]) -> tuple[CycleState, Any]:
    state = CycleState()
    status = plugin.pre_filter(state, p, [])
    if not status.is_success:
        return state, status
    return state, plugin.filter(state, p, NodeInfo(n["metadata"]["name"], n))


def test_pods_without_claims_are_skipped() -> None:
    plugin, _, _ = _setup()
    assert plugin.pre_filter(CycleState(), pod(), []).code == Code.SKIP


def test_pre_enqueue_waits_for_claim() -> None:
    plugin, cache, _ = _setup()
    p = _pod_with("c1")
    status = plugin.pre_enqueue(p)
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == 'resourceclaim.resource.k8s.io "c1" not found'
    cache.on_upsert(claim("c1"))
    assert plugin.pre_enqueue(p).is_success


def test_reserve_makes_devices_unavailable_and_unreserve_frees_them() -> None:
    plugin, cache, _ = _setup(devices=1)
    n1 = node("n1")
    cache.on_upsert(claim("c1"))
    cache.on_upsert(claim("c2"))
    p1, p2 = _pod_with("c1", "p1"), _pod_with("c2", "p2")
    state1, status = _cycle(plugin, p1, n1)
    assert status.is_success
    assert plugin.reserve(state1, p1, "n1").is_success
    assert cache.has_pending("claim-c1")
    _, status = _cycle(plugin, p2, n1)
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_ALLOCATE)
    plugin.unreserve(state1, p1, "n1")
    assert not cache.has_pending("claim-c1")
    _, status = _cycle(plugin, p2, n1)
    assert status.is_success


def test_shared_claim_waits_while_being_allocated() -> None:
    plugin, cache, _ = _setup(devices=2)
    cache.on_upsert(claim("shared"))
    p1, p2 = _pod_with("shared", "p1"), _pod_with("shared", "p2")
    state1, _ = _cycle(plugin, p1, node("n1"))
    plugin.reserve(state1, p1, "n1")
    status = plugin.pre_filter(CycleState(), p2, [])
    assert status.message == "resource claim default/shared is in the process of being allocated"


def test_allocated_claim_restricts_nodes() -> None:
    plugin, cache, _ = _setup()
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": ["n1"]}]}]}
    cache.on_upsert(claim("c1", allocation={**allocation("gpu-0"), "nodeSelector": selector}))
    p = _pod_with("c1")
    assert _cycle(plugin, p, node("n1"))[1].is_success
    status = _cycle(plugin, p, node("n2"))[1]
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NOT_AVAILABLE)


def test_bad_cel_is_an_error_not_a_crash() -> None:
    plugin, cache, _ = _setup()
    bad = claim("c1", requests=[{"name": "gpu", "exactly": {
        "deviceClassName": CLASS, "selectors": [{"cel": {"expression": "device.nosuchfield == 1"}}]}}])
    cache.on_upsert(bad)
    status = _cycle(plugin, _pod_with("c1"), node("n1"))[1]
    assert status.code == Code.ERROR and status.plugin == NAME


def _reserved(plugin: DynamicResources, cache: ClaimAssumeCache, api: FakeApi) -> tuple[CycleState, Any]:
    """Claim c1 on the server and in the cache, a pod using it through Reserve on n1."""
    cache.on_upsert(claim("c1"))
    api.server["c1"] = claim("c1")
    p = _pod_with("c1")
    state, _ = _cycle(plugin, p, node("n1"))
    assert plugin.reserve(state, p, "n1").is_success
    return state, p


async def test_pre_bind_writes_finalizer_then_allocation_and_reservation() -> None:
    plugin, cache, api = _setup()
    state, p = _reserved(plugin, cache, api)
    assert (await plugin.pre_bind(state, p, "n1")).is_success
    (first, finalizer_body), (second, status_body) = api.calls
    assert first == "update/" and finalizer_body["metadata"]["finalizers"] == [FINALIZER]
    assert second == "update/status"
    assert status_body["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert status_body["status"]["reservedFor"] == [{"resource": "pods", "name": "p",
                                                     "uid": p["metadata"]["uid"]}]
    assert not cache.has_pending("claim-c1")
    assert cache.get("default", "c1")["status"]["allocation"]   # assumed until the informer catches up


async def test_pre_bind_retries_on_conflict_with_fresh_object() -> None:
    api = FakeApi(conflicts=1)
    plugin, cache, _ = _setup(api=api)
    state, p = _reserved(plugin, cache, api)
    assert (await plugin.pre_bind(state, p, "n1")).is_success
    assert [c[0] for c in api.calls] == ["update/", "update/status", "get", "update/status"]


async def test_shared_allocated_claim_gets_another_reservation() -> None:
    plugin, cache, api = _setup()
    first = {"resource": "pods", "name": "p0", "uid": "u0"}
    shared = claim("c1", allocation=allocation("gpu-0"), reserved_for=[first])
    cache.on_upsert(shared)
    api.server["c1"] = shared
    p = _pod_with("c1")
    state, status = _cycle(plugin, p, node("n1"))
    assert status.is_success
    assert plugin.reserve(state, p, "n1").is_success
    assert (await plugin.pre_bind(state, p, "n1")).is_success
    ((verb, body),) = api.calls
    assert verb == "update/status" and [r["name"] for r in body["status"]["reservedFor"]] == ["p0", "p"]


async def test_pre_bind_keeps_the_devices_until_a_lost_answer_is_known() -> None:
    """The status write is committed but its answer lost: the re-read finds it, and until then
    the allocation stays pending, so no other pod can get its device."""
    plugin, cache, api = _setup(api=FakeApi(lost=1))
    pending_at_reread: list[bool] = []
    api.on_get = lambda: pending_at_reread.append(cache.has_pending("claim-c1"))
    state, p = _reserved(plugin, cache, api)
    assert (await plugin.pre_bind(state, p, "n1")).is_success
    assert [c[0] for c in api.calls] == ["update/", "update/status", "get"]
    assert pending_at_reread == [True]
    assert not cache.has_pending("claim-c1")
    assert cache.get("default", "c1")["status"]["allocation"]


async def test_pre_bind_writes_again_when_the_write_never_arrived() -> None:
    plugin, cache, api = _setup(api=FakeApi(resets=2))
    state, p = _reserved(plugin, cache, api)
    assert (await plugin.pre_bind(state, p, "n1")).is_success
    assert [c[0] for c in api.calls] == ["update/", "update/status", "get", "update/status", "get", "update/status"]
    assert api.server["c1"]["status"]["reservedFor"][0]["uid"] == p["metadata"]["uid"]


def _grown_slice(plugin: DynamicResources, *_: Any) -> None:
    plugin._index.set_slice({**_slice("n1", 2), "metadata": {"name": "n1-slice", "resourceVersion": "2"}})


@pytest.mark.parametrize(("change", "fits_after"), [
    (lambda plugin, state1, p1, info: plugin.unreserve(state1, p1, "n1"), True),
    (lambda plugin, state1, p1, info: _grown_slice(plugin), True),
    (lambda plugin, state1, p1, info: plugin._index.set_class(DEVICE_CLASS), False),
    (lambda plugin, state1, p1, info: info.set_node(node("n1", labels={"zone": "b"})), False),
], ids=["device-freed", "slice-grown", "class-updated", "node-updated"])
def test_no_fit_is_remembered_until_an_input_changes(change: Callable[..., Any], fits_after: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A node where a claim shape fits nowhere is not searched again for the next pod of that
    shape until the node, its pools' allocations or the device index change."""
    calls: list[str] = []
    original = Allocator.allocate

    def counting(self: Allocator, n: dict[str, Any], *args: Any) -> Any:
        calls.append(n["metadata"]["name"])
        return original(self, n, *args)

    monkeypatch.setattr(Allocator, "allocate", counting)
    plugin, cache, _ = _setup(devices=1)
    info = NodeInfo("n1", node("n1"))
    for name in ("c1", "c2", "c3"):
        cache.on_upsert(claim(name))

    def attempt(p: dict[str, Any]) -> tuple[CycleState, Any]:
        state = CycleState()
        assert plugin.pre_filter(state, p, []).is_success
        return state, plugin.filter(state, p, info)

    p1 = _pod_with("c1", "p1")
    state1, status = attempt(p1)
    assert status.is_success and plugin.reserve(state1, p1, "n1").is_success
    for name in ("c2", "c3"):   # same shape: the second is answered from memory
        status = attempt(_pod_with(name, f"p-{name}"))[1]
        assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_ALLOCATE)
    assert len(calls) == 2
    change(plugin, state1, p1, info)
    assert attempt(_pod_with("c2", "p-again"))[1].is_success == fits_after
    assert len(calls) == 3
