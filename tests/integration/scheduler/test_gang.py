"""Gang scheduling (KEP-4671, the 1.37 pod-group cycle) end to end: PodGroup and v1alpha1 Workload gangs
on the full control plane."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import PODGROUPS, PODS, RESOURCE_CLAIMS, WORKLOADS_V1ALPHA1, ApiClient
from fakeapi.scheduler.plugins.gang import WAITING_FOR_PODS
from fakeapi.scheduler.podgroup_status import CONDITION_SCHEDULED
from sched_helpers import (
    add_gpu_node,
    apply_manifest,
    claim_obj,
    claim_spec,
    create,
    device_request,
    get_pod,
    pod_claim,
    pod_obj,
    template_obj,
    wait_running,
    wait_unschedulable,
)


def pod_group(name: str, min_count: int | None) -> dict[str, Any]:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy}}


def member(name: str, group: str, **kwargs: Any) -> dict[str, Any]:
    return pod_obj(name, schedulingGroup={"podGroupName": group}, **kwargs)


async def scheduled_condition(api: ApiClient, group: str, status: str) -> dict[str, Any]:
    async def condition() -> dict[str, Any] | None:
        pg = await api.get(PODGROUPS, "default", group)
        return next((c for c in (pg.get("status") or {}).get("conditions") or ()
                     if c["type"] == CONDITION_SCHEDULED and c["status"] == status), None)
    return await wait_for(condition, message=f"{CONDITION_SCHEDULED}={status} on {group}")


async def bound(api: ApiClient) -> list[str]:
    return [p["metadata"]["name"] for p in (await api.list(PODS, "default"))["items"] if p["spec"].get("nodeName")]


async def test_gang_waits_for_min_count_pods_then_binds_them_together(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.create(PODGROUPS, "default", pod_group("trio", 3))
    for name in ("a", "b"):
        await create(api, member(name, "trio"))
    for name in ("a", "b"):
        assert (await wait_unschedulable(api, name))["message"] == WAITING_FOR_PODS
    assert await bound(api) == []
    await create(api, member("c", "trio"))
    for name in ("a", "b", "c"):
        await wait_running(api, name)
    condition = await scheduled_condition(api, "trio", "True")
    assert condition["reason"] == "Scheduled"


async def test_gang_members_share_one_claim(api: ApiClient) -> None:
    # Upstream pod_group.go: the gang's pods share ONE claim by name; the first member's pending
    # allocation must not keep the others out while the cycle places them.
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, claim_obj("shared"))
    await api.create(PODGROUPS, "default", pod_group("pair", 2))
    for name in ("a", "b"):
        await create(api, member(name, "pair", claim="shared"))
    pods = [await wait_running(api, name) for name in ("a", "b")]
    claim = await api.get(RESOURCE_CLAIMS, "default", "shared")
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["a", "b"]
    assert pods[0]["spec"]["nodeName"] == pods[1]["spec"]["nodeName"]


async def test_pod_waits_for_its_pod_group_to_appear(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, member("early", "late-group"))
    condition = await wait_unschedulable(api, "early")
    assert condition["message"] == 'waiting for pod\'s pod group "late-group" to appear in scheduling queue'
    await api.create(PODGROUPS, "default", pod_group("late-group", 1))
    await wait_running(api, "early")


async def _trio_of_whole_nodes(api: ApiClient) -> None:
    """A gang of three pods that each want a whole node's 4 GPUs, on two GPU nodes."""
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("node-of-gpus", claim_spec(device_request(count=4))))
    await api.create(PODGROUPS, "default", pod_group("trio", 3))
    for name in ("a", "b", "c"):
        await create(api, member(name, "trio", template="node-of-gpus"))


async def test_gang_that_can_never_fit_holds_nothing_and_runs_once_capacity_arrives(api: ApiClient) -> None:
    # Two pods fit, the third never does.
    await _trio_of_whole_nodes(api)
    gang_failed = "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"

    async def settled() -> bool:
        texts = [(await wait_unschedulable(api, n))["message"] for n in ("a", "b", "c")]
        return sum(gang_failed in t for t in texts) == 2 and sum("cannot allocate all claims" in t for t in texts) == 1
    await wait_for(settled, message="two pods rejected by the gang, one by DRA")
    assert await bound(api) == []
    claims = (await api.list(RESOURCE_CLAIMS, "default"))["items"]
    assert len(claims) == 3 and not any((c.get("status") or {}).get("allocation") for c in claims)
    condition = await scheduled_condition(api, "trio", "False")
    assert condition["reason"] == "Unschedulable" and gang_failed in condition["message"]
    # Nothing is held: an ordinary pod gets a whole node's GPUs at once.
    await create(api, pod_obj("lone", template="node-of-gpus"))
    lone = await wait_running(api, "lone")
    assert len((await pod_claim(api, lone))["status"]["allocation"]["devices"]["results"]) == 4
    assert await bound(api) == ["lone"]
    # Capacity arrives (the lone pod goes, a third GPU node joins): the waiting gang runs.
    await api.delete(PODS, "default", "lone")
    await add_gpu_node(api, "gpu-node-3")
    for name in ("a", "b", "c"):
        await wait_running(api, name)
    await scheduled_condition(api, "trio", "True")


