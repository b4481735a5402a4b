"""The ResourceClaim controller against the real server: generation, reuse, release, cleanup."""

import asyncio
import contextlib

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import (
    EVENTS,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    WORKLOADS_V1ALPHA1,
)
from fakeapi.scheduler.controllers.resourceclaim import ResourceClaimController
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.podgroups import PodGroupInstance

from fakeapi.config import FeatureGates
from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER

NS = "default"
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
ALLOCATION = {"devices": {"results": [
    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}


def template(name="gpu-template"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"metadata": {"labels": {"team": "ml"}, "annotations": {"note": "from-template"}},
                     "spec": CLAIM_SPEC}}


def pod(name, claims, node="", group=None):
    spec = {"containers": [{"name": "c", "image": "busybox"}], "resourceClaims": claims}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def claim(name, owner=None, annotation=None):
    meta = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [rc.controller_owner_ref(owner)]
    if annotation:
        meta["annotations"] = {rc.POD_CLAIM_NAME_ANNOTATION: annotation}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": CLAIM_SPEC}


TEMPLATE_ENTRY = {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}
GATES = FeatureGates()


@contextlib.asynccontextmanager
async def claim_controller(api, run_loops, gates=GATES):
    factory = InformerFactory(api)
    recorder = EventRecorder(api, "resource_claim")
    controller = ResourceClaimController(api, factory, gates, recorder)
    try:
        async with run_loops(factory, controller):
            yield controller
    finally:
        await recorder.close()


@pytest.fixture
async def controller(api, run_loops):
    async with claim_controller(api, run_loops) as c:
        yield c


def claim_statuses(p):
    return {s["name"]: s.get("resourceClaimName") for s in (p.get("status") or {}).get("resourceClaimStatuses") or []}


async def generated_name(api, pod_name, entry="gpu"):
    async def name():
        return claim_statuses(await api.get(PODS, NS, pod_name)).get(entry)
    return await wait_for(name, message=f"pod {pod_name} status to name its {entry} claim")


async def test_generates_claim_from_template(api, controller):
    stored_template = await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    created = await api.create(PODS, NS, pod("my-pod", [TEMPLATE_ENTRY]))
    name = await generated_name(api, "my-pod")
    generated = await api.get(RESOURCE_CLAIMS, NS, name)
    meta = generated["metadata"]
    assert name.startswith("my-pod-gpu-") and len(name) == len("my-pod-gpu-") + 5
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                        "uid": created["metadata"]["uid"], "controller": True}]
    assert meta["annotations"] == {"note": "from-template", rc.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert generated["spec"] == stored_template["spec"]["spec"]


async def test_reuses_orphan_instead_of_duplicating(api, run_loops):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    created = await api.create(PODS, NS, pod("p", [TEMPLATE_ENTRY]))
    await api.create(RESOURCE_CLAIMS, NS, claim("orphan", owner=created, annotation="gpu"))
    async with claim_controller(api, run_loops):
        assert await generated_name(api, "p") == "orphan"
    assert len((await api.list(RESOURCE_CLAIMS, NS))["items"]) == 1


async def test_deleted_generated_claim_is_generated_again(api, controller):
    # Nothing about the pod changes: only the claim's deletion can get it a sync.
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    created = await api.create(PODS, NS, pod("p", [TEMPLATE_ENTRY]))
    first = await generated_name(api, "p")
    await api.delete(RESOURCE_CLAIMS, NS, first)

    async def second():
        name = claim_statuses(await api.get(PODS, NS, "p")).get("gpu")
        return name if name not in (None, first) else None

    name = await wait_for(second, message="a new claim generated for the pod")
    regenerated = await api.get(RESOURCE_CLAIMS, NS, name)
    assert rc.is_owned_by(regenerated, created)


async def test_missing_template_is_reported_then_retried_on_template_add(api, controller):
    await api.create(PODS, NS, pod("waiting", [TEMPLATE_ENTRY]))

    async def failure_event():
        events = (await api.list(EVENTS, NS))["items"]
        return [e for e in events if e["reason"] == "FailedResourceClaimCreation"
                and e["involvedObject"]["name"] == "waiting"]

    [event] = await wait_for(failure_event, message="a FailedResourceClaimCreation event")
    assert event["type"] == "Warning"
    assert 'resource claim template "gpu-template"' in event["message"]
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    await generated_name(api, "waiting")


async def allocate_and_reserve(api, name, *refs):
    c = await api.get(RESOURCE_CLAIMS, NS, name)
    c["metadata"].setdefault("finalizers", []).append(DELETE_PROTECTION_FINALIZER)
    c = await api.update(RESOURCE_CLAIMS, NS, c)
    c["status"] = {"allocation": ALLOCATION, "reservedFor": list(refs)}
    return await api.update(RESOURCE_CLAIMS, NS, c, subresource="status")


def pod_ref(p):
    return {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}


async def test_deleted_pod_releases_and_deallocates(api, controller, fetch):
    await api.create(RESOURCE_CLAIMS, NS, claim("shared"))
    one = await api.create(PODS, NS, pod("one", [{"name": "c", "resourceClaimName": "shared"}]))
    two = await api.create(PODS, NS, pod("two", [{"name": "c", "resourceClaimName": "shared"}]))
    await allocate_and_reserve(api, "shared", pod_ref(one), pod_ref(two))

    await api.delete(PODS, NS, "one")

    async def reserved_for_two_only():
        return rc.reserved_for(await api.get(RESOURCE_CLAIMS, NS, "shared")) == [pod_ref(two)]

    await wait_for(reserved_for_two_only, message="pod one's reservation to go")
    assert rc.is_allocated(await api.get(RESOURCE_CLAIMS, NS, "shared"))

    await api.delete(PODS, NS, "two")

    async def deallocated():
        c = await api.get(RESOURCE_CLAIMS, NS, "shared")
        return not rc.reserved_for(c) and not rc.is_allocated(c) and not rc.has_delete_protection(c)

    await wait_for(deallocated, message="deallocation and finalizer removal")


async def end_by_delete(api, p):
    await api.delete(PODS, NS, p["metadata"]["name"])


async def end_by_finishing(api, p):
    await api.patch(PODS, NS, p["metadata"]["name"], {"status": {"phase": "Failed"}}, subresource="status")


async def end_by_replacing(api, p):
    name = p["metadata"]["name"]
    await api.delete(PODS, NS, name)
    await api.create(PODS, NS, pod(name, p["spec"]["resourceClaims"]))


@pytest.mark.parametrize("end", [end_by_delete, end_by_finishing, end_by_replacing],
                         ids=["deleted", "finished", "replaced"])
async def test_consumer_that_is_gone_is_unreserved(api, controller, end):
    await api.create(RESOURCE_CLAIMS, NS, claim("held"))
    holder = await api.create(PODS, NS, pod("holder", [{"name": "c", "resourceClaimName": "held"}]))
    await allocate_and_reserve(api, "held", pod_ref(holder))
    await end(api, holder)

    async def released():
        c = await api.get(RESOURCE_CLAIMS, NS, "held")
        return not rc.reserved_for(c) and not rc.is_allocated(c)

    await wait_for(released, message="the reservation of a consumer that is gone to be dropped")


async def test_finished_pod_gets_generated_claim_deleted(api, controller, fetch):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    created = await api.create(PODS, NS, pod("job", [TEMPLATE_ENTRY], node="node-1"))
    name = await generated_name(api, "job")
    await allocate_and_reserve(api, name, pod_ref(created))
    await api.patch(PODS, NS, "job", {"status": {"phase": "Succeeded"}}, subresource="status")

    async def claim_gone():
        return await fetch(api, RESOURCE_CLAIMS, NS, name) is None

    await wait_for(claim_gone, message="the generated claim of a finished pod to be deleted")


async def test_a_claim_it_deleted_is_not_deleted_again_from_a_cache_that_still_shows_it(
        api, controller, fetch, monkeypatch):
    """Its own writes' events can reach the controller before the deletion's: a sync of the claim
    as the cache shows it then must not send a second DELETE (a 404 for nothing)."""
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    created = await api.create(PODS, NS, pod("job", [TEMPLATE_ENTRY], node="node-1"))
    name = await generated_name(api, "job")
    reserved = await allocate_and_reserve(api, name, pod_ref(created))
    deletes = []
    delete = api.delete

    async def recording(gvr, namespace, name, **kwargs):
        deletes.append((gvr, name))
        return await delete(gvr, namespace, name, **kwargs)

    monkeypatch.setattr(api, "delete", recording)
    await api.patch(PODS, NS, "job", {"status": {"phase": "Succeeded"}}, subresource="status")

    async def claim_gone():
        return await fetch(api, RESOURCE_CLAIMS, NS, name) is None

    await wait_for(claim_gone, message="the generated claim of a finished pod to be deleted")
    assert deletes == [(RESOURCE_CLAIMS, name)]
    stale = rc.with_reservations(reserved, [])   # released, not yet shown deleted
    await controller._release_claim(stale)
    assert deletes == [(RESOURCE_CLAIMS, name)]


async def test_bound_pod_gets_reserved_by_controller(api, controller):
    await api.create(RESOURCE_CLAIMS, NS, claim("preallocated"))
    await allocate_and_reserve(api, "preallocated")
    created = await api.create(PODS, NS, pod("bound", [{"name": "c", "resourceClaimName": "preallocated"}],
                                             node="node-1"))

    async def reserved():
        return rc.reserved_for(await api.get(RESOURCE_CLAIMS, NS, "preallocated")) == [pod_ref(created)]

    await wait_for(reserved, message="the controller to reserve the claim for the bound pod")


def podgroup(name, claims):
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": claims}}


async def test_podgroup_claim_generated_once_and_shared_by_pods(api, controller):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    group = await api.create(PODGROUPS, NS, podgroup("gang", [TEMPLATE_ENTRY]))

    async def group_claim():
        g = await api.get(PODGROUPS, NS, "gang")
        return claim_statuses(g).get("gpu")

    name = await wait_for(group_claim, message="the PodGroup status to name its claim")
    assert name.startswith("gang-gpu-")
    owner = (await api.get(RESOURCE_CLAIMS, NS, name))["metadata"]["ownerReferences"]
    assert owner == [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": "gang",
                      "uid": group["metadata"]["uid"], "controller": True}]

    for p in ("member-1", "member-2"):
        await api.create(PODS, NS, pod(p, [TEMPLATE_ENTRY], group="gang"))
        assert await generated_name(api, p) == name
    assert len((await api.list(RESOURCE_CLAIMS, NS))["items"]) == 1, "no per-pod claims for group claims"


