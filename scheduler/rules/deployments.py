"""Deployment arithmetic (``pkg/controller/deployment/util/deployment_util.go``), pure.

ReplicaSets here are wire dicts; "size" is ``spec.replicas``.  The controller decides when to
call what; these functions only compute.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from fakeapi.scheduler.rules.workloads import parse_time, resolve_fenceposts

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
# Deployment annotations a ReplicaSet does not copy (annotationsToSkip).
SKIPPED_ANNOTATIONS = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS,
                                 ROLLBACK_TO})
REVISION_HISTORY_MAX = 2000

RS = Mapping[str, Any]


def size(rs: RS | None) -> int:
    return int(((rs or {}).get("spec") or {}).get("replicas") or 0)


def status_of(rs: RS, key: str) -> int:
    return int((rs.get("status") or {}).get(key) or 0)


def revision(rs: RS) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def replicas(deployment: RS) -> int:
    value = (deployment.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def fenceposts(deployment: RS) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a Deployment; Recreate surges nothing and may lose everyone."""
    spec = deployment.get("spec") or {}
    strategy = spec.get("strategy") or {}
    desired = replicas(deployment)
    if strategy.get("type") == "Recreate":
        return 0, desired
    rolling = strategy.get("rollingUpdate") or {}
    surge, unavailable = resolve_fenceposts(rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"),
                                            desired)
    return surge, min(unavailable, desired)


def new_rs_replicas(deployment: RS, all_sets: Sequence[RS], new_rs: RS | None) -> int:
    """``NewRSNewReplicas``: how big the new ReplicaSet may be now."""
    desired = replicas(deployment)
    if ((deployment.get("spec") or {}).get("strategy") or {}).get("type") == "Recreate":
        return desired
    surge, _ = fenceposts(deployment)
    current = sum(size(rs) for rs in all_sets)
    new_size = size(new_rs)
    max_total = desired + surge
    if current >= max_total:
        return new_size
    return new_size + min(max_total - current, desired - new_size)


def max_scaled_down(deployment: RS, all_sets: Sequence[RS], new_rs: RS | None) -> int:
    """How many old replicas ``reconcileOldReplicaSets`` may remove now."""
    _, unavailable = fenceposts(deployment)
    min_available = replicas(deployment) - unavailable
    new_unavailable = size(new_rs) - status_of(new_rs or {}, "availableReplicas")
    return sum(size(rs) for rs in all_sets) - min_available - new_unavailable


def scale_down_old(old_sets: Sequence[RS], budget: int, *, unhealthy_only: bool) -> list[tuple[RS, int]]:
    """New sizes for old ReplicaSets, oldest first, removing at most ``budget`` replicas.

    ``unhealthy_only`` (``cleanupUnhealthyReplicas``) removes only the unavailable part of each.
    """
    out: list[tuple[RS, int]] = []
    for rs in sorted(old_sets, key=lambda r: (parse_time((r.get("metadata") or {}).get("creationTimestamp")) or 0,
                                              (r.get("metadata") or {}).get("name", ""))):
        if budget <= 0:
            break
        current = size(rs)
        if current == 0:
            continue
        removable = current - status_of(rs, "availableReplicas") if unhealthy_only else current
        take = max(min(removable, budget), 0)
        if take:
            out.append((rs, current - take))
            budget -= take
    return out


def proportions(deployment: RS, active: Sequence[RS]) -> dict[str, int]:
    """``scale``: new sizes by ReplicaSet name when a scaling event hits several active sets.

    The difference to ``replicas + maxSurge`` is spread in proportion to each set's size; what
    rounding leaves goes to the largest (newest on growth, oldest on shrink).
    """
    surge, _ = fenceposts(deployment)
    allowed = replicas(deployment) + surge
    total = sum(size(rs) for rs in active)
    delta = allowed - total
    if delta == 0 or total == 0:
        return {rs["metadata"]["name"]: size(rs) for rs in active}
    growing = delta > 0
    ordered = sorted(active, key=lambda r: (size(r), parse_time(r["metadata"].get("creationTimestamp")) or 0),
                     reverse=growing)
    if not growing:
        ordered = sorted(active, key=lambda r: (-size(r), parse_time(r["metadata"].get("creationTimestamp")) or 0))
    sizes: dict[str, int] = {}
    added = 0
    for rs in ordered:
        share = size(rs) * delta / total
        part = math.floor(share) if growing else math.ceil(share)
        part = part if growing else max(part, -size(rs))
        sizes[rs["metadata"]["name"]] = size(rs) + part
        added += part
    first = ordered[0]["metadata"]["name"]
    sizes[first] = max(sizes[first] + (delta - added), 0)
    return sizes


def rs_annotations(deployment: RS, rs: RS | None, new_revision: int) -> dict[str, str]:
    """``SetNewReplicaSetAnnotations``: the Deployment's annotations, the revision, its history."""
    annotations = {k: v for k, v in ((deployment.get("metadata") or {}).get("annotations") or {}).items()
                   if k not in SKIPPED_ANNOTATIONS}
    current = dict(((rs or {}).get("metadata") or {}).get("annotations") or {})
    for key in (REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS):
        if key in current:
            annotations[key] = current[key]
    old_revision = current.get(REVISION)
    if old_revision and int(old_revision) < new_revision:
        history = [h for h in current.get(REVISION_HISTORY, "").split(",") if h] + [old_revision]
        text = ",".join(history)
        annotations[REVISION_HISTORY] = text[-REVISION_HISTORY_MAX:].lstrip(",")
    annotations[REVISION] = str(max(new_revision, int(old_revision or 0)))
    return annotations


def replica_annotations(deployment: RS) -> dict[str, str]:
    """``SetReplicasAnnotations``: desired and max replicas written on every scale."""
    surge, _ = fenceposts(deployment)
    return {DESIRED_REPLICAS: str(replicas(deployment)), MAX_REPLICAS: str(replicas(deployment) + surge)}


def is_complete(deployment: RS, status: Mapping[str, Any]) -> bool:
    """``DeploymentComplete``: every replica updated and available, and the generation observed."""
    desired = replicas(deployment)
    return (status.get("updatedReplicas", 0) == desired and status.get("replicas", 0) == desired
            and status.get("availableReplicas", 0) == desired
            and status.get("observedGeneration", 0) >= (deployment.get("metadata") or {}).get("generation", 1))
