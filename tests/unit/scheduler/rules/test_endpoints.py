"""What a Service's EndpointSlices and Endpoints say about the pods it selects."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.rules import endpoints as rules


def service(*, selector: dict[str, str] | None = None, ports: list[dict[str, Any]] | None = None,
            **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid", "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"} if selector is None else selector,
                     "ports": ports or [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}], **spec}}


def pod(name: str, ip: str | None = "10.244.0.1", *, ready: bool = True, labels: dict[str, str] | None = None,
        phase: str = "Running", deleting: bool = False, namespace: str = "ns",
        ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                            "labels": {"app": "web"} if labels is None else labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    return {"metadata": meta, "spec": {"nodeName": "n1", "containers": [{"name": "c", "ports": ports or []}]},
            "status": status}


@pytest.mark.parametrize(("candidate", "backs"), [
    (pod("a"), True),
    (pod("a", labels={"app": "db"}), False),
    (pod("a", namespace="other"), False),
    (pod("a", ip=None), False),
    (pod("a", phase="Succeeded"), False),
    (pod("a", ready=False), True),
], ids=["matching", "other-labels", "other-namespace", "no-ip", "terminal", "not-ready"])
def test_which_pods_back_a_service(candidate: dict[str, Any], backs: bool) -> None:
    assert bool(rules.backing_pods(service(), [candidate], include_terminating=True)) is backs


@pytest.mark.parametrize(("spec", "managed"), [
    ({}, True), ({"selector": {}}, False), ({"type": "ExternalName"}, False),
], ids=["selector", "selectorless", "external-name"])
def test_only_services_with_a_selector_are_managed(spec: dict[str, Any], managed: bool) -> None:
    svc = service()
    svc["spec"].update(spec)
    assert (rules.selector_of(svc) is not None) is managed


@pytest.mark.parametrize(("target", "container_ports", "resolved"), [
    (8080, [], 8080),
    ("web", [{"name": "web", "containerPort": 9000}], 9000),
    ("web", [{"name": "web", "containerPort": 9000, "protocol": "UDP"}], None),
    ("web", [], None),
], ids=["number", "named", "named-other-protocol", "named-missing"])
def test_target_ports_resolve_per_pod(target: int | str, container_ports: list[dict[str, Any]],
                                      resolved: int | None) -> None:
    port = {"name": "http", "port": 80, "protocol": "TCP", "targetPort": target}
    assert rules.resolve_port(port, pod("a", ports=container_ports)) == resolved


@pytest.mark.parametrize(("candidate", "conditions"), [
    (pod("a"), {"ready": True, "serving": True, "terminating": False}),
    (pod("a", ready=False), {"ready": False, "serving": False, "terminating": False}),
    (pod("a", deleting=True), {"ready": False, "serving": True, "terminating": True}),
], ids=["ready", "not-ready", "terminating"])
def test_endpoint_conditions(candidate: dict[str, Any], conditions: dict[str, bool]) -> None:
    (eps,) = rules.desired_slices(service(), [candidate])
    assert eps["endpoints"][0]["conditions"] == conditions
    assert eps["endpoints"][0]["targetRef"] == {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"}


def test_publish_not_ready_addresses_makes_every_endpoint_ready() -> None:
    (eps,) = rules.desired_slices(service(publishNotReadyAddresses=True), [pod("a", ready=False)])
    assert eps["endpoints"][0]["conditions"]["ready"] is True


def test_slices_group_pods_by_their_ports_and_carry_the_service_labels() -> None:
    svc = service(ports=[{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}])
    slices = rules.desired_slices(svc, [pod("a", "10.244.0.1", ports=[{"name": "web", "containerPort": 8080}]),
                                        pod("b", "10.244.0.2", ports=[{"name": "web", "containerPort": 9090}])])
    assert [(s["ports"], [e["addresses"] for e in s["endpoints"]]) for s in slices] == [
        ([{"name": "http", "protocol": "TCP", "port": 8080}], [["10.244.0.1"]]),
        ([{"name": "http", "protocol": "TCP", "port": 9090}], [["10.244.0.2"]])]
    meta = slices[0]["metadata"]
    assert meta["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                              "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    assert meta["ownerReferences"][0] | {"uid": ""} == {"apiVersion": "v1", "kind": "Service", "name": "web",
                                                         "uid": "", "controller": True, "blockOwnerDeletion": True}


def test_a_service_without_pods_keeps_one_empty_slice_and_a_bare_endpoints() -> None:
    assert [s["endpoints"] for s in rules.desired_slices(service(), [])] == [[]]
    assert "subsets" not in rules.desired_endpoints(service(), [])


def test_slices_hold_at_most_one_hundred_endpoints() -> None:
    pods = [pod(f"p{i:03}", f"10.244.1.{i}") for i in range(150)]
    assert [len(s["endpoints"]) for s in rules.desired_slices(service(), pods)] == [100, 50]


def test_endpoints_split_ready_and_not_ready_and_leave_out_terminating_pods() -> None:
    endpoints = rules.desired_endpoints(service(), [pod("a", "10.244.0.1"), pod("b", "10.244.0.2", ready=False),
                                                    pod("c", "10.244.0.3", deleting=True)])
    (subset,) = endpoints["subsets"]
    assert [a["ip"] for a in subset["addresses"]] == ["10.244.0.1"]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == ["10.244.0.2"]
    assert subset["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert endpoints["metadata"]["labels"] == {"tier": "front", "endpointslice.kubernetes.io/skip-mirror": "true"}


def test_same_slice_ignores_server_metadata() -> None:
    (wanted,) = rules.desired_slices(service(), [pod("a")])
    stored = {**wanted, "metadata": {**wanted["metadata"], "name": "web-abcde", "resourceVersion": "7"}}
    assert rules.same_slice(stored, wanted)
    assert not rules.same_slice(stored, rules.desired_slices(service(), [pod("a", ready=False)])[0])
