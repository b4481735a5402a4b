"""A selector that passes admission but exceeds the runtime budget when the scheduler evaluates
it fails that pod's claim with upstream's error; the scheduler carries on."""

from __future__ import annotations

from fakeapi.scheduler.client import ApiClient
from sched_helpers import (
    apply_manifest,
    claim_spec,
    create,
    device_request,
    pod_obj,
    template_obj,
    wait_running,
    wait_unschedulable,
)

from fakeapi.machinery.cel_cost import COST_LIMIT_EXCEEDED


async def test_runtime_budget_is_reported_on_the_pod(api: ApiClient) -> None:
    # Cheap by the estimate (~40,000), but 10,201 loop iterations: more than the engine allows.
    items = "[" + ",".join(["1"] * 101) + "]"
    spec = claim_spec(device_request(selectors=[f"{items}.all(x, {items}.all(y, x == y))"]))
    await apply_manifest(api, "gpu-cluster.yaml")
    await create(api, template_obj("busy", spec))
    await create(api, pod_obj("p", template="busy"))
    condition = await wait_unschedulable(api, "p", reason="SchedulerError")
    assert condition["message"].startswith('running "DynamicResources" filter plugin: claim default/p-')
    assert condition["message"].endswith(f": CEL runtime error: {COST_LIMIT_EXCEEDED}")
    await create(api, template_obj("good"))
    await create(api, pod_obj("q", template="good"))
    await wait_running(api, "q")
