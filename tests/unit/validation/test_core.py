"""Core v1: pod defaults kubectl expects, pod validation and immutability, node/namespace/configmap."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext
from tests.unit.validation.builders import causes, validate

POD = ("", "v1", "Pod")


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "worker-0", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]} | spec}


POD_CASES = [
    ("claims-and-group", pod(schedulingGroup={"podGroupName": "group-1"}), []),
    ("workload-ref", pod(workloadRef={"name": "job-1", "podGroup": "workers", "podGroupReplicaKey": "r0"}), []),
    ("no-containers", pod(containers=[], resourceClaims=[]), [("FieldValueRequired", "spec.containers")]),
    ("no-image", pod(containers=[{"name": "main"}], resourceClaims=[]),
     [("FieldValueRequired", "spec.containers[0].image")]),
    ("unknown-claim", pod(resourceClaims=[]), [("FieldValueNotFound", "spec.containers[0].resources.claims[0]")]),
    ("claim-two-sources", pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "a",
                                               "resourceClaimTemplateName": "b"}]),
     [("FieldValueInvalid", "spec.resourceClaims[0]")]),
    ("bad-group-name", pod(schedulingGroup={"podGroupName": "Group_1"}),
     [("FieldValueInvalid", "spec.schedulingGroup.podGroupName")]),
    ("bad-restart-policy", pod(restartPolicy="Sometimes"), [("FieldValueNotSupported", "spec.restartPolicy")]),
    ("bad-toleration", pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
     [("FieldValueInvalid", "spec.tolerations[0].operator")]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES])
def test_pod(obj: dict[str, Any], expected: list) -> None:
    assert causes(validate(obj, POD)) == expected


def test_pod_defaults() -> None:
    obj = pod(containers=[{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.27",
                                                             "ports": [{"containerPort": 80}]}])
    STRATEGIES[POD].default(obj, AdmissionContext())
    spec = obj["spec"]
    assert (spec["restartPolicy"], spec["schedulerName"], spec["dnsPolicy"], spec["terminationGracePeriodSeconds"]) \
        == ("Always", "default-scheduler", "ClusterFirst", 30)
    assert [c["imagePullPolicy"] for c in spec["containers"]] == ["Always", "IfNotPresent"]
    assert spec["containers"][0]["terminationMessagePath"] == "/dev/termination-log"
    assert spec["containers"][1]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert obj["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(("change", "expected"), [
    ({"image": "busybox:1.37"}, []),
    ({"tolerations": [{"key": "k", "operator": "Exists"}]}, []),
    ({"schedulingGroup": {"podGroupName": "other"}}, [("FieldValueInvalid", "spec.schedulingGroup")]),
    ({"workloadRef": {"name": "job-2", "podGroup": "workers"}}, [("FieldValueInvalid", "spec.workloadRef")]),
    ({"resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}]}, [("FieldValueForbidden", "spec")]),
], ids=["image-mutable", "add-toleration", "group-immutable", "workload-ref-immutable", "claims-immutable"])
def test_pod_update(change: dict, expected: list) -> None:
    old = pod(schedulingGroup={"podGroupName": "group-1"})
    STRATEGIES[POD].default(old, AdmissionContext())
    new = copy.deepcopy(old)
    if "image" in change:
        new["spec"]["containers"][0]["image"] = change.pop("image")
    new["spec"].update(change)
    if "workloadRef" in change:
        del new["spec"]["schedulingGroup"], old["spec"]["schedulingGroup"]
        old["spec"]["workloadRef"] = {"name": "job-1", "podGroup": "workers"}
    assert causes(STRATEGIES[POD].validate_update(new, old, AdmissionContext())) == expected


def test_pod_status_claim_names_must_match_spec() -> None:
    new = pod() | {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "worker-0-gpu-x"},
                                                        {"name": "nic"}]}}
    assert causes(STRATEGIES[POD].validate_status_update(new, pod(), AdmissionContext())) == [
        ("FieldValueInvalid", "status.resourceClaimStatuses[1].name")]


OTHER_CASES = [
    (("", "v1", "Node"), {"metadata": {"name": "node-1"}, "spec": {"taints": [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}}, []),
    (("", "v1", "Node"), {"metadata": {"name": "node-1"}, "spec": {"taints": [{"key": "k", "effect": "Never"}]}},
     [("FieldValueNotSupported", "spec.taints[0].effect")]),
    (("", "v1", "Namespace"), {"metadata": {"name": "team-a"}}, []),
    (("", "v1", "Namespace"), {"metadata": {"name": "team.a"}}, [("FieldValueInvalid", "metadata.name")]),
    (("", "v1", "ConfigMap"), {"metadata": {"name": "cfg", "namespace": "default"}, "data": {"a.b": "1"}}, []),
    (("", "v1", "ConfigMap"), {"metadata": {"name": "cfg", "namespace": "default"}, "data": {"a/b": "1"}},
     [("FieldValueInvalid", "data[a/b]")]),
    (("", "v1", "Event"), {"metadata": {"name": "e", "namespace": "default"},
                           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}, []),
    (("", "v1", "Event"), {"metadata": {"name": "e", "namespace": "default"},
                           "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"}},
     [("FieldValueInvalid", "involvedObject.namespace")]),
]


@pytest.mark.parametrize(("gvk", "obj", "expected"), OTHER_CASES,
                         ids=["node", "node-taint", "namespace", "namespace-dots", "configmap", "configmap-key",
                              "event", "event-namespace"])
def test_other_core_kinds(gvk: tuple[str, str, str], obj: dict, expected: list) -> None:
    assert causes(validate(obj, gvk)) == expected


def test_namespace_defaults() -> None:
    obj = {"metadata": {"name": "team-a"}}
    STRATEGIES[("", "v1", "Namespace")].default(obj, AdmissionContext())
    assert obj == {"metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "team-a"}},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def _res(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "i", "resources": resources}


FULL = {"cpu": "1", "memory": "1Gi"}
QOS_CASES = [
    # (id, containers, init containers, qosClass)
    ("no-containers", [], [], "BestEffort"),
    ("no-resources", [{"name": "c", "image": "i"}], [], "BestEffort"),
    ("empty-requests-and-limits", [_res({}, {})], [], "BestEffort"),
    ("requests-only", [_res({"cpu": "100m"})], [], "Burstable"),
    ("limits-only-both", [_res(limits=FULL)], [], "Guaranteed"),
    ("requests-equal-limits", [_res(FULL, FULL)], [], "Guaranteed"),
    ("requests-below-limits", [_res({"cpu": "500m", "memory": "1Gi"}, FULL)], [], "Burstable"),
    ("memory-limit-missing", [_res(limits={"cpu": "1"})], [], "Burstable"),
    ("one-container-without", [_res(limits=FULL), {"name": "d", "image": "i"}], [], "Burstable"),
    ("init-container-requests", [], [_res({"memory": "1Gi"})], "Burstable"),
    ("init-container-without-limits", [_res(limits=FULL)], [{"name": "i", "image": "i"}], "Burstable"),
    ("init-and-main-guaranteed", [_res(FULL, FULL)], [_res(limits=FULL)], "Guaranteed"),
    # Upstream's ComputePodQOS: only cpu and memory count, zero quantities do not, values compare.
    ("other-resources-only", [_res({"example.com/gpu": "1"})], [], "BestEffort"),
    ("other-resources-beside-full", [_res(limits={**FULL, "example.com/gpu": "1"})], [], "Guaranteed"),
    ("zero-requests-only", [_res({"cpu": "0", "memory": "0Mi"})], [], "BestEffort"),
    ("equal-values-other-spellings", [_res({"cpu": "1000m", "memory": "1024Mi"}, FULL)], [], "Guaranteed"),
    ("zero-limit-is-no-limit", [_res(limits={"cpu": "0", "memory": "1Gi"})], [], "Burstable"),
    ("not-quantities", [_res({"cpu": {"a": 1}, "memory": [1]}, {"cpu": True})], [], "BestEffort"),
]


@pytest.mark.parametrize(("containers", "init", "expected"), [c[1:] for c in QOS_CASES],
                         ids=[c[0] for c in QOS_CASES])
def test_pod_qos_class(containers: list[dict[str, Any]], init: list[dict[str, Any]], expected: str) -> None:
    obj = pod(containers=copy.deepcopy(containers), **({"initContainers": copy.deepcopy(init)} if init else {}))
    STRATEGIES[POD].default(obj, AdmissionContext())
    assert obj["status"]["qosClass"] == expected
