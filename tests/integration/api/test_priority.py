"""PriorityClass (scheduling.k8s.io/v1) and the Priority admission plugin over raw HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.api.conftest import Api

PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"
PODS = "/api/v1/namespaces/default/pods"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


async def test_the_system_classes_exist(api: Api) -> None:
    listed = await api.ok("GET", PCS)
    assert {(pc["metadata"]["name"], pc["value"], pc["preemptionPolicy"]) for pc in listed["items"]} == {
        ("system-cluster-critical", 2_000_000_000, "PreemptLowerPriority"),
        ("system-node-critical", 2_000_001_000, "PreemptLowerPriority")}


async def test_pods_get_the_priority_and_policy_of_their_class(api: Api) -> None:
    await api.ok("POST", PCS, priority_class("high", 1000, preemptionPolicy="Never"))
    created = await api.ok("POST", PODS, pod("p", priorityClassName="high"))
    assert (created["spec"]["priority"], created["spec"]["preemptionPolicy"]) == (1000, "Never")
    plain = await api.ok("POST", PODS, pod("q"))
    assert (plain["spec"]["priority"], plain["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in plain["spec"]
    # An update that leaves priority out keeps what admission set.
    body = {**created, "spec": {k: v for k, v in created["spec"].items() if k != "priority"}}
    updated = await api.ok("PUT", f"{PODS}/p", body)
    assert updated["spec"]["priority"] == 1000


async def test_the_global_default_class_is_given_to_pods_without_one(api: Api) -> None:
    await api.ok("POST", PCS, priority_class("batch", 10, globalDefault=True))
    created = await api.ok("POST", PODS, pod("p"))
    assert (created["spec"]["priorityClassName"], created["spec"]["priority"]) == ("batch", 10)
    status, body = await api.request("POST", PCS, priority_class("other", 20, globalDefault=True))
    assert (status, body["reason"], body["message"]) == (403, "Forbidden", (
        'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass batch is already marked as '
        "default. Only one default can exist"))
    # The default itself may be updated.
    current = await api.ok("GET", f"{PCS}/batch")
    await api.ok("PUT", f"{PCS}/batch", {**current, "description": "the batch tier"})


@pytest.mark.parametrize(("spec", "message"), [
    ({"priorityClassName": "nope"}, 'pods "p" is forbidden: no PriorityClass with name nope was found'),
    ({"priorityClassName": "high", "priority": 5},
     'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority '
     "admission controller computed 1000 from the given PriorityClass name"),
    ({"priorityClassName": "high", "preemptionPolicy": "PreemptLowerPriority"},
     'pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in '
     "pod spec; priority admission controller computed Never from the given PriorityClass name"),
], ids=["unknown-class", "priority-differs", "policy-differs"])
async def test_pod_admission_refuses(api: Api, spec: dict[str, Any], message: str) -> None:
    await api.ok("POST", PCS, priority_class("high", 1000, preemptionPolicy="Never"))
    status, body = await api.request("POST", PODS, pod("p", **spec))
    assert (status, body["reason"], body["message"]) == (403, "Forbidden", message)
    assert body["details"] == {"name": "p", "kind": "pods"}
    assert (await api.request("GET", f"{PODS}/p"))[0] == 404


@pytest.mark.parametrize(("obj", "message"), [
    (priority_class("huge", 1_000_000_001),
     "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    (priority_class("system-mine", 5),
     "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
     "error: system-mine is not a known system priority class"),
    (priority_class("odd", 5, preemptionPolicy="Sometimes"),
     'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'),
], ids=["above-user-maximum", "reserved-prefix", "unknown-policy"])
async def test_invalid_classes_are_refused(api: Api, obj: dict[str, Any], message: str) -> None:
    status, body = await api.request("POST", PCS, obj)
    assert (status, body["reason"]) == (422, "Invalid")
    assert message in body["message"]


async def test_value_and_policy_are_immutable(api: Api) -> None:
    created = await api.ok("POST", PCS, priority_class("high", 1000))
    status, body = await api.request("PUT", f"{PCS}/high", {**created, "value": 2000,
                                                             "preemptionPolicy": "Never"})
    assert status == 422
    assert body["message"] == ('PriorityClass.scheduling.k8s.io "high" is invalid: [value: Forbidden: may not be '
                               'changed in an update., preemptionPolicy: Invalid value: "Never": field is immutable]')


async def test_pod_groups_get_the_priority_of_their_class(api: Api) -> None:
    await api.ok("POST", PCS, priority_class("high", 1000))
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {"priorityClassName": "high", "schedulingPolicy": {"gang": {"minCount": 2}}}}
    assert (await api.ok("POST", PODGROUPS, group))["spec"]["priority"] == 1000
    status, body = await api.request("POST", PODGROUPS, {**group, "metadata": {"name": "h"},
                                                         "spec": {**group["spec"], "priorityClassName": "nope"}})
    assert (status, body["message"]) == (
        403, 'podgroups.scheduling.k8s.io "h" is forbidden: no PriorityClass with name nope was found')
