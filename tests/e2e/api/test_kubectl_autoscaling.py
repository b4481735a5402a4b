"""kubectl 1.37 with autoscaling/v2 HorizontalPodAutoscalers: ``kubectl autoscale`` creates one
through the typed client (a protobuf body, v2 first) and ``get hpa`` prints upstream's columns,
``cpu: <unknown>/80%`` while no autoscaler has written a status (fakeapi runs none)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fakeapi.fixtures.plugin import Kubectl

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import table, to_yaml

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
QUEUE_HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
             "metadata": {"name": "worker", "namespace": "default"},
             "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                      "maxReplicas": 20,
                      "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {
                                       "type": "AverageValue", "averageValue": "512Mi"}}},
                                  {"type": "External", "external": {"metric": {"name": "queue_depth"}, "target": {
                                       "type": "AverageValue", "averageValue": "30"}}},
                                  {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
                                       "type": "AverageValue", "averageValue": "100"}}}]}}


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


async def test_kubectl_autoscale_creates_a_v2_hpa_with_upstream_defaults(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(WEB))

    created = await kubectl.run("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
    spec = await kubectl.run("get", "hpa.v2.autoscaling", "web", "-o",
                             "jsonpath={.spec.scaleTargetRef.apiVersion} {.spec.minReplicas} {.spec.maxReplicas} "
                             "{.spec.metrics[0].resource.target.averageUtilization}")

    assert created.stdout.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    assert spec.stdout == "apps/v1 2 5 80"


async def test_get_hpa_prints_reference_targets_and_replica_bounds(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(WEB, QUEUE_HPA))
    await kubectl.run("autoscale", "deployment", "web", "--max=5", "--cpu-percent=80")

    rows = table((await kubectl.run("get", "hpa")).stdout)

    assert rows["NAME"] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows["web"][1:6] == ["Deployment/web", "cpu: <unknown>/80%", "1", "5", "0"]
    assert rows["worker"][1:6] == ["Deployment/worker",
                                   "memory: <unknown>/512Mi, <unknown>/30 (avg) + 1 more...", "1", "20", "0"]
