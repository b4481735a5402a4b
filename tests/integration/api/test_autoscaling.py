"""autoscaling/v2 HorizontalPodAutoscaler over HTTP: upstream's v2 defaults, validation messages and
causes, the status subresource (spec kept, counts checked), the tolerance gate and the apiVersion
ratchet, as a 1.37 apiserver answers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.api.conftest import Api

HPAS = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
MERGE = "application/merge-patch+json"
CPU_80 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}


def hpa(name: str = "web", **spec: Any) -> dict[str, Any]:
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    return {"metadata": {"name": name}, "spec": {"scaleTargetRef": target, "maxReplicas": 5, **spec}}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


async def refused(api: Api, method: str, path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    status, out = await api.request(method, path, body, content_type=MERGE if method == "PATCH" else
                                    "application/json")
    assert status == 422, out
    assert out["reason"] == "Invalid"
    return causes(out)


async def test_a_bare_hpa_gets_min_replicas_1_and_80_percent_cpu(api: Api) -> None:
    created = await api.ok("POST", HPAS, {**hpa(), "status": {"currentReplicas": 3, "desiredReplicas": 3}})

    assert created["spec"]["minReplicas"] == 1
    assert created["spec"]["metrics"] == [CPU_80]
    assert "behavior" not in created["spec"]
    assert created["status"] == {"desiredReplicas": 0}  # status is the controller's: cleared on create
    assert created["metadata"]["generation"] == 1


async def test_a_set_behavior_gets_both_directions_filled_in(api: Api) -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60, "tolerance": "0.05"}}

    created = await api.ok("POST", HPAS, hpa(behavior=behavior))

    assert created["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "tolerance": "50m",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
    }


async def test_replica_bounds_and_the_target_reference_are_checked(api: Api) -> None:
    body = hpa(minReplicas=0, maxReplicas=0)
    body["spec"]["scaleTargetRef"] = {"kind": "Deploy/ment", "name": ""}

    assert await refused(api, "POST", HPAS, body) == [
        ("spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
        ("spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
        ("spec.scaleTargetRef.kind", "Invalid value: \"Deploy/ment\": may not contain '/'"),
        ("spec.scaleTargetRef.name", "Required value"),
        ("spec.scaleTargetRef.apiVersion", "Required value"),
        # Upstream checks this whatever the HPAScaleToZero gate says.
        ("spec.metrics", "Forbidden: must specify at least one Object or External metric to support scaling "
                         "to zero replicas"),
    ]
    assert await refused(api, "POST", HPAS, hpa(minReplicas=6)) == [
        ("spec.maxReplicas", "Invalid value: 5: must be greater than or equal to `minReplicas`")]


async def test_a_replication_controller_target_needs_no_api_group(api: Api) -> None:
    body = hpa()
    body["spec"]["scaleTargetRef"] = {"kind": "ReplicationController", "name": "web"}

    created = await api.ok("POST", HPAS, body)

    assert created["spec"]["scaleTargetRef"] == {"kind": "ReplicationController", "name": "web"}


async def test_each_metric_needs_its_one_source_and_a_valid_target(api: Api) -> None:
    metrics = [
        {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Ratio", "averageValue": "-1",
                                                                       "averageUtilization": 0}}},
        {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value"}}},
        {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "a/b/c"},
                                      "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10"}}},
        {"type": "ContainerResource", "containerResource": {"name": "pods", "container": "app", "target": {
            "type": "Utilization", "averageUtilization": 50}}},
    ]

    assert await refused(api, "POST", HPAS, hpa(metrics=metrics)) == [
        ("spec.metrics[0].pods", "Required value: must populate information for the given metric source"),
        ("spec.metrics[1].resource.target.type",
         'Invalid value: "Ratio": must be either Utilization, Value, or AverageValue'),
        ("spec.metrics[1].resource.target.averageValue", 'Invalid value: "-1": must be positive'),
        ("spec.metrics[1].resource.target.averageUtilization", "Invalid value: 0: must be greater than 0"),
        ("spec.metrics[1].resource.target.averageValue",
         "Forbidden: may not set both a target raw value and a target utilization"),
        ("spec.metrics[2].external.target.averageValue",
         "Required value: must set either a target value for metric or a per-pod target"),
        ("spec.metrics[3].object.describedObject.apiVersion",
         'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
        ("spec.metrics[4].containerResource.name", 'Invalid value: "pods": must be a standard resource for containers'),
    ]


async def test_scaling_rules_are_bounded(api: Api) -> None:
    behavior = {"scaleUp": {"stabilizationWindowSeconds": 3601, "selectPolicy": "Fastest", "tolerance": "-0.1",
                            "policies": [{"type": "Replicas", "value": 0, "periodSeconds": 1801}]},
                "scaleDown": {"stabilizationWindowSeconds": -1}}

    assert await refused(api, "POST", HPAS, hpa(behavior=behavior)) == [
        ("spec.behavior.scaleUp.stabilizationWindowSeconds", "Invalid value: 3601: must be less than or equal to 3600"),
        ("spec.behavior.scaleUp.selectPolicy",
         'Unsupported value: "Fastest": supported values: "Disabled", "Max", "Min"'),
        ("spec.behavior.scaleUp.policies[0].type",
         'Unsupported value: "Replicas": supported values: "Percent", "Pods"'),
        ("spec.behavior.scaleUp.policies[0].value", "Invalid value: 0: must be greater than zero"),
        ("spec.behavior.scaleUp.policies[0].periodSeconds", "Invalid value: 1801: must be less than or equal to 1800"),
        ("spec.behavior.scaleUp.tolerance", 'Invalid value: "-100m": must be greater or equal to zero'),
        ("spec.behavior.scaleDown.stabilizationWindowSeconds",
         "Invalid value: -1: must be greater than or equal to zero"),
    ]


async def test_status_writes_keep_the_spec_and_refuse_negative_counts(api: Api) -> None:
    created = await api.ok("POST", HPAS, hpa())
    status = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]}

    updated = await api.ok("PUT", f"{HPAS}/web/status", {**created, "spec": {**created["spec"], "maxReplicas": 9},
                                                         "status": status})
    bad = await refused(api, "PATCH", f"{HPAS}/web/status", {"status": {"desiredReplicas": -1}})

    assert updated["status"] == status
    assert updated["spec"]["maxReplicas"] == 5
    assert updated["metadata"]["generation"] == 1
    assert bad == [("status.desiredReplicas", "Invalid value: -1: must be greater than or equal to 0")]


async def test_a_spec_update_keeps_the_status_and_bumps_the_generation(api: Api) -> None:
    await api.ok("POST", HPAS, hpa())
    await api.ok("PATCH", f"{HPAS}/web/status", {"status": {"currentReplicas": 2, "desiredReplicas": 2}},
                 content_type=MERGE)

    updated = await api.ok("PATCH", f"{HPAS}/web", {"spec": {"maxReplicas": 8}, "status": {"desiredReplicas": 7}},
                           content_type=MERGE)

    assert (updated["spec"]["maxReplicas"], updated["metadata"]["generation"]) == (8, 2)
    assert updated["status"] == {"currentReplicas": 2, "desiredReplicas": 2}


async def test_a_stored_target_api_version_is_not_rechecked_until_it_changes(api: Api) -> None:
    body = hpa()
    body["spec"]["scaleTargetRef"] = {"kind": "ReplicationController", "name": "web"}
    await api.ok("POST", HPAS, body)

    kept = await api.ok("PATCH", f"{HPAS}/web", {"spec": {"maxReplicas": 6}}, content_type=MERGE)
    changed = await refused(api, "PATCH", f"{HPAS}/web", {"spec": {"scaleTargetRef": {"kind": "Deployment"}}})

    assert kept["spec"]["maxReplicas"] == 6
    assert changed == [("spec.scaleTargetRef.apiVersion", "Required value")]


@pytest.mark.fakeapi(feature_gates="HPAConfigurableTolerance=false")
async def test_tolerance_is_dropped_while_its_gate_is_off(api: Api) -> None:
    created = await api.ok("POST", HPAS, hpa(behavior={"scaleUp": {"tolerance": "0.05"}}))

    assert "tolerance" not in created["spec"]["behavior"]["scaleUp"]


@pytest.mark.fakeapi(feature_gates="HPAScaleToZero=true")
async def test_scale_to_zero_needs_an_object_or_external_metric(api: Api) -> None:
    assert await refused(api, "POST", HPAS, hpa(minReplicas=0, metrics=[CPU_80])) == [
        ("spec.metrics", "Forbidden: must specify at least one Object or External metric to support scaling "
                         "to zero replicas")]