async def test_podgroup_reservation_released_when_group_deleted(api, controller):
    await api.create(RESOURCE_CLAIMS, NS, claim("group-claim"))
    group = await api.create(PODGROUPS, NS, podgroup("gone", [{"name": "c", "resourceClaimName": "group-claim"}]))
    ref = rc.group_consumer_ref(group, PodGroupInstance(NS, "gone"))
    await allocate_and_reserve(api, "group-claim", ref)
    assert rc.reserved_for(await api.get(RESOURCE_CLAIMS, NS, "group-claim")) == [ref]

    g = await api.get(PODGROUPS, NS, "gone")
    if g["metadata"].get("finalizers"):
        g["metadata"]["finalizers"] = []
        await api.update(PODGROUPS, NS, g)
    await api.delete(PODGROUPS, NS, "gone")

    async def deallocated():
        c = await api.get(RESOURCE_CLAIMS, NS, "group-claim")
        return not rc.reserved_for(c) and not rc.is_allocated(c)

    await wait_for(deallocated, message="the PodGroup reservation to be released")


async def test_v1alpha1_workload_claims_are_per_replica(api, controller):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    await api.create(WORKLOADS_V1ALPHA1, NS, {
        "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "train", "namespace": NS},
        "spec": {"podGroups": [{"name": "workers", "policy": {"basic": {}}, "resourceClaims": [TEMPLATE_ENTRY]}]}})
    names = {}
    for replica, member in (("0", "a"), ("0", "b"), ("1", "c")):
        p = pod(f"w{replica}-{member}", [TEMPLATE_ENTRY])
        p["spec"]["workloadRef"] = {"name": "train", "podGroup": "workers", "podGroupReplicaKey": replica}
        await api.create(PODS, NS, p)
        names[p["metadata"]["name"]] = await generated_name(api, p["metadata"]["name"])
    assert names["w0-a"] == names["w0-b"] != names["w1-c"]
    assert names["w0-a"].startswith("train-workers-0-gpu-")
    owners = {(await api.get(RESOURCE_CLAIMS, NS, n))["metadata"]["ownerReferences"][0]["kind"]
              for n in names.values()}
    assert owners == {"Workload"}
    assert len((await api.list(RESOURCE_CLAIMS, NS))["items"]) == 2