async def test_two_gangs_competing_for_devices_enough_for_one(api: ApiClient) -> None:
    # 8 GPUs on two nodes, pods of 2 GPUs: four pods fit, a gang has three.
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("two-gpus", claim_spec(device_request(count=2))))
    for gang in ("left", "right"):
        await api.create(PODGROUPS, "default", pod_group(gang, 3))
    for i in range(3):
        for gang in ("left", "right"):
            await create(api, member(f"{gang}-{i}", gang, template="two-gpus"))

    async def one_gang_bound_other_explained() -> str | None:
        placed = await bound(api)
        winners = {g for g in ("left", "right") if sum(p.startswith(g) for p in placed) == 3}
        if len(winners) != 1 or len(placed) != 3:
            return None
        loser = ({"left", "right"} - winners).pop()
        texts = [(await wait_unschedulable(api, f"{loser}-{i}"))["message"] for i in range(3)]
        return loser if all("minCount (3) cannot be satisfied" in t or "cannot allocate all claims" in t
                            for t in texts) else None
    loser = await wait_for(one_gang_bound_other_explained, message="one gang fully bound, the other explained")
    condition = await scheduled_condition(api, loser, "False")
    # One member took the last two GPUs, the next found none: the cycle stops there.  Preemption
    # cannot help: nothing of lower priority runs.
    assert condition["message"] == ("minCount (3) cannot be satisfied: 1 scheduled, 1 remaining, "
                                    "No preemption victims found for incoming preemptor")
    allocated = [c for c in (await api.list(RESOURCE_CLAIMS, "default"))["items"]
                 if (c.get("status") or {}).get("allocation")]
    assert {c["status"]["reservedFor"][0]["name"].split("-")[0] for c in allocated} == {"left", "right"} - {loser}


async def test_lowering_min_count_lets_a_waiting_gang_run(api: ApiClient) -> None:
    await _trio_of_whole_nodes(api)
    await scheduled_condition(api, "trio", "False")
    await api.patch(PODGROUPS, "default", "trio", {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    await scheduled_condition(api, "trio", "True")
    assert len(await bound(api)) == 2


async def test_members_with_different_scheduler_names_are_refused(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.create(PODGROUPS, "default", pod_group("mixed", 2))
    await create(api, member("ours", "mixed"))
    await create(api, member("theirs", "mixed", schedulerName="other-scheduler"))
    condition = await wait_unschedulable(api, "ours", reason="SchedulerError")
    assert condition["message"] == ('all pods in a pod group hierarchy should have the same .spec.schedulerName '
                                    'set, got: "other-scheduler" ("theirs") and "default-scheduler" ("ours")')
    assert (await scheduled_condition(api, "mixed", "False"))["reason"] == "SchedulerError"
    assert await bound(api) == []


async def _whole_or_halves_pool(api: ApiClient) -> None:
    """api-notes §3.7: one device usable as "whole" (2 widgets) or as two "half" devices (1 each)."""
    await apply_manifest(api, "gpu-cluster.yaml")
    pool = {"name": "gang-pool", "generation": 1, "resourceSliceCount": 2}
    spec = {"driver": "widget.example.com", "nodeName": "gpu-node-1", "pool": pool}

    def device(name: str, size: str, widgets: str) -> dict[str, Any]:
        return {"name": name, "attributes": {"widget.example.com/size": {"string": size}},
                "consumesCounters": [{"counterSet": "widget-counter", "counters": {"widgets": {"value": widgets}}}]}
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "counters"},
                       "spec": {**spec, "sharedCounters": [{"name": "widget-counter",
                                                            "counters": {"widgets": {"value": "2"}}}]}})
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "devices"},
                       "spec": {**spec, "devices": [device("whole", "whole", "2"), device("half-1", "half", "1"),
                                                    device("half-2", "half", "1")]}})
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                       "metadata": {"name": "widget.example.com"},
                       "spec": {"selectors": [{"cel": {"expression": 'device.driver == "widget.example.com"'}}]}})


