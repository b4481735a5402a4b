"""The kubelet emulation's per-pod lifecycle: annotations, when the next step is due, what an exit does."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.rules.lifecycle import (
    Lifecycle,
    due,
    exited_status,
    lifecycle_of,
    running_conditions,
    terminal_status,
)
from fakeapi.scheduler.rules.workloads import format_time

START = 1_800_000_000.0


def pod(annotations=None, *, policy="Never", ready=True, restarts=0):
    p = {"metadata": {"uid": "u", "annotations": annotations or {}},
         "spec": {"restartPolicy": policy, "containers": [{"name": "main", "image": "busybox"}]},
         "status": {"phase": "Running",
                    "containerStatuses": [{"name": "main", "restartCount": restarts,
                                           "state": {"running": {"startedAt": format_time(START)}}}]}}
    p["status"]["conditions"] = running_conditions(p, ready=ready, now=START)
    return p


@pytest.mark.parametrize(("annotations", "expected"), [
    ({}, Lifecycle()),
    ({"fakeapi.dev/run-for": "500ms"}, Lifecycle(run_for=0.5)),
    ({"fakeapi.dev/run-for": "1m30s", "fakeapi.dev/exit-code": "3"}, Lifecycle(run_for=90.0, exit_code=3)),
    ({"fakeapi.dev/ready-after": "2s"}, Lifecycle(ready_after=2.0)),
    ({"fakeapi.dev/terminate-after": "1m"}, Lifecycle(terminate_after=60.0)),
], ids=["none", "millis", "minutes-and-code", "ready-after", "terminate-after"])
def test_annotations(annotations, expected):
    assert lifecycle_of(pod(annotations)) == expected


@pytest.mark.parametrize("annotations", [
    {"fakeapi.dev/run-for": "soon"}, {"fakeapi.dev/exit-code": "300"}, {"fakeapi.dev/ready-after": "-1s"},
    {"fakeapi.dev/terminate-after": "later"},
], ids=["bad-duration", "bad-code", "negative", "bad-terminate-after"])
def test_bad_annotations_are_reported_and_ignored(annotations):
    parsed = lifecycle_of(pod(annotations))
    assert parsed.problem and parsed == Lifecycle(problem=parsed.problem)


@pytest.mark.parametrize(("lifecycle", "ready", "expected"), [
    (Lifecycle(), True, None),
    (Lifecycle(run_for=2), True, ("exit", START + 2)),
    (Lifecycle(ready_after=3), False, ("ready", START + 3)),
    (Lifecycle(run_for=5, ready_after=3), False, ("ready", START + 3)),
    (Lifecycle(run_for=2, ready_after=3), False, ("exit", START + 2)),
], ids=["runs-forever", "exits", "turns-ready", "ready-before-exit", "exits-before-ready"])
def test_next_step(lifecycle, ready, expected):
    assert due(pod(ready=ready), lifecycle, START) == expected


@pytest.mark.parametrize(("policy", "code", "phase", "restarts"), [
    ("Never", 0, "Succeeded", 0), ("Never", 2, "Failed", 0), ("OnFailure", 0, "Succeeded", 0),
    ("OnFailure", 2, None, 1), ("Always", 0, None, 1),
], ids=["never-ok", "never-fails", "onfailure-ok", "onfailure-restarts", "always-restarts"])
def test_an_exit_follows_the_restart_policy(policy, code, phase, restarts):
    status = exited_status(pod(policy=policy), Lifecycle(run_for=1, exit_code=code), START + 1)
    assert status.get("phase") == phase
    container = status["containerStatuses"][0]
    assert container["restartCount"] == restarts
    terminated = (container.get("lastState") or container["state"])["terminated"]
    assert terminated["exitCode"] == code and terminated["reason"] == ("Completed" if code == 0 else "Error")


@pytest.mark.parametrize(("code", "phase", "reason"), [(0, "Succeeded", "PodCompleted"), (143, "Failed", "PodFailed")],
                         ids=["completed", "failed"])
def test_a_terminal_pod_has_the_kubelets_terminal_conditions(code, phase, reason):
    """generateAPIPodStatus for a terminal phase: not ready for the phase's reason, and no sandbox."""
    status = terminal_status(pod(), code, START + 4)
    assert status["phase"] == phase
    conditions = {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}
    assert conditions == {"PodReadyToStartContainers": ("False", None), "Initialized": ("True", None),
                          "ContainersReady": ("False", reason), "Ready": ("False", reason),
                          "PodScheduled": ("True", None)}
    [container] = status["containerStatuses"]
    assert (container["ready"], container["started"]) == (False, False)
    assert container["state"]["terminated"] == {
        "exitCode": code, "reason": "Completed" if code == 0 else "Error",
        "startedAt": format_time(START), "finishedAt": format_time(START + 4)}
