"""DRA scheduling end to end on the full control plane (FakeCluster with scheduler + controllers)."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import EVENTS, EVENTS_V1, PODGROUPS, PODS, RESOURCE_CLAIMS, ApiClient
from sched_helpers import (
    GPU_CLASS,
    apply_manifest,
    claim_obj,
    claim_spec,
    create,
    device_request,
    devices_of,
    get_pod,
    pod_claim,
    pod_obj,
    template_obj,
    wait_running,
    wait_unschedulable,
)

from fakeapi.cluster import FakeCluster
from fakeapi.machinery.finalizers import DELETE_PROTECTION_FINALIZER


async def _run_with_spec(api: ApiClient, spec: dict[str, Any]) -> dict[str, Any]:
    """Create a template with ``spec`` and a pod using it; return the pod's allocated claim."""
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("tmpl", spec))
    await create(api, pod_obj("p", template="tmpl"))
    pod = await wait_running(api, "p")
    return await pod_claim(api, pod)


async def test_template_claim_generated_allocated_bound_running(api: ApiClient) -> None:
    claim = await _run_with_spec(api, claim_spec())
    pod = await get_pod(api, "p")
    assert pod["spec"]["nodeName"] in ("gpu-node-1", "gpu-node-2")
    assert DELETE_PROTECTION_FINALIZER in claim["metadata"]["finalizers"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}]
    ((request, device),) = devices_of(claim)
    assert request == "gpu" and device.startswith(pod["spec"]["nodeName"] + "/")
    node_terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert node_terms[0]["matchFields"][0]["values"] == [pod["spec"]["nodeName"]]

    async def scheduled_event() -> list[dict[str, Any]]:
        events = (await api.list(EVENTS, "default"))["items"]
        return [e for e in events if e["reason"] == "Scheduled" and e["involvedObject"]["name"] == "p"
                and e["message"] == f"Successfully assigned default/p to {pod['spec']['nodeName']}"]
    [event] = await wait_for(scheduled_event, message="Scheduled event")
    # Written as kube-scheduler writes it: an events.k8s.io/v1 Event of the Binding action.
    v1 = await api.get(EVENTS_V1, "default", event["metadata"]["name"])
    assert (v1["action"], v1["type"], v1["reportingController"]) == ("Binding", "Normal", "default-scheduler")
    assert v1["regarding"]["uid"] == pod["metadata"]["uid"] and v1["note"] == event["message"]
    assert v1["eventTime"] and "series" not in v1 and not event.get("count")


async def test_control_plane_writes_keep_every_managers_fields(api: ApiClient) -> None:
    """The control plane's informers hold objects without managedFields (as upstream's trim them);
    its writes of those objects (claim finalizer and status, pod status) leave the stored entries
    of other managers in place, as a write without managedFields does upstream.  Each component
    writes under its upstream name (what the apiserver makes of its User-Agent): the claim
    controller as kube-controller-manager, the scheduler as kube-scheduler, the kubelet as kubelet."""
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("tmpl", claim_spec()))
    await api.create(PODS, "default", pod_obj("p", template="tmpl"), field_manager="test-creator")
    pod = await wait_running(api, "p")
    claim = await pod_claim(api, pod)

    def owners(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(m["manager"], m.get("subresource", "")): m["fieldsV1"] for m in obj["metadata"]["managedFields"]}

    pod_owners = owners(pod)
    assert set(pod_owners) == {("test-creator", ""), ("kube-controller-manager", "status"), ("kubelet", "status")}
    assert set(pod_owners["kube-controller-manager", "status"]["f:status"]) == {"f:resourceClaimStatuses"}
    assert {"f:phase", "f:conditions", "f:podIP"} <= set(pod_owners["kubelet", "status"]["f:status"])
    claim_owners = owners(claim)
    assert set(claim_owners) == {("kube-controller-manager", ""), ("kube-scheduler", ""), ("kube-scheduler", "status")}
    assert "f:spec" in claim_owners["kube-controller-manager", ""]   # the controller's create
    assert claim_owners["kube-scheduler", ""] == {"f:metadata": {"f:finalizers": {
        ".": {}, f'v:"{DELETE_PROTECTION_FINALIZER}"': {}}}}   # PreBind's finalizer
    assert set(claim_owners["kube-scheduler", "status"]["f:status"]) == {"f:allocation", "f:reservedFor"}


@pytest.mark.parametrize(("selector", "want_devices"), [
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("60Gi")) >= 0', {"gpu-2", "gpu-3"}),
    ('device.attributes["gpu.example.com"].model == "A100"', {"gpu-0", "gpu-1"}),
    ("device.attributes[\"gpu.example.com\"].index == 3", {"gpu-3"}),
], ids=["quantity", "string", "int"])
async def test_cel_selectors(api: ApiClient, selector: str, want_devices: set[str]) -> None:
    claim = await _run_with_spec(api, claim_spec(device_request(selectors=[selector])))
    ((_, device),) = devices_of(claim)
    assert device.split("/")[1] in want_devices


