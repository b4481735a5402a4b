"""Table columns per kind, following upstream's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from fakeapi.machinery.durations import human_age, human_duration
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


def _terminated_reason(terminated: dict[str, Any], prefix: str = "") -> str:
    """A terminated container's reason, else its signal or exit code (``Signal:9``, ``ExitCode:2``)."""
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _later(current: str, status: dict[str, Any]) -> str:
    """The later of ``current`` and when the container's last run ended (RFC 3339, one format)."""
    finished = (((status.get("lastState") or {}).get("terminated")) or {}).get("finishedAt") or ""
    return max(current, finished)


def _condition_true(pod: dict[str, Any], ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in _status(pod).get("conditions") or [])


def pod_summary(pod: dict[str, Any]) -> tuple[str, str, str]:
    """kubectl's READY, STATUS and RESTARTS of a pod, as upstream's ``printPod`` derives them.

    STATUS is the phase (or ``status.reason``), then what the first unfinished init container or
    the containers say (``Init:1/2``, ``ContainerCreating``, ``Completed``, ``Error``,
    ``ExitCode:3``), then ``Terminating`` for a deleted pod that is not terminal.  RESTARTS counts
    the containers' restarts, with how long ago the last one was (``3 (5m ago)``)."""
    spec, status = pod.get("spec") or {}, _status(pod)
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
    init_specs = spec.get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + len(sidecars)
    ready = restarts = sidecar_restarts = 0
    last_restart = sidecar_last_restart = ""
    initializing = False
    for index, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += cs.get("restartCount") or 0
        last_restart = _later(last_restart, cs)
        sidecar = cs.get("name") in sidecars
        if sidecar:
            sidecar_restarts += cs.get("restartCount") or 0
            sidecar_last_restart = _later(sidecar_last_restart, cs)
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting") or {}
        if terminated and not terminated.get("exitCode"):
            continue
        if sidecar and cs.get("started"):
            ready += bool(cs.get("ready"))
            continue
        if terminated:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(pod, "Initialized"):
        restarts, last_restart = sidecar_restarts, sidecar_last_restart
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount") or 0
            last_restart = _later(last_restart, cs)
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated"):
                reason = _terminated_reason(state["terminated"])
            elif cs.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:  # a container still runs
            reason = "Running" if _condition_true(pod, "Ready") else "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    restarts_text = f"{restarts} ({human_age(last_restart)} ago)" if restarts and last_restart else str(restarts)
    return f"{ready}/{total}", reason, restarts_text


# Table row conditions of a finished pod, as upstream's printer attaches them.
_POD_ROW_CONDITIONS = {
    "Succeeded": [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
}


def pod_row_conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The Table row's conditions of a pod: ``Completed`` once it succeeded or failed."""
    return _POD_ROW_CONDITIONS.get(_status(pod).get("phase") or "", [])


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
    Column("Ready", lambda pod: pod_summary(pod)[0],
           description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", lambda pod: pod_summary(pod)[1],
           description="The aggregate status of the containers in this pod."),
    Column("Restarts", lambda pod: pod_summary(pod)[2],
           description="The number of times the containers in this pod have been restarted and when the last "
                       "container in this pod has restarted."), AGE,
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


# -- apps/v1, batch/v1, policy/v1 -------------------------------------------------------------


def _template_containers(*keys: str) -> tuple[FieldGetter, FieldGetter]:
    """Getters of the comma-joined container names and images of the pod template at ``keys``."""
    def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
        spec: Any = obj
        for k in (*keys, "spec"):
            spec = (spec or {}).get(k) if isinstance(spec, dict) else None
        return (spec or {}).get("containers") or []
    return (lambda o: ",".join(c.get("name", "") for c in containers(o)),
            lambda o: ",".join(c.get("image", "") for c in containers(o)))


def label_selector(*keys: str) -> FieldGetter:
    """``metav1.FormatLabelSelector``: ``a=b,c in (d)``, ``<none>`` when empty."""
    def get(obj: dict[str, Any]) -> str:
        selector: Any = obj
        for k in keys:
            selector = (selector or {}).get(k) if isinstance(selector, dict) else None
        selector = selector or {}
        parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
        for expr in selector.get("matchExpressions") or []:
            op, key, values = expr.get("operator", ""), expr.get("key", ""), ",".join(expr.get("values") or [])
            parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                          "Exists": key, "DoesNotExist": f"!{key}"}.get(op, key))
        return ",".join(parts) or "<none>"
    return get


def _ratio(numerator: str, denominator: tuple[str, ...]) -> FieldGetter:
    def get(obj: dict[str, Any]) -> str:
        total: Any = obj
        for k in denominator:
            total = (total or {}).get(k) if isinstance(total, dict) else None
        return f"{_status(obj).get(numerator) or 0}/{total or 0}"
    return get


def _int_status(key: str) -> Callable[[dict[str, Any]], int]:
    return lambda obj: int(_status(obj).get(key) or 0)


def _workload_wide(*template: str, selector: tuple[str, ...] = ("spec", "selector")) -> tuple[Column, ...]:
    names, images = _template_containers(*template)
    return (Column("Containers", names, priority=1), Column("Images", images, priority=1),
            Column("Selector", label_selector(*selector), priority=1))


DEPLOYMENT_COLUMNS = (
    Column("Ready", _ratio("readyReplicas", ("spec", "replicas"))),
    Column("Up-to-date", _int_status("updatedReplicas"), type="integer"),
    Column("Available", _int_status("availableReplicas"), type="integer"), AGE,
    *_workload_wide("spec", "template"),
)
REPLICASET_COLUMNS = (
    Column("Desired", lambda o: int((o.get("spec") or {}).get("replicas") or 0), type="integer"),
    Column("Current", _int_status("replicas"), type="integer"),
    Column("Ready", _int_status("readyReplicas"), type="integer"), AGE,
    *_workload_wide("spec", "template"),
)
STATEFULSET_COLUMNS = (Column("Ready", _ratio("readyReplicas", ("spec", "replicas"))), AGE,
                       *_workload_wide("spec", "template")[:2])


