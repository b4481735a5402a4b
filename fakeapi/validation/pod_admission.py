"""Mutating admission plugins every pod create goes through on a 1.37 apiserver.

- ``ServiceAccount``: a pod without ``serviceAccountName`` runs as ``default`` (the v1
  conversion mirrors it into the deprecated ``serviceAccount``).  Upstream also refuses a pod
  whose ServiceAccount does not exist yet and projects a token volume into it; fakeapi does
  neither, so pods start in namespaces no serviceaccounts controller has visited.
- ``DefaultTolerationSeconds``: pods tolerate the ``not-ready`` and ``unreachable`` NoExecute
  taints for 300 s unless they say otherwise.
"""

from __future__ import annotations

from typing import Any

DEFAULT_SERVICE_ACCOUNT = "default"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def default_service_account(spec: dict[str, Any]) -> None:
    """``serviceAccountName`` (from the deprecated ``serviceAccount`` if only that is set, else
    ``default``), mirrored into ``serviceAccount`` as the v1 conversion does."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    return any(t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "") for t in tolerations)


def default_tolerations(spec: dict[str, Any]) -> None:
    """Append the 300 s NoExecute tolerations for not-ready and unreachable nodes the pod lacks."""
    tolerations = list(spec.get("tolerations") or [])
    added = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
             for key in (NOT_READY, UNREACHABLE) if not _tolerates(tolerations, key)]
    if added:
        spec["tolerations"] = tolerations + added


def admit_pod_create(pod: dict[str, Any]) -> None:
    """What the ServiceAccount and DefaultTolerationSeconds plugins change in a new pod."""
    spec = pod.setdefault("spec", {})
    default_service_account(spec)
    default_tolerations(spec)
