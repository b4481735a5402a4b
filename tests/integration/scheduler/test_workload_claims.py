"""KEP-5729 end to end, as upstream's integration test ``TestDRA/*/WorkloadResourceClaims`` runs it.

A PodGroup names claim X by name; every pod of the group uses X and its own shared claim P.
X is reserved for the PodGroup (one entry, whatever the number of pods), P for each pod; pods
going away never release X, the PodGroup going away does.  With DRAWorkloadResourceClaims off,
the API server drops the PodGroup's claims and X is an ordinary pod claim.
"""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import PODGROUPS, PODS, RESOURCE_CLAIMS, ApiClient
from sched_helpers import claim_obj, create, wait_running

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker", "labels": {"kubernetes.io/hostname": "worker"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "worker-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "worker",
                  "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}
PODGROUP = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "podgroup"},
            "spec": {"schedulingPolicy": {"basic": {}},
                     "resourceClaims": [{"name": "x", "resourceClaimName": "x"}]}}


def member(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulingGroup": {"podGroupName": "podgroup"},
                     "resourceClaims": [{"name": "p", "resourceClaimName": "p"},
                                        {"name": "x", "resourceClaimName": "x"}],
                     "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "p"},
                                                                                          {"name": "x"}]}}]}}


async def _cluster(api: ApiClient) -> None:
    for obj in (NODE, DEVICE_CLASS, SLICE, claim_obj("x"), claim_obj("p")):
        await create(api, obj)


async def _reserved(api: ApiClient, claim: str) -> list[tuple[str, str]]:
    obj = await api.get(RESOURCE_CLAIMS, "default", claim)
    return sorted((r["resource"], r["name"]) for r in (obj.get("status") or {}).get("reservedFor") or [])


async def _until_reserved(api: ApiClient, claim: str, expected: list[tuple[str, str]]) -> None:
    async def matches() -> bool:
        return await _reserved(api, claim) == expected
    await wait_for(matches, 10, message=f"{claim} reserved for {expected}")


async def _delete_pod(api: ApiClient, name: str) -> None:
    await api.delete(PODS, "default", name)

    async def gone() -> bool:
        return not [p for p in (await api.list(PODS, "default"))["items"] if p["metadata"]["name"] == name]
    await wait_for(gone, 10, message=f"pod {name} gone")


async def test_podgroup_claim_is_reserved_for_the_group_through_the_pods_lifecycle(api: ApiClient) -> None:
    await _cluster(api)
    group = await api.create(PODGROUPS, "default", PODGROUP)
    assert group["spec"]["resourceClaims"] == [{"name": "x", "resourceClaimName": "x"}]

    await create(api, member("pod-1"))
    await wait_running(api, "pod-1")
    await _until_reserved(api, "p", [("pods", "pod-1")])
    x = await api.get(RESOURCE_CLAIMS, "default", "x")
    assert x["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                           "name": "podgroup", "uid": group["metadata"]["uid"]}]
    assert x["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["worker"]

    await create(api, member("pod-2"))
    await wait_running(api, "pod-2")
    await _until_reserved(api, "p", [("pods", "pod-1"), ("pods", "pod-2")])
    assert await _reserved(api, "x") == [("podgroups", "podgroup")], "later pods add no entries for X"

    await _delete_pod(api, "pod-1")
    await _until_reserved(api, "p", [("pods", "pod-2")])
    assert await _reserved(api, "x") == [("podgroups", "podgroup")]

    await _delete_pod(api, "pod-2")
    await _until_reserved(api, "p", [])
    x = await api.get(RESOURCE_CLAIMS, "default", "x")
    assert x["status"]["allocation"] and await _reserved(api, "x") == [("podgroups", "podgroup")], \
        "deleting pods never releases a PodGroup claim"

    await api.delete(PODGROUPS, "default", "podgroup")  # protection lets it go: no live member pods
    await _until_reserved(api, "x", [])

    async def deallocated() -> bool:
        claim = await api.get(RESOURCE_CLAIMS, "default", "x")
        return not (claim.get("status") or {}).get("allocation") and not claim["metadata"].get("finalizers")
    await wait_for(deallocated, 10, message="X deallocated and its finalizer removed")


@pytest.mark.fakeapi(feature_gates="DRAWorkloadResourceClaims=false")
async def test_with_the_gate_off_the_group_claim_is_an_ordinary_pod_claim(api: ApiClient) -> None:
    await _cluster(api)
    group = await api.create(PODGROUPS, "default", PODGROUP)
    assert "resourceClaims" not in group["spec"], "the API server drops the field with the gate off"
    await create(api, member("pod-1"))
    await wait_running(api, "pod-1")
    await _until_reserved(api, "x", [("pods", "pod-1")])
