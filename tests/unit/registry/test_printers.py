"""kubectl's pod columns (READY, STATUS, RESTARTS) and Job columns, as upstream's printers derive them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fakeapi.registry.printers import JOB_COLUMNS, pod_row_conditions, pod_summary

RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}


def container(name: str = "main", *, ready: bool = True, state: dict | None = None, restarts: int = 0,
              last: dict | None = None, started: bool | None = None) -> dict[str, Any]:
    status = {"name": name, "ready": ready, "restartCount": restarts, "state": state or RUNNING}
    if last:
        status["lastState"] = {"terminated": last}
    if started is not None:
        status["started"] = started
    return status


def pod(phase: str = "Running", containers: tuple[dict, ...] = (container(),), *, init: tuple[dict, ...] = (),
        init_specs: tuple[dict, ...] = (), deleted: bool = False, conditions: tuple[dict, ...] = (),
        reason: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, "containerStatuses": list(containers),
                              "initContainerStatuses": list(init), "conditions": list(conditions)}
    if reason:
        status["reason"] = reason
    meta: dict[str, Any] = {"name": "p"}
    if deleted:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": status,
            "spec": {"containers": [{"name": c["name"]} for c in containers], "initContainers": list(init_specs)}}


def terminated(code: int, reason: str = "", **extra: Any) -> dict[str, Any]:
    return {"terminated": {"exitCode": code, **({"reason": reason} if reason else {}), **extra}}


READY = {"type": "Ready", "status": "True"}
INITIALIZED = {"type": "Initialized", "status": "True"}


@pytest.mark.parametrize(("p", "expected"), [
    (pod(), ("1/1", "Running", "0")),
    (pod(containers=(container(ready=False),)), ("0/1", "Running", "0")),
    (pod("Succeeded", (container(ready=False, state=terminated(0, "Completed")),)), ("0/1", "Completed", "0")),
    (pod("Failed", (container(ready=False, state=terminated(143, "Error")),)), ("0/1", "Error", "0")),
    (pod("Failed", (container(ready=False, state=terminated(2)),)), ("0/1", "ExitCode:2", "0")),
    (pod("Failed", (container(ready=False, state=terminated(137, signal=9)),)), ("0/1", "Signal:9", "0")),
    (pod(containers=(container(ready=False, state={"waiting": {"reason": "CrashLoopBackOff"}}),)),
     ("0/1", "CrashLoopBackOff", "0")),
    (pod(deleted=True), ("1/1", "Terminating", "0")),
    (pod("Failed", (container(ready=False, state=terminated(143, "Error")),), deleted=True), ("0/1", "Error", "0")),
    (pod(deleted=True, reason="NodeLost"), ("1/1", "Unknown", "0")),
    (pod("Pending", (), conditions=({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},)),
     ("0/0", "SchedulingGated", "0")),
    (pod("Evicted", ()), ("0/0", "Evicted", "0")),
], ids=["running", "not-ready", "completed", "error", "exit-code", "signal", "waiting", "terminating",
        "terminal-while-deleted", "node-lost", "scheduling-gated", "phase-as-is"])
def test_pod_status_columns(p: dict[str, Any], expected: tuple[str, str, str]) -> None:
    assert pod_summary(p) == expected


def test_a_completed_container_beside_a_running_one_reads_running_or_not_ready() -> None:
    """Upstream turns "Completed" back to Running (Ready) or NotReady while another container runs."""
    done = container("a", ready=False, state=terminated(0, "Completed"))
    running = pod(containers=(done, container("b")), conditions=(READY,))
    assert pod_summary(running) == ("1/2", "Running", "0")
    assert pod_summary(pod(containers=(done, container("b")))) == ("1/2", "NotReady", "0")


@pytest.mark.parametrize(("init", "expected"), [
    ((), "Init:0/2"),
    ((container("i1", ready=False, state={"waiting": {"reason": "PodInitializing"}}),), "Init:0/2"),
    ((container("i1", ready=False, state={"waiting": {"reason": "ImagePullBackOff"}}),), "Init:ImagePullBackOff"),
    ((container("i1", ready=False, state=terminated(0, "Completed")),
      container("i2", ready=False, state=RUNNING)), "Init:1/2"),
    ((container("i1", ready=False, state=terminated(1)),), "Init:ExitCode:1"),
    ((container("i1", ready=False, state=terminated(1, "Error")),), "Init:Error"),
], ids=["no-status", "pod-initializing", "waiting-reason", "second-running", "failed-exit-code", "failed-reason"])
def test_init_containers_name_the_step(init: tuple[dict, ...], expected: str) -> None:
    specs = ({"name": "i1"}, {"name": "i2"})
    # The pod's first status: init containers unfinished, the main container waiting to start.
    waiting = container(ready=False, state={"waiting": {"reason": "PodInitializing"}})
    init = init or (container("i1", ready=False, state={"waiting": {}}),)
    assert pod_summary(pod("Pending", (waiting,), init=init, init_specs=specs))[1] == expected


def test_sidecars_count_toward_ready_and_their_restarts_are_kept() -> None:
    """A restartable init container (sidecar) is one of the pod's containers once started."""
    sidecar = container("proxy", restarts=2, started=True)
    p = pod(init=(sidecar,), init_specs=({"name": "proxy", "restartPolicy": "Always"},), conditions=(INITIALIZED,))
    ready, status, restarts = pod_summary(p)
    assert (ready, status, restarts) == ("2/2", "Running", "2")