async def test_finished_pod_gets_no_new_claim(api, controller, fetch):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    await api.create(PODS, NS, pod("done", [TEMPLATE_ENTRY]))
    name = await generated_name(api, "done")
    await api.patch(PODS, NS, "done", {"status": {"phase": "Succeeded"}}, subresource="status")

    async def no_claims():
        return not (await api.list(RESOURCE_CLAIMS, NS))["items"]

    await wait_for(no_claims, message="the finished pod's claim to be deleted")
    # A later pod proves the controller moved on; the finished pod must still have no claim.
    await api.create(PODS, NS, pod("later", [TEMPLATE_ENTRY]))
    await generated_name(api, "later")
    assert claim_statuses(await api.get(PODS, NS, "done")) == {"gpu": name}, "no claim regenerated"
    claims = (await api.list(RESOURCE_CLAIMS, NS))["items"]
    assert [c["metadata"]["ownerReferences"][0]["name"] for c in claims] == ["later"]


async def test_gate_off_generates_per_pod_claims_for_group_entries(api, run_loops):
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    await api.create(PODGROUPS, NS, podgroup("gang", [TEMPLATE_ENTRY]))
    created = await api.create(PODS, NS, pod("member", [TEMPLATE_ENTRY], group="gang"))
    async with claim_controller(api, run_loops, FeatureGates(DRAWorkloadResourceClaims=False)):
        name = await generated_name(api, "member")
    owner = (await api.get(RESOURCE_CLAIMS, NS, name))["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"]) == ("Pod", created["metadata"]["uid"])
    assert len((await api.list(RESOURCE_CLAIMS, NS))["items"]) == 1


