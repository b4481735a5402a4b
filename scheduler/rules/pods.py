"""Where a pod stands in its lifecycle, as the control plane's loops need to know it.

Two questions with different answers, kept apart on purpose:

- *terminal*: the phase is ``Succeeded`` or ``Failed`` (upstream ``IsPodPhaseTerminal``); the
  pod's containers have stopped for good, so it no longer uses node resources nor keeps its
  PodGroup alive.
- *done*: terminal, or deleted before it was ever scheduled (the resourceclaim controller's
  ``isPodDone``): either way no container runs now or ever will, so its claims can be released.
  A deleted pod that is bound is not done until its kubelet reports it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TERMINAL_PHASES = ("Succeeded", "Failed")


def is_assigned(pod: Mapping[str, Any]) -> bool:
    """Bound (or bound-to-be) to a node: ``spec.nodeName`` is set."""
    return bool(node_of(pod))


def is_terminating(pod: Mapping[str, Any]) -> bool:
    """Deletion requested: ``metadata.deletionTimestamp`` is set."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_pod_terminal(pod: Mapping[str, Any]) -> bool:
    """The pod's phase is ``Succeeded`` or ``Failed``."""
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def ready_condition(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object's ``Ready`` condition (a pod's, or a node's: the same condition shape)."""
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)


def is_ready(obj: Mapping[str, Any]) -> bool:
    """The object's ``Ready`` condition is True."""
    condition = ready_condition(obj)
    return condition is not None and condition.get("status") == "True"


def is_pod_done(pod: Mapping[str, Any]) -> bool:
    """No container runs now or ever will: terminal, or deleted before being scheduled."""
    return is_pod_terminal(pod) or (is_terminating(pod) and not is_assigned(pod))


def node_of(pod: Mapping[str, Any]) -> str:
    """The node the pod is bound to (``spec.nodeName``), "" while it is bound to none."""
    return (pod.get("spec") or {}).get("nodeName") or ""


def node_name_keys(pod: Mapping[str, Any]) -> list[str]:
    """``spec.nodeName`` when set, for indexes of pods by node (upstream's ``spec.nodeName`` index)."""
    node = node_of(pod)
    return [node] if node else []


def as_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` with its type meta: lists and informers' objects may omit it, an Event's reference
    needs the kind."""
    return pod if pod.get("kind") else {**pod, "kind": "Pod", "apiVersion": "v1"}
