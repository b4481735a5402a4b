"""PriorityClass with real clients: kubectl 1.37 (create priorityclass, get, apply) and the official client."""

from __future__ import annotations

import json

import pytest
from fakeapi.fixtures.plugin import Kubectl
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.e2e.api.conftest import call, pod, table, to_yaml


async def test_kubectl_creates_lists_and_uses_priority_classes(kubectl: Kubectl) -> None:
    created = await kubectl.run("create", "priorityclass", "high", "--value=1000", "--preemption-policy=Never",
                                "--description=may wait, never preempts")
    assert created.stdout.strip() == "priorityclass.scheduling.k8s.io/high created"
    rows = table((await kubectl.run("get", "pc")).stdout)
    assert rows["NAME"] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert rows["high"][1:3] + rows["high"][4:] == ["1000", "false", "Never"]
    assert rows["system-node-critical"][1:3] == ["2000001000", "false"]
    await kubectl.run("apply", "-f", "-", input=to_yaml({**pod("p"), "spec": {**pod("p")["spec"],
                                                                            "priorityClassName": "high"}}))
    spec = json.loads((await kubectl.run("get", "pod", "p", "-o", "json")).stdout)["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "Never")
    refused = await kubectl.run("create", "priorityclass", "other", "--value=5", "--global-default",
                                check=False)
    assert refused.returncode == 0   # the first default is fine
    second = await kubectl.run("create", "priorityclass", "third", "--value=6", "--global-default", check=False)
    assert second.returncode != 0
    assert ('priorityclasses.scheduling.k8s.io "third" is forbidden: PriorityClass other is already marked as '
            "default. Only one default can exist") in second.stderr


async def test_official_client_sees_priority_admission(api_client: client.ApiClient) -> None:
    scheduling, core = client.SchedulingV1Api(api_client), client.CoreV1Api(api_client)
    await call(scheduling.create_priority_class, client.V1PriorityClass(
        metadata=client.V1ObjectMeta(name="batch"), value=10, global_default=True))
    created = await call(core.create_namespaced_pod, "default", pod("p"))
    assert (created.spec.priority_class_name, created.spec.priority) == ("batch", 10)
    with pytest.raises(ApiException) as refused:
        await call(core.create_namespaced_pod, "default",
                   {**pod("q"), "spec": {**pod("q")["spec"], "priorityClassName": "nope"}})
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == \
        'pods "q" is forbidden: no PriorityClass with name nope was found'
    classes = await call(scheduling.list_priority_class)
    assert sorted(pc.metadata.name for pc in classes.items) == ["batch", "system-cluster-critical",
                                                                 "system-node-critical"]
