"""Per-pod lifecycle of the kubelet emulation, chosen by annotations (in the spirit of kwok's stages).

- ``fakeapi.dev/run-for: <duration>`` (Go duration: ``500ms``, ``2s``, ``1m30s``): the containers
  run that long, then exit.  Without it a started pod runs until deleted.
- ``fakeapi.dev/exit-code: "<n>"``: the exit code they end with (default 0).
- ``fakeapi.dev/ready-after: <duration>``: the pod turns ``Ready`` that long after its containers
  started (default at once), so ``minReadySeconds`` and rollouts become testable.
- ``fakeapi.dev/terminate-after: <duration>``: once the pod is deleted, its containers take that
  long to stop (default at once), so a test sees the pod terminating; past the grace period they
  are killed.

On a Node, ``fakeapi.dev/kubelet-stopped: "true"`` (or the time it stopped, RFC 3339) stands for
a kubelet that is down: the emulation neither renews the node's lease nor touches its pods until
the annotation goes.

A deleted pod's containers end as the kubelet ends them: 143 (SIGTERM) when they stop within the
grace period, 137 (SIGKILL) when it runs out; the pod then turns terminal (``Failed``), as the
kubelet has reported deleted pods since Kubernetes 1.27, before the kubelet confirms the deletion.

What an exit means follows the pod's ``restartPolicy`` as the kubelet does: ``Never`` ends the
pod (``Succeeded`` for 0, ``Failed`` otherwise); ``OnFailure`` ends it on 0 and restarts the
containers on failure; ``Always`` restarts them either way (``restartCount`` grows, the last
termination is kept in ``lastState``).  Times are seconds since the epoch from the control
plane's clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.rules.pods import is_ready
from fakeapi.scheduler.rules.workloads import format_time, parse_time

from fakeapi.machinery.durations import parse_duration

RUN_FOR = "fakeapi.dev/run-for"
EXIT_CODE = "fakeapi.dev/exit-code"
READY_AFTER = "fakeapi.dev/ready-after"
TERMINATE_AFTER = "fakeapi.dev/terminate-after"
KUBELET_STOPPED = "fakeapi.dev/kubelet-stopped"
# Exit codes of a container stopped by the kubelet: 128 + SIGTERM, 128 + SIGKILL.
SIGTERM_EXIT = 143
SIGKILL_EXIT = 137


@dataclass(frozen=True)
class Lifecycle:
    """What a pod's annotations ask for; ``problem`` explains an annotation that was ignored."""

    run_for: float | None = None
    exit_code: int = 0
    ready_after: float = 0.0
    terminate_after: float = 0.0
    problem: str = ""


def lifecycle_of(pod: Mapping[str, Any]) -> Lifecycle:
    """Parse the lifecycle annotations; bad values are reported and ignored."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    problems: list[str] = []
    durations: dict[str, float] = {}
    exit_code = 0
    for key in (RUN_FOR, READY_AFTER, TERMINATE_AFTER):
        if key in annotations:
            try:
                value = parse_duration(annotations[key])
                if value < 0:
                    raise ValueError(f"time: negative duration {annotations[key]!r}")
            except ValueError as exc:
                problems.append(f"{key}: {exc}")
                continue
            durations[key] = value
    if EXIT_CODE in annotations:
        try:
            exit_code = int(annotations[EXIT_CODE])
            if not 0 <= exit_code <= 255:
                raise ValueError
        except ValueError:
            problems.append(f'{EXIT_CODE}: "{annotations[EXIT_CODE]}" is not an exit code (0-255)')
            exit_code = 0
    return Lifecycle(durations.get(RUN_FOR), exit_code, durations.get(READY_AFTER, 0.0),
                     durations.get(TERMINATE_AFTER, 0.0), "; ".join(problems))


def run_started(pod: Mapping[str, Any]) -> float | None:
    """When the containers' current run started: the first container's ``state.running.startedAt``."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        started = ((status.get("state") or {}).get("running") or {}).get("startedAt")
        if started:
            return parse_time(started)
    return None


def _stopped_value(node: Mapping[str, Any] | None) -> str | None:
    return (((node or {}).get("metadata") or {}).get("annotations") or {}).get(KUBELET_STOPPED)


def kubelet_stopped(node: Mapping[str, Any] | None) -> bool:
    """Whether the node's kubelet is down: its ``fakeapi.dev/kubelet-stopped`` annotation says
    ``"true"`` or when it stopped (an RFC 3339 time)."""
    value = _stopped_value(node)
    return value == "true" or (value is not None and parse_time(value) is not None)