def test_restarts_say_when_the_last_one_was() -> None:
    half_hour_ago = (datetime.now(UTC) - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    crashed = container(restarts=3, last={"exitCode": 1, "finishedAt": half_hour_ago})
    assert pod_summary(pod(containers=(crashed,))) == ("1/1", "Running", "3 (30m ago)")


def test_finished_pods_carry_the_completed_row_condition() -> None:
    [completed] = pod_row_conditions(pod("Succeeded"))
    assert completed == {"type": "Completed", "status": "True", "reason": "Succeeded",
                         "message": "The pod has completed successfully."}
    assert pod_row_conditions(pod("Failed"))[0]["reason"] == "Failed"
    assert pod_row_conditions(pod()) == []


def job(conditions: dict[str, str] | None = None, *, deleted: bool = False, **status: Any) -> dict[str, Any]:
    meta = {"name": "j", **({"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleted else {})}
    return {"metadata": meta, "spec": {"completions": 1},
            "status": {"conditions": [{"type": t, "status": s} for t, s in (conditions or {}).items()], **status}}


def job_cell(name: str, obj: dict[str, Any]) -> Any:
    return next(c for c in JOB_COLUMNS if c.name == name).getter(obj)


@pytest.mark.parametrize(("j", "expected"), [
    (job(), "Running"),
    (job({"Complete": "True", "SuccessCriteriaMet": "True"}), "Complete"),
    (job({"Failed": "True", "FailureTarget": "True"}), "Failed"),
    (job({"Suspended": "True"}, deleted=True), "Terminating"),
    (job({"Suspended": "True", "FailureTarget": "True"}), "Suspended"),
    (job({"FailureTarget": "True"}), "FailureTarget"),
    (job({"SuccessCriteriaMet": "True"}), "SuccessCriteriaMet"),
    (job({"Suspended": "False"}), "Running"),
], ids=["running", "complete", "failed", "terminating", "suspended", "failure-target", "success-criteria",
        "condition-false"])
def test_job_status_column(j: dict[str, Any], expected: str) -> None:
    assert job_cell("Status", j) == expected


@pytest.mark.parametrize(("seconds", "expected"), [(45, "45s"), (120, "2m"), (150, "2m30s"), (12_000, "3h20m")])
def test_job_duration_is_human_duration(seconds: int, expected: str) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    end = start + timedelta(seconds=seconds)
    done = job(startTime=start.strftime("%Y-%m-%dT%H:%M:%SZ"), completionTime=end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert job_cell("Duration", done) == expected
