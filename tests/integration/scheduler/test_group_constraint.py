"""The seed's PodGroup-level constraint (fakeapi's draft extension, v1alpha1) end to end.

A Workload's ``podGroups[].resourceClaims[]`` entry names a template and carries
``constraints[].matchAttribute``: each member gets its own claim from the template, and every
device allocated to those claims across one pod-group instance has the same block.
"""

from __future__ import annotations

from typing import Any

from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import PODS, RESOURCE_CLAIMS, RESOURCE_SLICES, WORKLOADS_V1ALPHA1, ApiClient
from sched_helpers import (
    GPU_CLASS,
    add_gpu_node,
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

BLOCK = "gpu/blockName"


async def _blocks(api: ApiClient, **sizes: int) -> None:
    """One node per block, with that many GPUs carrying the block's name."""
    await create(api, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": GPU_CLASS},
                       "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_CLASS}"'}}]}})
    for block, size in sizes.items():
        await add_gpu_node(api, f"node-{block}", size, attributes={BLOCK: {"string": block}})
    await create(api, template_obj("one-gpu", claim_spec(device_request())))


async def _workload(api: ApiClient, min_count: int | None) -> None:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    await api.create(WORKLOADS_V1ALPHA1, "default", {
        "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "training"},
        "spec": {"podGroups": [{"name": "workers", "policy": policy, "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu", "constraints": [{"matchAttribute": BLOCK}]}]}]}})


def _worker(name: str, replica: str = "") -> dict[str, Any]:
    ref = {"name": "training", "podGroup": "workers", **({"podGroupReplicaKey": replica} if replica else {})}
    # Any pod-claim name: the template is what the constraint covers.
    pod = pod_obj(name, template="one-gpu", workloadRef=ref)
    pod["spec"]["resourceClaims"][0]["name"] = "accelerator"
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "accelerator"}]
    return pod


async def _block_of(api: ApiClient, name: str) -> str:
    claim = await pod_claim(api, await wait_running(api, name))
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": name,
                                               "uid": claim["metadata"]["ownerReferences"][0]["uid"]}]
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    return result["pool"].removeprefix("node-")


async def test_gang_gets_a_block_large_enough_for_min_count(api: ApiClient) -> None:
    await _blocks(api, a=2, b=3, c=3)
    await _workload(api, 3)
    for i in range(3):
        await create(api, _worker(f"w{i}"))
    assert {await _block_of(api, f"w{i}") for i in range(3)} == {"b"}   # a is too small; b is first of the rest


async def test_no_block_large_enough_binds_nothing_and_names_the_attribute(api: ApiClient) -> None:
    await _blocks(api, a=2, b=2)
    await _workload(api, 3)
    for i in range(3):
        await create(api, _worker(f"w{i}"))
    condition = await wait_unschedulable(api, "w0")
    assert condition["message"] == ("no device attribute value of the pod group's constraint has room for "
                                    "minCount (3), No preemption victims found for incoming preemptor")
    pods = (await api.list(PODS, "default"))["items"]
    assert not any(p["spec"].get("nodeName") for p in pods)
    claims = (await api.list(RESOURCE_CLAIMS, "default"))["items"]
    assert len(claims) == 3 and not any((c.get("status") or {}).get("allocation") for c in claims)
    # A third device in block b makes it large enough.
    await add_gpu_node(api, "node-b2", 1, attributes={BLOCK: {"string": "b"}})
    for i in range(3):
        await wait_running(api, f"w{i}")


async def test_basic_group_follows_its_first_member_and_chooses_again_once_released(api: ApiClient) -> None:
    await _blocks(api, a=2, b=2)
    await _workload(api, None)
    await create(api, _worker("w0"))
    chosen = await _block_of(api, "w0")   # the first member picks a block (nodes tie on score)
    for i in (1, 2):
        await create(api, _worker(f"w{i}"))
    assert await _block_of(api, "w1") == chosen
    condition = await wait_unschedulable(api, "w2")
    assert f'cannot allocate all claims: the pod group\'s devices must match on {BLOCK}="{chosen}"' in \
        condition["message"]
    # Once no member holds a device of that block, the group may choose again: with the chosen
    # block gone, the last member runs in the other one.
    await api.delete(RESOURCE_SLICES, None, f"node-{chosen}")
    for i in range(2):
        await api.delete(PODS, "default", f"w{i}")
    assert await _block_of(api, "w2") == ({"a", "b"} - {chosen}).pop()


async def test_replica_keys_choose_their_blocks_independently(api: ApiClient) -> None:
    await _blocks(api, a=2, b=2)
    await _workload(api, 2)
    for replica in ("r1", "r2"):
        for i in range(2):
            await create(api, _worker(f"{replica}-{i}", replica))
    blocks = {replica: {await _block_of(api, f"{replica}-{i}") for i in range(2)} for replica in ("r1", "r2")}
    assert sorted(b for chosen in blocks.values() for b in chosen) == ["a", "b"]


async def test_a_device_without_the_attribute_does_not_qualify(api: ApiClient) -> None:
    await _blocks(api, a=1)
    await add_gpu_node(api, "unlabelled", 4)
    await _workload(api, 2)
    for i in range(2):
        await create(api, _worker(f"w{i}"))

    async def explained() -> bool:
        return "minCount (2)" in (await wait_unschedulable(api, "w1"))["message"]
    await wait_for(explained, message="the gang explains why it waits")
    assert not (await get_pod(api, "w0"))["spec"].get("nodeName")
