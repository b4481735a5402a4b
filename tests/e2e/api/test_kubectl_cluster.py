"""kubectl against a cluster with the control plane: what a user sees when pods are scheduled and run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.fixtures.plugin import Kubectl, wait_for

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import table, to_yaml


def ready_node(name: str) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


@pytest.fixture
def kubectl(fake_cluster: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_cluster)


async def test_run_pod_is_scheduled_and_becomes_ready(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))

    await kubectl.run("run", "p1", "--image=busybox", "--labels=app=web")
    await kubectl.run("wait", "--for=condition=Ready", "pod/p1", "--timeout=10s")

    row = table((await kubectl.run("get", "pods", "-o", "wide")).stdout)["p1"]
    assert row[1:3] == ["1/1", "Running"] and row[6] == "n1"


async def test_describe_explains_a_pending_pod(kubectl: Kubectl) -> None:
    await kubectl.run("run", "p1", "--image=busybox")

    async def described() -> str | None:
        out = (await kubectl.run("describe", "pod", "p1")).stdout
        return out if "FailedScheduling" in out else None

    out = await wait_for(described, message="a FailedScheduling event in kubectl describe")
    assert "default-scheduler" in out[out.index("Events:"):]
    assert table((await kubectl.run("get", "pods")).stdout)["p1"][2] == "Pending"


async def test_delete_of_running_pod_completes(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "p1", "--image=busybox")
    await kubectl.run("wait", "--for=condition=Ready", "pod/p1", "--timeout=10s")

    # kubectl delete waits until the pod is gone: kubelet emulation confirms termination promptly.
    await kubectl.run("delete", "pod", "p1", "--timeout=10s")

    assert (await kubectl.run("get", "pods", "-o", "name")).stdout == ""


async def test_drain_evicts_bound_pods(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "p1", "--image=busybox")
    await kubectl.run("wait", "--for=condition=Ready", "pod/p1", "--timeout=10s")

    out = await kubectl.run("drain", "n1", "--force", "--timeout=10s")

    assert "node/n1 drained" in out.stdout
    assert (await kubectl.run("get", "pods", "-o", "name")).stdout == ""
    assert table((await kubectl.run("get", "nodes")).stdout)["n1"][1] == "Ready,SchedulingDisabled"
