"""Job rules (``pkg/controller/job``), pure: pod failure policy, backoff, indexes, success policy,
and KEP-5547's compilation of ``spec.scheduling`` into a Workload and its PodGroup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.rules.workloads import controller_of, fnv32a, parse_intervals, safe_encode

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
GROUP_TEMPLATE_NAME = "scheduling.k8s.io/group-template-name"
JOB_CONTROLLER = "kubernetes.io/job-controller"
DEFAULT_BACKOFF = 10.0
MAX_BACKOFF = 600.0  # MaxJobPodFailureBackOff: 10 minutes in code (the docs say 6)
_POD_FAILURE_BACKOFF: Backoff[str] = Backoff(DEFAULT_BACKOFF, MAX_BACKOFF)

BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
MAX_NAME = 253
MAX_GENERATE_PREFIX = 58


def is_finished(job: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """("Complete" | "Failed", condition) when the Job has finished."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return condition["type"], condition
    return None


def is_indexed(job: Mapping[str, Any]) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def pod_index(pod: Mapping[str, Any]) -> int | None:
    """The completion index of a pod of an Indexed Job (annotation, else label)."""
    meta = pod.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(COMPLETION_INDEX) or (meta.get("labels") or {}).get(COMPLETION_INDEX)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def backoff_delay(failures: int) -> float:
    """Wait before the next pod after ``failures`` failures since the last success: 10 s doubling, 10 min cap."""
    if failures <= 0:
        return 0.0
    return _POD_FAILURE_BACKOFF.delay(failures - 1)


def _exit_codes(pod: Mapping[str, Any], container: str | None) -> list[tuple[str, int]]:
    status = pod.get("status") or {}
    out: list[tuple[str, int]] = []
    for key in ("containerStatuses", "initContainerStatuses"):
        for c in status.get(key) or []:
            terminated = (c.get("state") or {}).get("terminated") or {}
            code = terminated.get("exitCode")
            if code and (container is None or c.get("name") == container):
                out.append((c.get("name", ""), int(code)))
    return out


def match_pod_failure_policy(job: Mapping[str, Any], pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """``matchPodFailurePolicy``: (action, FailJob message) of the first rule the failed pod matches."""
    rules = (((job.get("spec") or {}).get("podFailurePolicy")) or {}).get("rules") or []
    meta = pod.get("metadata") or {}
    for i, rule in enumerate(rules):
        codes = rule.get("onExitCodes")
        if codes is not None:
            values = set(codes.get("values") or [])
            for container, code in _exit_codes(pod, codes.get("containerName")):
                if (code in values) == (codes.get("operator") == "In"):
                    return rule.get("action", ""), (
                        f"Container {container} for pod {meta.get('namespace')}/{meta.get('name')} failed with exit "
                        f"code {code} matching {rule.get('action')} rule at index {i}")
        for pattern in rule.get("onPodConditions") or []:
            for c in (pod.get("status") or {}).get("conditions") or []:
                if c.get("type") == pattern.get("type") and c.get("status") == (pattern.get("status") or "True"):
                    return rule.get("action", ""), (
                        f"Pod {meta.get('namespace')}/{meta.get('name')} has condition {c.get('type')} matching "
                        f"{rule.get('action')} rule at index {i}")
    return None


def success_policy_match(job: Mapping[str, Any], completed: set[int]) -> int | None:
    """Index of the first successPolicy rule the completed indexes satisfy (Indexed Jobs)."""
    rules = (((job.get("spec") or {}).get("successPolicy")) or {}).get("rules") or []
    for i, rule in enumerate(rules):
        wanted = parse_intervals(rule.get("succeededIndexes")) if rule.get("succeededIndexes") else None
        pool = completed & wanted if wanted is not None else completed
        count = rule.get("succeededCount")
        if wanted is not None and count is None and wanted <= completed:
            return i
        if count is not None and len(pool) >= count:
            return i
    return None


def pending_indexes(completions: int, completed: set[int], active: Iterable[int], room: int) -> list[int]:
    """``firstPendingIndexes``: the lowest indexes neither completed nor running, at most ``room``."""
    busy = completed | set(active)
    return [i for i in range(completions) if i not in busy][:max(room, 0)]


def job_pod_name_prefix(job_name: str, index: int | None) -> str:
    """``<job>-`` or ``<job>-<index>-``, the job name cut so the prefix fits the generated-name limit."""
    suffix = f"-{index}-" if index is not None else "-"
    return job_name[:MAX_GENERATE_PREFIX - len(suffix)] + suffix


def management_mode(job: Mapping[str, Any], gate: bool) -> str:
    """KEP-5547 ``getManagementMode``: "both" (Workload and PodGroup), "podgroup" or "none"."""
    if not gate:
        return "none"
    template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    if template_spec.get("schedulingGroup"):
        return "none"  # the user brings the PodGroup
    if controller_of(job) is None:
        return "both"
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    return "podgroup" if annotations.get(GROUP_TEMPLATE_NAME) else "none"


def is_new_job(job: Mapping[str, Any], pods: list[Any]) -> bool:
    """``isNewJob``: never started, nothing counted, not suspended before."""
    status = job.get("status") or {}
    suspended = any(c.get("type") == "Suspended" for c in status.get("conditions") or [])
    return not pods and not status.get("startTime") and not status.get("succeeded") and not status.get("failed") \
        and not suspended


def workload_name(job: Mapping[str, Any]) -> str:
    """``computeWorkloadName``: ``<job>-<hash of the Job UID>`` within 253 characters."""
    meta = job["metadata"]
    digest = safe_encode(str(fnv32a(meta["uid"].encode())))
    return f"{meta['name'][:MAX_NAME - len(digest) - 1]}-{digest}"


def template_name(job: Mapping[str, Any]) -> str:
    """The one pod-group template of a Job's Workload: ``<job>-pgt-0``."""
    return f"{job['metadata']['name']}-pgt-0"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName``: ``<workload>-<template>-<hash>``, both parts cut to fit 253."""
    digest = safe_encode(str(fnv32a((workload + template).encode())))
    room = MAX_NAME - len(digest) - 2
    half = room // 2
    return f"{workload[:max(half, room - len(template))]}-{template[:half]}-{digest}"


def scheduling_policy(job: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved policy: basic when omitted; a gang's minCount defaults to parallelism (at least 1)."""
    spec = job.get("spec") or {}
    policy = ((spec.get("scheduling") or {}).get("schedulingPolicy")) or {}
    if "gang" not in policy:
        return {"basic": {}}
    min_count = (policy.get("gang") or {}).get("minCount")
    if min_count is None:
        min_count = max(int(spec.get("parallelism") if spec.get("parallelism") is not None else 1), 1)
    return {"gang": {"minCount": int(min_count)}}


def pod_group_template(job: Mapping[str, Any]) -> dict[str, Any]:
    """``generateWorkload``'s one template: policy, constraints, disruption mode, claims, priority class."""
    scheduling = (job.get("spec") or {}).get("scheduling") or {}
    template: dict[str, Any] = {"name": template_name(job), "schedulingPolicy": scheduling_policy(job)}
    for key in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if scheduling.get(key):
            template[key] = scheduling[key]
    priority_class = (((job.get("spec") or {}).get("template") or {}).get("spec") or {}).get("priorityClassName")
    if priority_class:
        template["priorityClassName"] = priority_class
    return template
