"""Table columns of the everyday kinds beside a controller's own (Secret, ServiceAccount, Service,
Endpoints, EndpointSlice, Lease, volumes, quotas, pod templates, events.k8s.io Events), after
upstream's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fakeapi.registry.printers import path
from fakeapi.registry.resource import AGE, NAME, Column

NONE = "<none>"
# Lists longer than this print as the first few and "+ N more...".
MAX_SHOWN = 3
ACCESS_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _shortened(items: list[str]) -> str:
    if not items:
        return NONE
    text = ",".join(items[:MAX_SHOWN])
    return text + (f" + {len(items) - MAX_SHOWN} more..." if len(items) > MAX_SHOWN else "")


def _labels(labels: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or NONE


def _service_external_ip(svc: dict[str, Any]) -> str:
    spec = _spec(svc)
    external = list(spec.get("externalIPs") or [])
    kind = spec.get("type")
    if kind == "ExternalName":
        return spec.get("externalName") or NONE
    if kind == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        addresses = [i.get("ip") or i.get("hostname") or "" for i in ingress] + external
        return ",".join(addresses) if addresses else "<pending>"
    return ",".join(external) or NONE


def _service_ports(svc: dict[str, Any]) -> str:
    ports = []
    for port in _spec(svc).get("ports") or []:
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        ports.append(f"{port.get('port')}{node}/{port.get('protocol', 'TCP')}")
    return ",".join(ports) or NONE


def _endpoints(ep: dict[str, Any]) -> str:
    shown = []
    for subset in ep.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for address in subset.get("addresses") or []:
            shown += [f"{address.get('ip')}:{port}" if port else str(address.get("ip")) for port in ports]
    return _shortened(shown)


def _slice_ports(eps: dict[str, Any]) -> str:
    ports = eps.get("ports")
    if not ports:
        return "<unset>"
    return _shortened([str(p["port"]) if p.get("port") is not None else "<unset>" for p in ports])


def _slice_endpoints(eps: dict[str, Any]) -> str:
    return _shortened([a for e in eps.get("endpoints") or [] for a in e.get("addresses") or []])


def _quota(limits: bool) -> Callable[[dict[str, Any]], str]:
    def get(quota: dict[str, Any]) -> str:
        status = quota.get("status") or {}
        hard, used = status.get("hard") or _spec(quota).get("hard") or {}, status.get("used") or {}
        names = sorted(n for n in hard if n.startswith("limits.") == limits)
        return ", ".join(f"{n}: {used.get(n, '0')}/{hard[n]}" for n in names)
    return get


def _access_modes(modes: list[str] | None) -> str:
    return ",".join(ACCESS_MODES.get(m, m) for m in modes or [])


def _pv_claim(pv: dict[str, Any]) -> str:
    ref = _spec(pv).get("claimRef") or {}
    return f"{ref.get('namespace')}/{ref.get('name')}" if ref.get("name") else ""


def _template_containers(key: str) -> Callable[[dict[str, Any]], str]:
    def get(template: dict[str, Any]) -> str:
        containers = ((template.get("template") or {}).get("spec") or {}).get("containers") or []
        return ",".join(c.get(key, "") for c in containers)
    return get


def converted(columns: tuple[Column, ...], convert: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[Column, ...]:
    """``columns`` of another shape of the same object (events.k8s.io Events print as core Events)."""
    return tuple(replace(c, getter=lambda o, get=c.getter: get(convert(o))) for c in columns)


SECRET_COLUMNS = (Column("Type", path("type")),
                  Column("Data", lambda s: len(s.get("data") or {}), type="integer"), AGE)
SERVICE_ACCOUNT_COLUMNS = (Column("Secrets", lambda sa: len(sa.get("secrets") or []), type="integer"), AGE)
SERVICE_COLUMNS = (
    Column("Type", path("spec", "type")), Column("Cluster-IP", lambda s: _spec(s).get("clusterIP") or NONE),
    Column("External-IP", _service_external_ip), Column("Port(s)", _service_ports), AGE,
    Column("Selector", lambda s: _labels(_spec(s).get("selector")), priority=1),
)
ENDPOINTS_COLUMNS = (Column("Endpoints", _endpoints), AGE)
ENDPOINT_SLICE_COLUMNS = (Column("AddressType", path("addressType")), Column("Ports", _slice_ports),
                          Column("Endpoints", _slice_endpoints), AGE)
LEASE_COLUMNS = (Column("Holder", path("spec", "holderIdentity")), AGE)
RESOURCE_QUOTA_COLUMNS = (AGE, Column("Request", _quota(limits=False)), Column("Limit", _quota(limits=True)))
# Upstream prints no Age for limit ranges; listing Name makes this the whole list.
LIMIT_RANGE_COLUMNS = (NAME, Column("Created At", lambda o: (o.get("metadata") or {}).get("creationTimestamp"),
                                    format="date"))
POD_TEMPLATE_COLUMNS = (
    Column("Containers", _template_containers("name")), Column("Images", _template_containers("image")),
    Column("Pod Labels", lambda t: _labels(((t.get("template") or {}).get("metadata") or {}).get("labels"))),
)
PERSISTENT_VOLUME_COLUMNS = (
    Column("Capacity", path("spec", "capacity", "storage")),
    Column("Access Modes", lambda pv: _access_modes(_spec(pv).get("accessModes"))),
    Column("Reclaim Policy", path("spec", "persistentVolumeReclaimPolicy")),
    Column("Status", path("status", "phase")), Column("Claim", _pv_claim),
    Column("StorageClass", path("spec", "storageClassName")),
    Column("VolumeAttributesClass", lambda pv: _spec(pv).get("volumeAttributesClassName") or "<unset>"),
    Column("Reason", path("status", "reason")), AGE,
    Column("VolumeMode", path("spec", "volumeMode"), priority=1),
)
PERSISTENT_VOLUME_CLAIM_COLUMNS = (
    Column("Status", path("status", "phase")), Column("Volume", path("spec", "volumeName")),
    Column("Capacity", path("status", "capacity", "storage")),
    Column("Access Modes", lambda pvc: _access_modes((pvc.get("status") or {}).get("accessModes"))),
    Column("StorageClass", path("spec", "storageClassName")),
    Column("VolumeAttributesClass", lambda pvc: _spec(pvc).get("volumeAttributesClassName") or "<unset>"), AGE,
    Column("VolumeMode", path("spec", "volumeMode"), priority=1),
)