def _node_selector(ds: dict[str, Any]) -> str:
    selector = (((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"


DAEMONSET_COLUMNS = (
    Column("Desired", _int_status("desiredNumberScheduled"), type="integer"),
    Column("Current", _int_status("currentNumberScheduled"), type="integer"),
    Column("Ready", _int_status("numberReady"), type="integer"),
    Column("Up-to-date", _int_status("updatedNumberScheduled"), type="integer"),
    Column("Available", _int_status("numberAvailable"), type="integer"),
    Column("Node Selector", _node_selector), AGE,
    *_workload_wide("spec", "template"),
)


def _revision_controller(rev: dict[str, Any]) -> str:
    owner = next((o for o in (rev.get("metadata") or {}).get("ownerReferences") or [] if o.get("controller")), None)
    if owner is None:
        return "<none>"
    group = str(owner.get("apiVersion", "")).partition("/")[0] if "/" in str(owner.get("apiVersion", "")) else ""
    kind = str(owner.get("kind", "")).lower() + (f".{group}" if group else "")
    return f"{kind}/{owner.get('name', '')}"


CONTROLLER_REVISION_COLUMNS = (Column("Controller", _revision_controller),
                               Column("Revision", lambda o: int(o.get("revision") or 0), type="integer"), AGE)


def _job_status(job: dict[str, Any]) -> str:
    """kubectl's Job STATUS: the first of its conditions that holds, ``Terminating`` once deleted."""
    conditions = {c.get("type"): c.get("status") for c in _status(job).get("conditions") or []}
    for ctype in ("Complete", "Failed", "Terminating", "Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if ctype == "Terminating":
            if (job.get("metadata") or {}).get("deletionTimestamp"):
                return ctype
        elif conditions.get(ctype) == "True":
            return ctype
    return "Running"


def _job_completions(job: dict[str, Any]) -> str:
    completions = (job.get("spec") or {}).get("completions")
    succeeded = _status(job).get("succeeded") or 0
    if completions is None:
        parallelism = (job.get("spec") or {}).get("parallelism") or 0
        return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    return f"{succeeded}/{completions}"


def _job_duration(job: dict[str, Any]) -> str:
    """How long the Job ran (until it completed), as HumanDuration prints it."""
    status = _status(job)
    start, end = status.get("startTime"), status.get("completionTime")
    if not start:
        return ""
    if not end:
        return human_age(start)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    try:
        return human_duration(int((datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds()))
    except ValueError:
        return "<invalid>"


JOB_COLUMNS = (
    Column("Status", _job_status), Column("Completions", _job_completions), Column("Duration", _job_duration),
    AGE, *_workload_wide("spec", "template"),
)
CRONJOB_COLUMNS = (
    Column("Schedule", path("spec", "schedule")),
    Column("Timezone", lambda o: (o.get("spec") or {}).get("timeZone") or "<none>"),
    Column("Suspend", path("spec", "suspend"), type="boolean"),
    Column("Active", lambda o: len(_status(o).get("active") or []), type="integer"),
    Column("Last Schedule", path("status", "lastScheduleTime"), age=True), AGE,
    *_workload_wide("spec", "jobTemplate", "spec", "template",
                    selector=("spec", "jobTemplate", "spec", "selector")),
)


def _int_or_percent(key: str) -> FieldGetter:
    return lambda pdb: str(v) if (v := (pdb.get("spec") or {}).get(key)) is not None else "N/A"


PDB_COLUMNS = (
    Column("Min Available", _int_or_percent("minAvailable")),
    Column("Max Unavailable", _int_or_percent("maxUnavailable")),
    Column("Allowed Disruptions", _int_status("disruptionsAllowed"), type="integer"), AGE,
)


# -- rbac.authorization.k8s.io ------------------------------------------------------------------


def _subjects(kind: str) -> FieldGetter:
    """The Users, Groups or ServiceAccounts (``namespace/name``) of a binding, comma-separated."""
    def get(binding: dict[str, Any]) -> str:
        subjects = [s for s in binding.get("subjects") or [] if s.get("kind") == kind]
        if kind == "ServiceAccount":
            return ", ".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects)
        return ", ".join(s.get("name", "") for s in subjects)
    return get


def _role_ref(binding: dict[str, Any]) -> str:
    ref = binding.get("roleRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


ROLE_COLUMNS = (NAME, Column("Created At", path("metadata", "creationTimestamp"), type="date",
                             description=AGE.description))
BINDING_COLUMNS = (
    Column("Role", _role_ref, description="RoleRef can reference a Role in the current namespace or a "
                                          "ClusterRole in the global namespace."),
    AGE,
    Column("Users", _subjects("User"), priority=1, description="Users in the roleBinding"),
    Column("Groups", _subjects("Group"), priority=1, description="Groups in the roleBinding"),
    Column("ServiceAccounts", _subjects("ServiceAccount"), priority=1,
           description="ServiceAccounts in the roleBinding"),
)

# scheduling.k8s.io/v1 PriorityClass (upstream printPriorityClass).
PRIORITY_CLASS_COLUMNS = (
    Column("Value", lambda pc: pc.get("value"), type="integer"),
    Column("Global-Default", lambda pc: bool(pc.get("globalDefault")), type="boolean"),
    AGE,
    Column("PreemptionPolicy", path("preemptionPolicy")),
)