def _whole_or_half_claim(name: str) -> dict[str, Any]:
    def sub(size: str) -> dict[str, Any]:
        return {"name": size, "deviceClassName": "widget.example.com",
                "selectors": [{"cel": {"expression": f'device.attributes["widget.example.com"].size == "{size}"'}}]}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "widget", "firstAvailable": [sub("whole"), sub("half")]}]}}}


async def test_pod_group_dra_allocation_conflict_keeps_the_gang_pending(api: ApiClient) -> None:
    # Upstream pod_group_dra_allocation.go (bug #138765): the first pod greedily takes "whole",
    # the second finds no half left, and the gang never reaches minCount.
    await _whole_or_halves_pool(api)
    await api.create(PODGROUPS, "default", pod_group("conflict", 2))
    for name in ("a", "b"):
        await create(api, _whole_or_half_claim(f"claim-{name}"))
        await create(api, member(name, "conflict", claim=f"claim-{name}",
                                 nodeSelector={"kubernetes.io/hostname": "gpu-node-1"}))

    async def both_reasons() -> bool:
        text = "\n".join([(await wait_unschedulable(api, n))["message"] for n in ("a", "b")])
        return "cannot allocate all claims" in text and "minCount (2) cannot be satisfied" in text
    await wait_for(both_reasons, message="DRA conflict under an unsatisfied gang")
    assert await bound(api) == []
    for name in ("a", "b"):
        assert (await get_pod(api, name))["status"]["conditions"][0]["reason"] == "Unschedulable"
    allocated = [c for c in (await api.list(RESOURCE_CLAIMS, "default"))["items"]
                 if (c.get("status") or {}).get("allocation")]
    assert len(allocated) <= 1
    assert all(r["device"] == "whole" for c in allocated for r in c["status"]["allocation"]["devices"]["results"])


async def test_basic_policy_is_not_gated(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.create(PODGROUPS, "default", pod_group("loose", None))
    await create(api, member("solo", "loose"))
    await wait_running(api, "solo")
    await scheduled_condition(api, "loose", "True")


async def test_v1alpha1_workload_gang(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await api.create(WORKLOADS_V1ALPHA1, "default", {
        "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "job"},
        "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}})

    def worker(name: str) -> dict[str, Any]:
        return pod_obj(name, workloadRef={"name": "job", "podGroup": "workers"})
    await create(api, worker("w1"))
    assert (await wait_unschedulable(api, "w1"))["message"] == WAITING_FOR_PODS
    await create(api, worker("w2"))
    for name in ("w1", "w2"):
        await wait_running(api, name)


def _one_device_cluster() -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker"},
             "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "worker"},
             "spec": {"driver": "gpu.example.com", "nodeName": "worker", "devices": [{"name": "gpu-0"}],
                      "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1}}}]


@pytest.mark.parametrize(("min_count", "pods"), [(2, 2), (20, 20), (2, 5), (None, 2), (None, 20)],
                         ids=["gang-2-of-2", "gang-20-of-20", "gang-2-with-5", "basic-2", "basic-20"])
async def test_pod_group_members_share_one_claim_on_one_device(api: ApiClient, min_count: int | None,
                                                               pods: int) -> None:
    # Upstream test/integration/dra/pod_group.go: every pod uses ONE claim by name on ONE device.
    for obj in _one_device_cluster():
        await create(api, obj)
    await create(api, claim_obj("shared"))
    await api.create(PODGROUPS, "default", pod_group("group", min_count))
    for i in range(pods):
        await create(api, member(f"p{i}", "group", claim="shared"))
    for i in range(pods):
        await wait_running(api, f"p{i}")
    claim = await api.get(RESOURCE_CLAIMS, "default", "shared")
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
    assert len(claim["status"]["reservedFor"]) == pods


async def test_gang_with_a_pod_group_claim_from_a_template(api: ApiClient) -> None:
    # KEP-5729 under a gang: one claim generated for the PodGroup, reserved for it, used by every member.
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("two-gpus", claim_spec(device_request(count=2))))
    group = pod_group("trio", 3)
    group["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "two-gpus"}]
    created = await api.create(PODGROUPS, "default", group)
    for name in ("a", "b", "c"):
        await create(api, member(name, "trio", template="two-gpus"))
    pods = [await wait_running(api, name) for name in ("a", "b", "c")]
    (claim,) = (await api.list(RESOURCE_CLAIMS, "default"))["items"]
    assert claim["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                               "name": "trio", "uid": created["metadata"]["uid"]}]
    assert len({p["spec"]["nodeName"] for p in pods}) == 1   # the allocation pins them to one node
    await scheduled_condition(api, "trio", "True")