async def test_match_attribute(api: ApiClient) -> None:
    # Two A100s are numa 0; asking for one A100 and one numa-matching GPU must pick numa 0 twice.
    spec = claim_spec(
        device_request("a", selectors=['device.attributes["gpu.example.com"].model == "A100"']),
        device_request("b"),
        constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    claim = await _run_with_spec(api, spec)
    devices = [d.split("/")[1] for _, d in devices_of(claim)]
    assert sorted(devices) == ["gpu-0", "gpu-1"]


async def test_first_available_falls_through(api: ApiClient) -> None:
    spec = claim_spec({"name": "gpu", "firstAvailable": [
        {"name": "b200", "deviceClassName": GPU_CLASS,
         "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "B200"'}}]},
        {"name": "h100", "deviceClassName": GPU_CLASS,
         "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}]},
    ]})
    claim = await _run_with_spec(api, spec)
    ((request, device),) = devices_of(claim)
    assert request == "gpu/h100" and device.split("/")[1] in ("gpu-2", "gpu-3")


async def test_allocation_mode_all(api: ApiClient) -> None:
    spec = claim_spec(device_request(mode="All", selectors=['device.attributes["gpu.example.com"].numa == 1']))
    claim = await _run_with_spec(api, spec)
    devices = sorted(d.split("/")[1] for _, d in devices_of(claim))
    assert devices == ["gpu-2", "gpu-3"]


async def test_claim_shared_by_name_is_reserved_for_all_pods(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, claim_obj("shared"))
    for i in range(3):
        await create(api, pod_obj(f"p{i}", claim="shared"))
    pods = [await wait_running(api, f"p{i}") for i in range(3)]
    claim = await api.get(RESOURCE_CLAIMS, "default", "shared")
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["p0", "p1", "p2"]
    assert len({p["spec"]["nodeName"] for p in pods}) == 1   # the allocation pins them to one node


async def test_exhaustion_pending_until_a_pod_finishes(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("tmpl"))
    for i in range(8):
        await create(api, pod_obj(f"p{i}", template="tmpl"))
    for i in range(8):
        await wait_running(api, f"p{i}")
    await create(api, pod_obj("extra", template="tmpl"))
    condition = await wait_unschedulable(api, "extra")
    # Preemption never frees devices in 1.37 (DRA-aware preemption is KEP-5690, later).
    assert condition["message"] == ("0/2 nodes are available: 2 cannot allocate all claims. "
                                    "no new claims to deallocate, preemption: 0/2 nodes are available: "
                                    "2 Preemption is not helpful for scheduling..")

    async def failed_event() -> list[dict[str, Any]]:
        events = (await api.list(EVENTS_V1, "default"))["items"]
        return [e for e in events if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "extra"]
    failed = await wait_for(failed_event, message="FailedScheduling event")
    assert {(e["action"], e["type"], e["note"]) for e in failed} == {("Scheduling", "Warning", condition["message"])}

    done = await get_pod(api, "p3")
    await api.patch(PODS, "default", "p3", {"status": {"phase": "Succeeded"}}, subresource="status")
    pod = await wait_running(api, "extra")
    assert pod["spec"]["nodeName"] == done["spec"]["nodeName"]


async def test_deleting_a_pod_frees_its_device(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("tmpl", claim_spec(device_request(count=4))))
    await create(api, pod_obj("a", template="tmpl"))
    await create(api, pod_obj("b", template="tmpl"))
    await wait_running(api, "a")
    await wait_running(api, "b")
    await create(api, pod_obj("c", template="tmpl"))
    await wait_unschedulable(api, "c")
    await api.delete(PODS, "default", "a")
    await wait_running(api, "c")


async def test_device_taints_block_unless_tolerated(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "broken"},
            "spec": {"deviceSelector": {"driver": GPU_CLASS},
                     "taint": {"key": "example.com/broken", "value": "true", "effect": "NoSchedule"}}}
    await create(api, rule)
    await create(api, template_obj("plain"))
    await create(api, pod_obj("untolerant", template="plain"))
    condition = await wait_unschedulable(api, "untolerant")
    assert "cannot allocate all claims" in condition["message"]
    tolerant = claim_spec(device_request(tolerations=[{"key": "example.com/broken", "operator": "Exists"}]))
    await create(api, template_obj("tolerant", tolerant))
    await create(api, pod_obj("tolerant", template="tolerant"))
    claim = await pod_claim(api, await wait_running(api, "tolerant"))
    assert claim["status"]["allocation"]["devices"]["results"][0]["tolerations"]


async def test_counters_limit_partitions(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    pool = {"name": "gpu-node-1-parts", "generation": 1, "resourceSliceCount": 2}
    counters = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": "parts-counters"},
                "spec": {"driver": "parts.example.com", "nodeName": "gpu-node-1", "pool": pool,
                         "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "8Gi"}}}]}}
    devices = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "parts-devices"},
               "spec": {"driver": "parts.example.com", "nodeName": "gpu-node-1", "pool": pool, "devices": [
                   {"name": f"half-{i}", "consumesCounters": [{"counterSet": "mem",
                                                               "counters": {"memory": {"value": "4Gi"}}}]}
                   for i in range(3)]}}
    await create(api, counters)
    await create(api, devices)
    parts_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                   "metadata": {"name": "parts.example.com"},
                   "spec": {"selectors": [{"cel": {"expression": 'device.driver == "parts.example.com"'}}]}}
    await create(api, parts_class)
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "parts.example.com"}}]}}
    await create(api, template_obj("parts", spec))
    for name in ("a", "b", "c"):
        await create(api, pod_obj(name, template="parts"))
    await wait_running(api, "a")
    await wait_running(api, "b")
    condition = await wait_unschedulable(api, "c")   # 3 x 4Gi > 8Gi of shared counter
    assert "cannot allocate all claims" in condition["message"]