class HeldClaimCreates:
    """The controller's client, with every ResourceClaim create held until :attr:`go` is set."""

    def __init__(self, api):
        self._api = api
        self.go = asyncio.Event()
        self.held = 0

    def __getattr__(self, name):
        return getattr(self._api, name)

    async def create(self, gvr, namespace, body, **kwargs):
        if gvr == RESOURCE_CLAIMS:
            self.held += 1
            await self.go.wait()
        return await self._api.create(gvr, namespace, body, **kwargs)


async def test_release_is_not_queued_behind_slow_claim_creates(api, run_loops):
    # Upstream runs the controller with 50 workers: a finished pod's device is released while
    # other pods' claims are being created (with 2 workers, two slow creates held everything).
    held = HeldClaimCreates(api)
    await api.create(RESOURCE_CLAIM_TEMPLATES, NS, template())
    await api.create(RESOURCE_CLAIMS, NS, claim("held"))
    holder = await api.create(PODS, NS, pod("holder", [{"name": "c", "resourceClaimName": "held"}]))
    await allocate_and_reserve(api, "held", pod_ref(holder))
    factory = InformerFactory(api)
    recorder = EventRecorder(api, "resource_claim")
    try:
        async with run_loops(factory, ResourceClaimController(held, factory, GATES, recorder)):
            for i in range(8):
                await api.create(PODS, NS, pod(f"waiting-{i}", [TEMPLATE_ENTRY]))
            await wait_for(lambda: held.held == 8, message="eight claim creates in flight")
            await end_by_finishing(api, holder)

            async def released():
                c = await api.get(RESOURCE_CLAIMS, NS, "held")
                return not rc.reserved_for(c) and not rc.is_allocated(c)

            await wait_for(released, message="the release while eight claim creates are held")
            held.go.set()
            await generated_name(api, "waiting-7")
    finally:
        held.go.set()
        await recorder.close()
