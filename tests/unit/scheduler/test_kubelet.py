"""Kubelet emulation rules: when a bound pod may start, and the status it gets."""

import pytest
from fakeapi.scheduler.informers.cache import Lister, Store
from fakeapi.scheduler.kubelet import claims_not_ready, is_running, is_settled, running_status

NOW = "2026-01-01T00:00:00Z"


def pod(claims=(), statuses=(), group=None, status=None):
    spec = {"nodeName": "n1", "resourceClaims": list(claims),
            "containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "pause"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "p-uid", "resourceVersion": "5"},
            "spec": spec, "status": {"resourceClaimStatuses": list(statuses), **(status or {})}}


def claim(name, allocated=True, reserved=()):
    status = {"reservedFor": list(reserved)}
    if allocated:
        status["allocation"] = {"devices": {"results": []}}
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"{name}-uid"}, "status": status}


def lister(*claims):
    store = Store()
    for c in claims:
        store.upsert(c)
    return Lister(store)


POD_REF = {"resource": "pods", "name": "p", "uid": "p-uid"}
GROUP_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg", "uid": "pg-uid"}
BY_NAME = {"name": "shared", "resourceClaimName": "rc"}
BY_TEMPLATE = {"name": "gpu", "resourceClaimTemplateName": "t"}


@pytest.mark.parametrize(
    ("p", "claims", "reason"),
    [
        (pod(), [], None),
        (pod([BY_NAME]), [claim("rc", reserved=[POD_REF])], None),
        (pod([BY_NAME], group="pg"), [claim("rc", reserved=[GROUP_REF])], None),
        (pod([BY_TEMPLATE], statuses=[{"name": "gpu"}]), [], None),
        (pod([BY_NAME]), [], "not found"),
        (pod([BY_NAME]), [claim("rc", allocated=False)], "is not allocated"),
        (pod([BY_NAME]), [claim("rc")], "is not allowed to use ResourceClaim rc"),
        (pod([BY_NAME], group="other"), [claim("rc", reserved=[GROUP_REF])], "is not allowed"),
        (pod([BY_TEMPLATE]), [], "has not been created yet"),
    ],
    ids=["no-claims", "reserved-for-pod", "reserved-for-group", "claim-not-needed", "missing",
         "unallocated", "unreserved", "other-group", "template-not-generated"],
)
def test_claims_not_ready(p, claims, reason):
    got = claims_not_ready(p, lister(*claims))
    if reason is None:
        assert got is None
    else:
        assert reason in got


def test_running_status_keeps_foreign_conditions_and_start_time():
    p = pod(status={"startTime": "earlier", "conditions": [
        {"type": "DisruptionTarget", "status": "True"},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"}]})
    status = running_status(p, NOW)
    conditions = {c["type"]: c for c in status["conditions"]}
    assert status["phase"] == "Running"
    assert status["startTime"] == "earlier"
    assert conditions["PodScheduled"]["lastTransitionTime"] == "t0", "an unchanged condition keeps its time"
    assert conditions["DisruptionTarget"]["status"] == "True"
    assert all(conditions[t]["status"] == "True" for t in ("Initialized", "ContainersReady", "Ready"))
    assert [(c["name"], c["ready"], "running" in c["state"]) for c in status["containerStatuses"]] == [
        ("main", True, True), ("side", True, True)]
    assert is_running({"status": status})


def test_pending_pod_is_not_running():
    assert not is_running(pod(status={"phase": "Pending"}))


def running(ready=True, started=True, **meta):
    """A bound pod as the kubelet's own status write leaves it, with ``meta`` merged into metadata."""
    p = pod()
    state = {"running": {"startedAt": NOW}} if started else {"waiting": {"reason": "ContainerCreating"}}
    p["status"].update({"phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                        "containerStatuses": [{"name": "main", "state": state}]})
    p["metadata"].update(meta)
    return p


def with_debug_container(p, status_written):
    p["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    if status_written:
        p["status"]["ephemeralContainerStatuses"] = [{"name": "debugger", "state": {"running": {"startedAt": NOW}}}]
    return p


@pytest.mark.parametrize(("p", "timer_pending", "settled"), [
    pytest.param(running(), False, True, id="running-and-ready"),
    pytest.param(pod(), False, False, id="pending"),
    pytest.param(running(ready=False), False, False, id="not-ready-yet"),
    pytest.param(running(started=False), False, False, id="phase-written-by-a-client"),
    pytest.param(running(), True, False, id="lifecycle-timer-to-cancel"),
    pytest.param(running(annotations={"fakeapi.dev/run-for": "2s"}), False, False, id="exit-to-time"),
    pytest.param(running(annotations={"fakeapi.dev/ready-after": "1s"}), False, True, id="ready-after-done"),
    pytest.param(running(deletionTimestamp=NOW), False, False, id="terminating"),
    pytest.param(with_debug_container(running(), status_written=False), False, False, id="debug-container-to-start"),
    pytest.param(with_debug_container(running(), status_written=True), False, True, id="debug-container-running"),
    pytest.param(running() | {"status": {"phase": "Succeeded"}}, False, False, id="finished"),
])
def test_is_settled(p, timer_pending, settled):
    assert is_settled(p, timer_pending=timer_pending) is settled
