"""Table columns per kind, following upstream's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fakeapi.registry.resource import AGE, NAME, Column, FieldGetter


def path(*keys: str) -> FieldGetter:
    """A getter for a nested field, rendered as a string (bools as true/false)."""
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


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


def _pod_ready(pod: dict[str, Any]) -> str:
    statuses = _status(pod).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_status(pod: dict[str, Any]) -> str:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    status = _status(pod)
    return status.get("reason") or status.get("phase") or "Pending"


def _pod_restarts(pod: dict[str, Any]) -> int:
    return sum(s.get("restartCount", 0) for s in _status(pod).get("containerStatuses") or [])


def _readiness_gates(pod: dict[str, Any]) -> str | None:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return None
    conditions = {c.get("type"): c.get("status") for c in _status(pod).get("conditions") or []}
    ready = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{ready}/{len(gates)}"


def _node_status(node: dict[str, Any]) -> str:
    ready = next((c for c in _status(node).get("conditions") or [] if c.get("type") == "Ready"), None)
    text = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: dict[str, Any]) -> str | None:
    prefix = "node-role.kubernetes.io/"
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(k[len(prefix):] for k in labels if k.startswith(prefix) and k[len(prefix):])
    return ",".join(roles) or None


def _node_address(kind: str) -> FieldGetter:
    def get(node: dict[str, Any]) -> str | None:
        return next((a.get("address") for a in _status(node).get("addresses") or [] if a.get("type") == kind),
                    None)
    return get


def _configmap_data(cm: dict[str, Any]) -> int:
    return len(cm.get("data") or {}) + len(cm.get("binaryData") or {})


def _event_object(event: dict[str, Any]) -> str:
    involved = event.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _event_last_seen(event: dict[str, Any]) -> str | None:
    series = event.get("series") or {}
    return (series.get("lastObservedTime") or event.get("lastTimestamp") or event.get("eventTime")
            or (event.get("metadata") or {}).get("creationTimestamp"))


def _event_source(event: dict[str, Any]) -> str:
    source = event.get("source") or {}
    return ", ".join(v for v in (source.get("component"), source.get("host")) if v) or event.get(
        "reportingComponent", "")


def _claim_state(claim: dict[str, Any]) -> str:
    states = []
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        states.append("deleted")
    states.append("allocated" if _status(claim).get("allocation") else "pending")
    if _status(claim).get("reservedFor"):
        states.append("reserved")
    return ",".join(states)


POD_COLUMNS = (
    Column("Ready", _pod_ready), Column("Status", _pod_status),
    Column("Restarts", _pod_restarts, type="integer"), AGE,
    Column("IP", path("status", "podIP"), priority=1), Column("Node", path("spec", "nodeName"), priority=1),
    Column("Nominated Node", path("status", "nominatedNodeName"), priority=1),
    Column("Readiness Gates", _readiness_gates, priority=1),
)
NODE_COLUMNS = (
    Column("Status", _node_status), Column("Roles", _node_roles), AGE,
    Column("Version", path("status", "nodeInfo", "kubeletVersion")),
    Column("Internal-IP", _node_address("InternalIP"), priority=1),
    Column("External-IP", _node_address("ExternalIP"), priority=1),
    Column("OS-Image", path("status", "nodeInfo", "osImage"), priority=1),
    Column("Kernel-Version", path("status", "nodeInfo", "kernelVersion"), priority=1),
    Column("Container-Runtime", path("status", "nodeInfo", "containerRuntimeVersion"), priority=1),
)
NAMESPACE_COLUMNS = (Column("Status", path("status", "phase")),)
CONFIGMAP_COLUMNS = (Column("Data", _configmap_data, type="integer"),)
EVENT_COLUMNS = (
    Column("Last Seen", _event_last_seen, age=True), Column("Type", path("type")),
    Column("Reason", path("reason")), Column("Object", _event_object), Column("Message", path("message")),
    Column("Subobject", path("involvedObject", "fieldPath"), priority=1),
    Column("Source", _event_source, priority=1),
    Column("First Seen", path("firstTimestamp"), age=True, priority=1),
    Column("Count", path("count"), type="integer", priority=1),
    replace(NAME, priority=1),
)
CLAIM_COLUMNS = (Column("State", _claim_state),)
SLICE_COLUMNS = (Column("Node", path("spec", "nodeName")), Column("Driver", path("spec", "driver")),
                 Column("Pool", path("spec", "pool", "name")))