async def test_admin_access_takes_an_allocated_device(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, {"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": "admin", "labels": {"resource.kubernetes.io/admin-access": "true"}}})
    await create(api, template_obj("all", claim_spec(device_request(count=4))))
    await create(api, pod_obj("user1", template="all"))
    await create(api, pod_obj("user2", template="all"))
    await wait_running(api, "user1")
    await wait_running(api, "user2")
    admin = claim_obj("monitor", claim_spec(device_request(adminAccess=True)))
    await create(api, admin, namespace="admin")
    await create(api, pod_obj("monitor", claim="monitor"), namespace="admin")

    async def admin_running() -> dict[str, Any] | None:
        pod = await api.get(PODS, "admin", "monitor")
        return pod if pod["status"].get("phase") == "Running" else None
    await wait_for(admin_running, message="admin pod Running")
    claim = await api.get(RESOURCE_CLAIMS, "admin", "monitor")
    assert claim["status"]["allocation"]["devices"]["results"][0]["adminAccess"] is True


async def test_incomplete_pool_is_not_used(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    incomplete = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "half-pool"},
                  "spec": {"driver": "other.example.com", "nodeName": "gpu-node-1",
                           "pool": {"name": "half", "generation": 1, "resourceSliceCount": 2},
                           "devices": [{"name": "dev-0"}]}}
    await create(api, incomplete)
    other_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                   "metadata": {"name": "other.example.com"},
                   "spec": {"selectors": [{"cel": {"expression": 'device.driver == "other.example.com"'}}]}}
    await create(api, other_class)
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "other.example.com"}}]}}
    await create(api, template_obj("other", spec))
    await create(api, pod_obj("p", template="other"))
    condition = await wait_unschedulable(api, "p")
    assert "cannot allocate all claims" in condition["message"]


async def test_bad_cel_is_reported_on_the_pod(api: ApiClient) -> None:
    # Compiles (so admission accepts it) but fails at runtime: the attribute does not exist.
    spec = claim_spec(device_request(selectors=['device.attributes["gpu.example.com"].nosuch == "x"']))
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("bad", spec))
    await create(api, pod_obj("p", template="bad"))
    condition = await wait_unschedulable(api, "p", reason="SchedulerError")
    assert condition["message"].startswith('running "DynamicResources" filter plugin: ')
    # The scheduler survived: a good pod still schedules.
    await create(api, template_obj("good"))
    await create(api, pod_obj("q", template="good"))
    await wait_running(api, "q")


async def test_missing_device_class_waits_for_it(api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "late.example.com"}}]}}
    await create(api, template_obj("late", spec))
    await create(api, pod_obj("p", template="late"))
    condition = await wait_unschedulable(api, "p")
    assert condition["message"] == "0/2 nodes are available: request gpu: device class late.example.com " \
                                   "does not exist. no new claims to deallocate, preemption: 0/2 nodes are " \
                                   "available: 2 Preemption is not helpful for scheduling.."
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                       "metadata": {"name": "late.example.com"}, "spec": {}})
    await wait_running(api, "p")


@pytest.mark.fakeapi(feature_gates="DRAWorkloadResourceClaims=true")
async def test_podgroup_claim_reserved_for_the_group(fake_cluster: FakeCluster, api: ApiClient) -> None:
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, claim_obj("group-claim"))
    group = await api.create(PODGROUPS, "default", {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
        "spec": {"schedulingPolicy": {"basic": {}},
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "group-claim"}]}})
    for name in ("m1", "m2"):
        await create(api, pod_obj(name, claim="group-claim", schedulingGroup={"podGroupName": "pg"}))
    await wait_running(api, "m1")
    await wait_running(api, "m2")
    claim = await api.get(RESOURCE_CLAIMS, "default", "group-claim")
    assert claim["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                               "name": "pg", "uid": group["metadata"]["uid"]}]
