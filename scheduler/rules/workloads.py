"""Pure rules the workload controllers share (``pkg/controller/controller_utils.go`` and friends).

Owner references, pod activity and readiness, pods built from templates, the order in which
surplus pods are deleted, template hashes, int-or-percent arithmetic and index intervals.  Every
function takes wire-shaped dicts (and, where time matters, ``now`` in seconds) and returns a value.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from fakeapi.scheduler.rules.pods import (
    is_assigned,
    is_pod_terminal,
    is_ready,
    is_terminating,
    node_of,
    ready_condition,
)

from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict
from fakeapi.machinery.timestamps import format_rfc3339

# rand.SafeEncodeString's alphabet: no vowels, no look-alikes.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
POD_TEMPLATE_HASH = "pod-template-hash"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
MAX_GENERATE_PREFIX = 58


def parse_time(value: str | None) -> float | None:
    """An API timestamp (RFC 3339, optional fraction) as seconds since the epoch."""
    if not value:
        return None
    text = value.replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def format_time(seconds: float) -> str:
    """Seconds since the epoch as an API timestamp (second precision, UTC)."""
    return format_rfc3339(datetime.fromtimestamp(int(seconds), UTC))


def controller_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef``: controller and blockOwnerDeletion set."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object's controlling ownerReference, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def selects(selector: Mapping[str, Any] | None, obj: Mapping[str, Any]) -> bool:
    """Whether a ``metav1.LabelSelector`` selects the object (an empty selector selects nothing here,
    as controllers refuse to adopt with it)."""
    if not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions")):
        return False
    try:
        return label_selector_from_dict(selector).matches((obj.get("metadata") or {}).get("labels") or {})
    except SelectorError:
        return False


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """``FilterActivePods``: not Succeeded/Failed and not being deleted."""
    return not is_pod_terminal(pod) and not is_terminating(pod)


def is_pod_terminating(pod: Mapping[str, Any]) -> bool:
    """Being deleted and not yet terminal (``CountTerminatingPods``)."""
    return is_terminating(pod) and not is_pod_terminal(pod)


def ready_since(pod: Mapping[str, Any]) -> float | None:
    """When the pod last became Ready (seconds), None when not Ready."""
    condition = ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return None
    return parse_time(condition.get("lastTransitionTime"))


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: Ready for at least ``min_ready_seconds``."""
    since = ready_since(pod)
    return since is not None and (min_ready_seconds <= 0 or since + min_ready_seconds <= now)


def generate_name_prefix(owner_name: str) -> str:
    """``getPodsPrefix``: ``<owner>-``, the API server cuts it to 58 characters."""
    return f"{owner_name}-"


def pod_from_template(template: Mapping[str, Any], owner: Mapping[str, Any], *,
                      generate_name: str | None = None, name: str | None = None) -> dict[str, Any]:
    """``GetPodFromTemplate``: labels, annotations, finalizers and spec of the template, a controller ref."""
    meta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {"ownerReferences": [controller_ref(owner)]}
    if name:
        pod_meta["name"] = name
    else:
        pod_meta["generateName"] = generate_name or generate_name_prefix(owner["metadata"]["name"])
    for key in ("labels", "annotations", "finalizers"):
        if meta.get(key):
            pod_meta[key] = copy.deepcopy(meta[key])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def _log2_bucket(seconds: float) -> int:
    return int(math.log2(seconds)) if seconds >= 1 else 0


def deletion_rank(pod: Mapping[str, Any], related_on_node: int, now: float) -> tuple[Any, ...]:
    """Sort key of ``ActivePodsWithRanks.Less`` (LogarithmicScaleDown): smaller goes first.

    Unassigned before assigned, Pending < Unknown < Running, not Ready before Ready, lower
    deletion cost, more siblings on the same node, Ready for a shorter time, more restarts,
    newer, then UID.
    """
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    phase_order = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase") or "Pending", 0)
    try:
        cost = int((meta.get("annotations") or {}).get(DELETION_COST, "0"))
    except ValueError:
        cost = 0
    since = ready_since(pod)
    ready_bucket = _log2_bucket(now - since) if since is not None else 0
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    created = parse_time(meta.get("creationTimestamp")) or now
    return (is_assigned(pod), phase_order, is_ready(pod), cost, -related_on_node,
            ready_bucket, -restarts, _log2_bucket(now - created), meta.get("uid", ""))


def pods_to_delete(pods: list[dict[str, Any]], related: Iterable[Mapping[str, Any]], count: int,
                   now: float) -> list[dict[str, Any]]:
    """The ``count`` least valuable of ``pods`` (``getPodsToDelete``); ``related`` ranks co-located siblings."""
    on_node: dict[str, int] = {}
    for pod in related:
        node = node_of(pod)
        if node and is_pod_active(pod):
            on_node[node] = on_node.get(node, 0) + 1
    ranked = sorted(pods, key=lambda p: deletion_rank(
        p, on_node.get(node_of(p), 0), now))
    return ranked[:max(count, 0)]


def fnv32a(data: bytes) -> int:
    """32-bit FNV-1a."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: every character mapped onto :data:`SAFE_ALPHABET`."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """``ComputeHash``'s shape: FNV-32a over the template (canonical JSON here, Go's struct dump
    upstream) and the collision count, encoded safely.  Values differ from upstream's."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += int(collision_count).to_bytes(8, "little")
    return safe_encode(str(fnv32a(data)))


def _without_nulls(value: Any) -> Any:
    # A Go client's template carries "creationTimestamp": null (kubectl rollout undo sends it);
    # null and absent are the same field to Go.
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def without_hash(template: Mapping[str, Any] | None) -> dict[str, Any]:
    """The template without the ``pod-template-hash`` label (``EqualIgnoreHash``); nulls dropped."""
    out: dict[str, Any] = _without_nulls(dict(template or {}))
    labels = (out.get("metadata") or {}).get("labels")
    if labels and POD_TEMPLATE_HASH in labels:
        labels = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}
        out["metadata"] = {**out["metadata"], "labels": labels}
        if not labels:
            del out["metadata"]["labels"]
    return out


def scaled_value(value: int | str | None, total: int, *, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an int, or a percentage of ``total`` rounded up or down."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%") or 0)
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None,
                       desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounded up, unavailable down; both 0 → unavailable 1."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def format_intervals(indexes: Iterable[int]) -> str:
    """``1,3-5,7``: sorted indexes as the Job API writes completedIndexes."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def parse_intervals(text: str | None) -> set[int]:
    """The indexes of an interval string (``completedIndexes``, ``succeededIndexes``)."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            out.update(range(int(first), int(last or first) + 1))
        except ValueError:
            continue
    return out


def set_condition(conditions: list[dict[str, Any]], ctype: str, status: str, reason: str, message: str,
                  now: str, **extra: Any) -> list[dict[str, Any]]:
    """A new condition list with ``ctype`` set; lastTransitionTime kept when the status is unchanged."""
    old = next((c for c in conditions if c.get("type") == ctype), None)
    transition = old.get("lastTransitionTime") if old is not None and old.get("status") == status else now
    new = {"type": ctype, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": transition or now, **extra}
    return [*(c for c in conditions if c.get("type") != ctype), new]


def condition(obj: Mapping[str, Any], ctype: str) -> dict[str, Any] | None:
    """The object's status condition of ``ctype``, if any."""
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), None)


def has_true_condition(obj: Mapping[str, Any], ctype: str) -> bool:
    """Whether the object's ``ctype`` condition is True."""
    found = condition(obj, ctype)
    return found is not None and found.get("status") == "True"
