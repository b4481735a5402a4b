"""kubectl against a cluster with the control plane: what a user sees when pods are scheduled and run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fakeapi.fixtures.plugin import Kubectl, wait_for
from fakeapi.scheduler.clock import ManualClock

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


def held_pod(name: str, **annotations: str) -> dict[str, Any]:
    """A pod on n1 that a finalizer keeps after its deletion, so its last status can be read."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": annotations, "finalizers": ["example.com/hold"]},
            "spec": {"nodeName": "n1", "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}


@pytest.mark.fakeapi_only
@pytest.mark.fakeapi(clock=ManualClock())
async def test_get_pods_shows_terminating_then_how_the_containers_ended(fake_cluster: FakeCluster,
                                                                         kubectl: Kubectl) -> None:
    """kubectl's STATUS column as upstream prints it: Terminating while a deleted pod's containers
    stop (``terminate-after``), then the containers' reason (Error: SIGTERM), Completed for a pod
    that ran to its end (``run-for``)."""
    await kubectl.run("apply", "-f", "-", input=to_yaml(
        ready_node("n1"), held_pod("slow", **{"fakeapi.dev/terminate-after": "10s"}),
        held_pod("batch", **{"fakeapi.dev/run-for": "5s"})))
    await kubectl.run("wait", "--for=condition=Ready", "pod/slow", "pod/batch", "--timeout=10s")
    waiting = fake_cluster.clock.pending
    await kubectl.run("delete", "pod", "slow", "--wait=false")
    await wait_for(lambda: fake_cluster.clock.pending > waiting, message="the kubelet to wait for the containers")
    assert table((await kubectl.run("get", "pods")).stdout)["slow"][1:4] == ["1/1", "Terminating", "0"]

    await fake_cluster.clock.advance(10)
    await kubectl.run("wait", "--for=jsonpath={.status.phase}=Failed", "pod/slow", "--timeout=10s")
    await kubectl.run("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/batch", "--timeout=10s")
    rows = table((await kubectl.run("get", "pods")).stdout)
    assert rows["slow"][1:4] == ["0/1", "Error", "0"]
    assert rows["batch"][1:4] == ["0/1", "Completed", "0"]

    await kubectl.run("patch", "pod", "slow", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    await kubectl.run("wait", "--for=delete", "pod/slow", "--timeout=10s")


async def test_drain_evicts_bound_pods(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "p1", "--image=busybox")
    await kubectl.run("wait", "--for=condition=Ready", "pod/p1", "--timeout=10s")

    out = await kubectl.run("drain", "n1", "--force", "--timeout=10s")

    assert "node/n1 drained" in out.stdout
    assert (await kubectl.run("get", "pods", "-o", "name")).stdout == ""
    assert table((await kubectl.run("get", "nodes")).stdout)["n1"][1] == "Ready,SchedulingDisabled"
