"""The device-taint-eviction controller end to end (KEP-5055): NoExecute taints on allocated
devices, from a ResourceSlice or a DeviceTaintRule, evict the pods using them; tolerations
delay or prevent it; DeviceTaintRule status reports progress; a PodGroup's shared claim takes
every pod of the group along (KEP-5729, upstream's e2e "DeviceTaintRule evicts pod with
PodGroup claim")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from fakeapi.fixtures.plugin import Kubectl, wait_for
from fakeapi.scheduler.client import DEVICE_TAINT_RULES, EVENTS, PODGROUPS, RESOURCE_SLICES, ApiClient
from fakeapi.scheduler.clock import ManualClock
from fakeapi.scheduler.controllers.devicetainteviction import RULE_STATUS_PERIOD
from sched_helpers import (
    add_gpu_node,
    claim_obj,
    claim_spec,
    create,
    device_request,
    devices_of,
    get_pod,
    pod_claim,
    pod_obj,
    wait_running,
    wait_unschedulable,
)

from fakeapi.cluster import FakeCluster

NS = "default"
HOLD = "example.com/hold"  # keeps an evicted pod readable after the kubelet let it go
GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
MAINTENANCE = {"key": "example.com/maintenance", "value": "now", "effect": "NoExecute"}
TOLERATE_A_MINUTE = [{"key": MAINTENANCE["key"], "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]


@pytest_asyncio.fixture
async def clocked(tmp_path: Path) -> AsyncIterator[tuple[ApiClient, ManualClock, Kubectl]]:
    """A cluster whose control plane runs on a ManualClock, with one node of two GPUs."""
    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster, ApiClient(cluster.url) as api:
        await create(api, GPU_CLASS)
        await add_gpu_node(api, "node-1", gpus=2)
        yield api, clock, Kubectl(Path(cluster.kubeconfig_path), tmp_path)


def held(pod: dict[str, Any]) -> dict[str, Any]:
    pod["metadata"]["finalizers"] = [HOLD]
    return pod


def taint_rule(name: str, device: tuple[str, str], taint: dict[str, Any] | None = None) -> dict[str, Any]:
    pool, device_name = device
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": pool, "device": device_name},
                     "taint": dict(taint or MAINTENANCE)}}


async def running_with_claim(api: ApiClient, name: str, tolerations: list[dict[str, Any]] | None = None
                             ) -> tuple[str, str]:
    """Start pod ``name`` (held by a finalizer) with its own claim; the (pool, device) it got."""
    extra = {"tolerations": tolerations} if tolerations else {}
    await create(api, claim_obj(f"{name}-claim", claim_spec(device_request(**extra))))
    await create(api, held(pod_obj(name, claim=f"{name}-claim")))
    claim = await pod_claim(api, await wait_running(api, name))
    pool, device = devices_of(claim)[0][1].split("/")
    return pool, device


async def evicted(api: ApiClient, name: str) -> dict[str, Any]:
    async def deleting() -> dict[str, Any] | None:
        pod = await get_pod(api, name)
        return pod if pod["metadata"].get("deletionTimestamp") else None
    return await wait_for(deleting, message=f"pod {name} deleted")


def disruption(pod: dict[str, Any]) -> tuple[str, str, str] | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c["type"] == "DisruptionTarget":
            return c["status"], c["reason"], c["message"]
    return None


async def rule_condition(api: ApiClient, name: str, reason: str) -> dict[str, Any]:
    async def condition() -> dict[str, Any] | None:
        rule = await api.get(DEVICE_TAINT_RULES, None, name)
        found = [c for c in (rule.get("status") or {}).get("conditions") or () if c["type"] == "EvictionInProgress"]
        return found[0] if found and found[0]["reason"] == reason else None
    return await wait_for(condition, message=f"rule {name} EvictionInProgress/{reason}")


async def pod_events(api: ApiClient, name: str) -> list[tuple[str, str]]:
    events = (await api.list(EVENTS, NS))["items"]
    return [(e["reason"], e["message"]) for e in events
            if e["involvedObject"]["name"] == name and e["reason"] == "DeviceTaintManagerEviction"]


async def test_a_noexecute_slice_taint_evicts_the_pod_using_the_device(api: ApiClient) -> None:
    await create(api, GPU_CLASS)
    await add_gpu_node(api, "node-1", gpus=2)
    pool, device = await running_with_claim(api, "victim")
    await running_with_claim(api, "bystander")  # on the other GPU

    slice_obj = await api.get(RESOURCE_SLICES, None, "node-1")
    for d in slice_obj["spec"]["devices"]:
        if d["name"] == device:
            d["taints"] = [dict(MAINTENANCE)]
    updated = await api.update(RESOURCE_SLICES, None, slice_obj)
    [taint] = next(d for d in updated["spec"]["devices"] if d["name"] == device)["taints"]
    assert taint["timeAdded"]  # set by the API server

    pod = await evicted(api, "victim")
    assert disruption(pod) == ("True", "DeletionByDeviceTaintManager",
                               "Device Taint manager: deleting due to NoExecute taint")
    await wait_for(lambda: pod_events(api, "victim"), message="the eviction Event")
    assert await pod_events(api, "victim") == [("DeviceTaintManagerEviction", "Marking for deletion")]
    bystander = await get_pod(api, "bystander")
    assert not bystander["metadata"].get("deletionTimestamp") and disruption(bystander) is None
    assert pool == "node-1"


async def test_toleration_seconds_delay_eviction_and_the_rule_reports_progress(
        clocked: tuple[ApiClient, ManualClock, Kubectl]) -> None:
    api, clock, kubectl = clocked
    device = await running_with_claim(api, "patient", TOLERATE_A_MINUTE)
    await create(api, taint_rule("drain", device))

    pending = await rule_condition(api, "drain", "PodsPendingEviction")
    assert (pending["status"], pending["message"]) == ("True", "1 pod needs to be evicted in 1 namespace.")
    assert not (await get_pod(api, "patient"))["metadata"].get("deletionTimestamp")

    await clock.advance(62)  # past timeAdded + 60 s
    pod = await evicted(api, "patient")
    assert disruption(pod) is not None

    await clock.advance(RULE_STATUS_PERIOD)
    # How KEP-5055 means a user to wait for an eviction to complete.
    await kubectl.run("wait", "--for=condition=EvictionInProgress=false", "devicetaintrule/drain", "--timeout=10s")
    done = await rule_condition(api, "drain", "Completed")
    assert (done["status"], done["message"]) == ("False", "1 pod evicted since starting the controller.")
    rule = await api.get(DEVICE_TAINT_RULES, None, "drain")
    managers = {m["manager"]: m.get("subresource") for m in rule["metadata"]["managedFields"]}
    assert managers["device-taint-eviction-controller"] == "status"


async def test_removing_the_taint_in_time_cancels_the_eviction(
        clocked: tuple[ApiClient, ManualClock, Kubectl]) -> None:
    api, clock, _ = clocked
    device = await running_with_claim(api, "spared", TOLERATE_A_MINUTE)
    await create(api, taint_rule("drain", device))
    await rule_condition(api, "drain", "PodsPendingEviction")
    await api.delete(DEVICE_TAINT_RULES, None, "drain")
    await wait_for(lambda: pod_events(api, "spared"), message="the cancellation Event")
    assert await pod_events(api, "spared") == [("DeviceTaintManagerEviction", "Cancelling deletion")]

    # A second rule that the pod tolerates for ever shows nothing to do once time has passed.
    forever = [{"key": MAINTENANCE["key"], "operator": "Exists", "effect": "NoExecute"}]
    other = await running_with_claim(api, "tolerant", forever)
    await clock.advance(62)
    await create(api, taint_rule("tolerated", other))
    condition = await rule_condition(api, "tolerated", "NotStarted")
    assert condition["status"] == "False"
    for name in ("spared", "tolerant"):
        pod = await get_pod(api, name)
        assert not pod["metadata"].get("deletionTimestamp") and disruption(pod) is None


async def test_a_rule_without_effect_reports_what_noexecute_would_do(api: ApiClient) -> None:
    await create(api, GPU_CLASS)
    await add_gpu_node(api, "node-1", gpus=2)
    await running_with_claim(api, "safe")
    rule = taint_rule("dry-run", ("node-1", "ignored"), {**MAINTENANCE, "effect": "None"})
    del rule["spec"]["deviceSelector"]["device"]  # the whole pool: two devices, one allocated
    await create(api, rule)
    condition = await rule_condition(api, "dry-run", "NoEffect")
    assert condition["message"] == (
        "2 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace "
        "if the effect was NoExecute. This information will not be updated again. "
        "Recreate the DeviceTaintRule to trigger an update.")
    assert not (await get_pod(api, "safe"))["metadata"].get("deletionTimestamp")

    # NoSchedule evicts nothing either; turning it to NoExecute restarts the taint's clock.
    rule = await api.get(DEVICE_TAINT_RULES, None, "dry-run")
    rule["spec"]["taint"]["effect"] = "NoExecute"
    rule["spec"]["taint"]["timeAdded"] = "2020-01-01T00:00:00Z"  # a client's own choice is kept
    changed = await api.update(DEVICE_TAINT_RULES, None, rule)
    assert changed["spec"]["taint"]["timeAdded"] == "2020-01-01T00:00:00Z"
    await evicted(api, "safe")


async def test_an_effect_change_restamps_time_added(api: ApiClient) -> None:
    created = await create(api, taint_rule("stamp", ("pool", "dev"), {**MAINTENANCE, "effect": "NoSchedule",
                                                                      "timeAdded": "2020-01-01T00:00:00Z"}))
    assert created["spec"]["taint"]["timeAdded"] == "2020-01-01T00:00:00Z"
    await rule_condition(api, "stamp", "OtherEffect")  # the controller's status write, before ours
    rule = await api.get(DEVICE_TAINT_RULES, None, "stamp")
    rule["spec"]["taint"]["value"] = "later"  # same effect: the time stays
    kept = await api.update(DEVICE_TAINT_RULES, None, rule)
    assert kept["spec"]["taint"]["timeAdded"] == "2020-01-01T00:00:00Z"
    kept["spec"]["taint"]["effect"] = "None"  # new effect, old time: the server stamps now
    restamped = await api.update(DEVICE_TAINT_RULES, None, kept)
    assert restamped["spec"]["taint"]["timeAdded"] > "2026-"


async def test_a_device_taint_rule_evicts_every_pod_of_a_pod_group(api: ApiClient) -> None:
    await create(api, GPU_CLASS)
    await add_gpu_node(api, "node-1", gpus=2)
    await create(api, claim_obj("shared"))
    await api.create(PODGROUPS, NS, {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "group"},
        "spec": {"schedulingPolicy": {"basic": {}},
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}})
    for name in ("member-1", "member-2"):
        await create(api, held(pod_obj(name, claim="shared", schedulingGroup={"podGroupName": "group"})))
    claim = await pod_claim(api, await wait_running(api, "member-1"))
    await wait_running(api, "member-2")
    assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["podgroups"]

    pool, device = devices_of(claim)[0][1].split("/")
    await create(api, taint_rule("broken", (pool, device)))
    for name in ("member-1", "member-2"):
        assert disruption(await evicted(api, name)) is not None


async def test_no_new_pod_reserves_a_claim_whose_pods_are_being_evicted(api: ApiClient) -> None:
    """KEP-5055: "The scheduler will not let new pods reserve the claim while it has these
    tainted devices."  Tolerated with seconds, the pods go later; a newcomer still may not join."""
    await create(api, GPU_CLASS)
    await add_gpu_node(api, "node-1", gpus=2)
    device = await running_with_claim(api, "first", TOLERATE_A_MINUTE)
    await create(api, taint_rule("drain", device))
    await rule_condition(api, "drain", "PodsPendingEviction")

    await create(api, pod_obj("latecomer", claim="first-claim"))
    condition = await wait_unschedulable(api, "latecomer")
    assert "NoExecute taint that the claim does not tolerate" in condition["message"]

    await api.delete(DEVICE_TAINT_RULES, None, "drain")  # the taint goes: the latecomer joins
    await wait_running(api, "latecomer")
