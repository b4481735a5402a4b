"""What a Service's Endpoints and EndpointSlices should say, from the pods its selector matches.

Pure functions for the endpoints and endpointslice controllers (kube-controller-manager's
``endpoint`` and ``endpointslice`` loops):

- a pod backs a service when it is in the service's namespace, matches its selector, has a pod
  IP and is not terminal (``Succeeded``/``Failed``); slices keep terminating pods (with
  ``terminating: true``), Endpoints leave them out;
- an endpoint is ready when its pod is Ready and not terminating (every endpoint is, with
  ``publishNotReadyAddresses``); ``serving`` ignores termination;
- each service port resolves to a port of the pod: a number as given, a name through the pod's
  container ports; pods with the same resolved ports share a slice (at most 100 endpoints each)
  and an Endpoints subset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fakeapi.scheduler.rules.pods import is_pod_terminal, is_ready, is_terminating, node_of

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
# Endpoints the endpoints controller writes are not mirrored into slices again.
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
MAX_ENDPOINTS_PER_SLICE = 100

Ports = tuple[tuple[str, str, int], ...]  # (name, protocol, port) per service port the pod resolves


def selector_of(service: Mapping[str, Any]) -> dict[str, str] | None:
    """The pod selector of a service the controllers manage, or None (no selector, ExternalName)."""
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName" or not spec.get("selector"):
        return None
    return dict(spec["selector"])


def selects(service: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether ``pod`` is in the service's namespace and matches its selector."""
    selector = selector_of(service)
    if selector is None:
        return False
    if (pod.get("metadata") or {}).get("namespace") != (service.get("metadata") or {}).get("namespace"):
        return False
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in selector.items())


def resolve_port(service_port: Mapping[str, Any], pod: Mapping[str, Any]) -> int | None:
    """The pod's port for a service port: ``targetPort`` as a number, or the container port of
    that name and protocol; None when the pod has no such port."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol", "TCP")
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return port.get("containerPort")
    return None


def pod_ports(service: Mapping[str, Any], pod: Mapping[str, Any]) -> Ports:
    """The service's ports as this pod serves them (ports it cannot resolve are left out)."""
    out = []
    for port in (service.get("spec") or {}).get("ports") or []:
        number = resolve_port(port, pod)
        if number is not None:
            out.append((port.get("name", ""), port.get("protocol", "TCP"), number))
    return tuple(out)


def backing_pods(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], *,
                 include_terminating: bool) -> list[Mapping[str, Any]]:
    """The pods that back ``service``, by name."""
    chosen = [p for p in pods if selects(service, p) and (p.get("status") or {}).get("podIP")
              and not is_pod_terminal(p) and (include_terminating or not is_terminating(p))]
    return sorted(chosen, key=lambda p: p["metadata"]["name"])


def _target_ref(pod: Mapping[str, Any]) -> dict[str, Any]:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid", "")}


def endpoint(service: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any]:
    """The EndpointSlice endpoint of one pod."""
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    ready = is_ready(pod)
    out: dict[str, Any] = {
        "addresses": [pod["status"]["podIP"]],
        "conditions": {"ready": publish or (ready and not is_terminating(pod)), "serving": publish or ready,
                       "terminating": is_terminating(pod)},
        "targetRef": _target_ref(pod),
    }
    if node := node_of(pod):
        out["nodeName"] = node
    return out


def _slice_ports(ports: Ports) -> list[dict[str, Any]]:
    return [{"name": name, "protocol": protocol, "port": number} for name, protocol, number in ports]


def desired_slices(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The EndpointSlices of ``service`` (without names): one group of slices per distinct port
    mapping, at most :data:`MAX_ENDPOINTS_PER_SLICE` endpoints each; one empty slice if no pod
    backs it (upstream keeps a placeholder slice)."""
    groups: dict[Ports, list[dict[str, Any]]] = {}
    for pod in backing_pods(service, pods, include_terminating=True):
        groups.setdefault(pod_ports(service, pod), []).append(endpoint(service, pod))
    meta = service["metadata"]
    labels = {**(meta.get("labels") or {}), SERVICE_NAME_LABEL: meta["name"], MANAGED_BY_LABEL: CONTROLLER_NAME}
    owner = {"apiVersion": "v1", "kind": "Service", "name": meta["name"], "uid": meta.get("uid", ""),
             "controller": True, "blockOwnerDeletion": True}
    slices = []
    for ports, endpoints in sorted(groups.items()) or [((), [])]:
        chunks = [endpoints[i:i + MAX_ENDPOINTS_PER_SLICE]
                  for i in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE)] or [[]]
        for chunk in chunks:
            slices.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                           "metadata": {"namespace": meta["namespace"], "generateName": f"{meta['name']}-",
                                        "labels": labels, "ownerReferences": [owner]},
                           "addressType": "IPv4", "endpoints": chunk, "ports": _slice_ports(ports)})
    return slices


def same_slice(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether a stored slice already says what ``desired`` says."""
    return (all(existing.get(k) == desired.get(k) for k in ("addressType", "endpoints", "ports"))
            and (existing.get("metadata") or {}).get("labels") == desired["metadata"]["labels"])


def desired_endpoints(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The legacy Endpoints object of ``service``: one subset per distinct port mapping."""
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    subsets: dict[Ports, dict[str, list[dict[str, Any]]]] = {}
    for pod in backing_pods(service, pods, include_terminating=False):
        address = {"ip": pod["status"]["podIP"], "targetRef": _target_ref(pod)}
        if node := node_of(pod):
            address["nodeName"] = node
        kind = "addresses" if publish or is_ready(pod) else "notReadyAddresses"
        subsets.setdefault(pod_ports(service, pod), {}).setdefault(kind, []).append(address)
    meta = service["metadata"]
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Endpoints",
                           "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                                        "labels": {**(meta.get("labels") or {}), SKIP_MIRROR_LABEL: "true"}}}
    rendered = [{**addresses, "ports": _slice_ports(ports)} for ports, addresses in sorted(subsets.items()) if ports]
    if rendered:
        out["subsets"] = rendered
    return out