def kubelet_restarted(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether a node's change brings its kubelet back (the stop annotation went)."""
    return kubelet_stopped(old) and not kubelet_stopped(new)


def kubelet_stopped_at(node: Mapping[str, Any] | None) -> float | None:
    """When the node's kubelet stopped, if its annotation says (seconds since the epoch)."""
    return parse_time(_stopped_value(node))


def due(pod: Mapping[str, Any], lifecycle: Lifecycle, now: float) -> tuple[str, float] | None:
    """The next lifecycle step of a running pod and when: ("ready" | "exit", at), or None."""
    started = run_started(pod)
    if started is None:
        return None
    steps = []
    if not is_ready(pod) and (lifecycle.run_for is None or lifecycle.ready_after < lifecycle.run_for):
        steps.append(("ready", started + lifecycle.ready_after))
    if lifecycle.run_for is not None:
        steps.append(("exit", started + lifecycle.run_for))
    return min(steps, key=lambda s: s[1]) if steps else None


def _conditions(pod: Mapping[str, Any], updates: Mapping[str, tuple[str, str]], now: float) -> list[dict[str, Any]]:
    """Conditions with ``updates`` (type -> (status, reason)); transition time moves on a change."""
    current = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type")}
    stamp = format_time(now)
    for ctype, (state, reason) in updates.items():
        old = current.get(ctype)
        if old is not None and old.get("status") == state:
            continue
        current[ctype] = {"type": ctype, "status": state, "lastProbeTime": None, "lastTransitionTime": stamp,
                          **({"reason": reason} if reason else {})}
    return list(current.values())


def container_statuses(pod: Mapping[str, Any], *, ready: bool, started_at: float,
                       restart_count: int = 0, last_state: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Running container statuses, as the kubelet reports them."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    return [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": ready, "started": True,
             "restartCount": restart_count, "containerID": f"fakeapi://{uid}-{c['name']}",
             "state": {"running": {"startedAt": format_time(started_at)}},
             **({"lastState": last_state} if last_state else {})}
            for c in (pod.get("spec") or {}).get("containers") or []]


def running_conditions(pod: Mapping[str, Any], *, ready: bool, now: float) -> list[dict[str, Any]]:
    """The conditions of a pod whose containers run (Ready and ContainersReady as ``ready`` says)."""
    state = "True" if ready else "False"
    reason = "" if ready else "ContainersNotReady"
    return _conditions(pod, {"PodReadyToStartContainers": ("True", ""), "Initialized": ("True", ""),
                             "ContainersReady": (state, reason), "Ready": (state, reason),
                             "PodScheduled": ("True", "")}, now)


def terminated_state(exit_code: int, started: float, now: float) -> dict[str, Any]:
    """``state.terminated`` as the kubelet writes it: reason Completed for 0, Error otherwise."""
    return {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                           "startedAt": format_time(started), "finishedAt": format_time(now)}}


def exited_status(pod: Mapping[str, Any], lifecycle: Lifecycle, now: float) -> dict[str, Any]:
    """The status after the containers exit with ``lifecycle.exit_code`` (restart or terminal)."""
    code = lifecycle.exit_code
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    if policy == "Always" or (policy == "OnFailure" and code != 0):
        terminated = terminated_state(code, run_started(pod) or now, now)
        restarts = 1 + max((int(c.get("restartCount") or 0)
                            for c in (pod.get("status") or {}).get("containerStatuses") or []), default=0)
        return {"conditions": running_conditions(pod, ready=lifecycle.ready_after <= 0, now=now),
                "containerStatuses": container_statuses(pod, ready=lifecycle.ready_after <= 0, started_at=now,
                                                        restart_count=restarts, last_state=terminated)}
    return terminal_status(pod, code, now)


def terminal_status(pod: Mapping[str, Any], exit_code: int, now: float) -> dict[str, Any]:
    """The status of a pod whose containers all ended with ``exit_code`` for good: ``Succeeded``
    for 0, else ``Failed``, and the conditions the kubelet generates for a terminal phase (its
    sandbox gone, so not ready to start containers either)."""
    status = pod.get("status") or {}
    terminated = terminated_state(exit_code, run_started(pod) or now, now)
    uid = (pod.get("metadata") or {}).get("uid", "")
    statuses = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "started": False,
                 "restartCount": int(next((s.get("restartCount") for s in status.get("containerStatuses") or []
                                           if s.get("name") == c["name"]), 0) or 0),
                 "containerID": f"fakeapi://{uid}-{c['name']}", "state": terminated}
                for c in (pod.get("spec") or {}).get("containers") or []]
    phase, reason = ("Succeeded", "PodCompleted") if exit_code == 0 else ("Failed", "PodFailed")
    return {"phase": phase,
            "conditions": _conditions(pod, {"PodReadyToStartContainers": ("False", ""),
                                            "ContainersReady": ("False", reason), "Ready": ("False", reason)}, now),
            "containerStatuses": statuses}
