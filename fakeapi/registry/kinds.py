"""Every served kind, declared once.  Adding a kind is adding one ``ResourceType`` here.

Models and strategies come from ``fakeapi.models`` / ``fakeapi.validation`` by
(group, version, kind), so this table stays about identity, scope, selectors and columns.
"""

from __future__ import annotations

from typing import Any

from fakeapi.models import MODELS
from fakeapi.registry.resource import AGE, Column, FieldGetter, ResourceType
from fakeapi.registry.strategy import Strategy
from fakeapi.validation import STRATEGIES


def _path(*keys: str) -> FieldGetter:
    def get(obj: dict[str, Any]) -> str | None:
        cur: Any = obj
        for k in keys:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(k)
        if cur is None:
            return None
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


def _pod_ready(pod: dict[str, Any]) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for s in statuses if s.get("ready"))
    return f"{ready}/{total}"


def _pod_status(pod: dict[str, Any]) -> str:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status") or {}
    return status.get("reason") or status.get("phase") or "Pending"


def _claim_state(claim: dict[str, Any]) -> str:
    status = claim.get("status") or {}
    states = []
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        states.append("deleted")
    states.append("allocated" if status.get("allocation") else "pending")
    if status.get("reservedFor"):
        states.append("reserved")
    return ",".join(states)


def _kind(group: str, version: str, kind: str, plural: str, *, namespaced: bool, **extra: Any) -> ResourceType:
    key = (group, version, kind)
    return ResourceType(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced,
                        model=MODELS.get(key), strategy=STRATEGIES.get(key, Strategy()), **extra)


POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.schedulerName": _path("spec", "schedulerName"),
    "spec.serviceAccountName": _path("spec", "serviceAccountName"),
    "spec.restartPolicy": _path("spec", "restartPolicy"),
    "spec.hostNetwork": lambda p: "true" if (p.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": _path("status", "phase"),
    "status.podIP": _path("status", "podIP"),
    "status.nominatedNodeName": _path("status", "nominatedNodeName"),
}

KINDS: tuple[ResourceType, ...] = (
    _kind("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",),
          subresources=frozenset({"status", "finalize"}), tracks_generation=False, strategic_merge=True,
          field_selectors={"status.phase": _path("status", "phase")},
          columns=(Column("Status", _path("status", "phase")),)),
    _kind("", "v1", "Node", "nodes", namespaced=False, short_names=("no",),
          subresources=frozenset({"status"}), tracks_generation=False, strategic_merge=True,
          field_selectors={"spec.unschedulable": _path("spec", "unschedulable")}),
    _kind("", "v1", "Pod", "pods", namespaced=True, short_names=("po",), categories=("all",),
          subresources=frozenset({"status", "binding"}), tracks_generation=False, strategic_merge=True,
          field_selectors=POD_FIELDS,
          columns=(Column("Ready", _pod_ready), Column("Status", _pod_status),
                   Column("Restarts", lambda p: sum(s.get("restartCount", 0) for s in
                                                    (p.get("status") or {}).get("containerStatuses") or []),
                          type="integer"),
                   AGE,
                   Column("IP", _path("status", "podIP"), priority=1),
                   Column("Node", _path("spec", "nodeName"), priority=1))),
    _kind("", "v1", "Event", "events", namespaced=True, short_names=("ev",), tracks_generation=False,
          strategic_merge=True,
          field_selectors={"involvedObject.kind": _path("involvedObject", "kind"),
                           "involvedObject.name": _path("involvedObject", "name"),
                           "involvedObject.namespace": _path("involvedObject", "namespace"),
                           "involvedObject.uid": _path("involvedObject", "uid"),
                           "reason": _path("reason"), "type": _path("type")},
          columns=(Column("Type", _path("type")), Column("Reason", _path("reason")),
                   Column("Object", lambda e: f"{(e.get('involvedObject') or {}).get('kind', '').lower()}/"
                                              f"{(e.get('involvedObject') or {}).get('name', '')}"),
                   Column("Message", _path("message")))),
    _kind("", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",), tracks_generation=False,
          strategic_merge=True),
    _kind("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", namespaced=False),
    _kind("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", namespaced=True,
          subresources=frozenset({"status"}),
          columns=(Column("State", _claim_state),)),
    _kind("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", namespaced=True),
    _kind("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", namespaced=False,
          field_selectors={"spec.nodeName": _path("spec", "nodeName"), "spec.driver": _path("spec", "driver"),
                           "spec.pool.name": _path("spec", "pool", "name")},
          columns=(Column("Node", _path("spec", "nodeName")), Column("Driver", _path("spec", "driver")),
                   Column("Pool", _path("spec", "pool", "name")))),
    _kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", namespaced=False,
          subresources=frozenset({"status"})),
    _kind("scheduling.k8s.io", "v1beta1", "Workload", "workloads", namespaced=True, separate_storage=True),
    _kind("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", namespaced=True,
          subresources=frozenset({"status"})),
    _kind("scheduling.k8s.io", "v1alpha1", "Workload", "workloads", namespaced=True, separate_storage=True),
)
