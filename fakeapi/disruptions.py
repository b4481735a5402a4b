"""Node disruptions for fault injection: a node that turns NotReady, a node whose kubelet stops,
a node that goes away.

What upstream's components would write, done over HTTP through the cluster's helpers:
:func:`readiness_changes` is the pure part (the Ready condition and the taints the node
lifecycle controller keeps for it), :func:`set_node_ready` and :func:`remove_node` apply it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fakeapi.errors import Conflict, NotFound
from fakeapi.kube import KubeHelpers
from fakeapi.machinery.timestamps import format_rfc3339
from fakeapi.scheduler.rules.lifecycle import KUBELET_STOPPED

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
_CONFLICT_RETRIES = 10


def readiness_changes(node: dict[str, Any], *, ready: bool, now: str) -> tuple[list[dict[str, Any]],
                                                                             list[dict[str, Any]]]:
    """The node's conditions and taints once its kubelet reports Ready (or NotReady): the
    ``Ready`` condition replaced, and the ``not-ready`` NoSchedule/NoExecute taints added or
    removed as the node lifecycle controller does (``TaintNodesByCondition`` and taint-based
    eviction).  Other conditions and taints are kept."""
    conditions = [c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") != "Ready"]
    conditions.append({"type": "Ready", "status": "True" if ready else "False",
                       "reason": "KubeletReady" if ready else "KubeletNotReady",
                       "message": "kubelet is posting ready status" if ready
                       else "fakeapi: the node was made NotReady by fault injection",
                       "lastHeartbeatTime": now, "lastTransitionTime": now})
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != NOT_READY_TAINT]
    if not ready:
        taints += [{"key": NOT_READY_TAINT, "effect": "NoSchedule"},
                   {"key": NOT_READY_TAINT, "effect": "NoExecute", "timeAdded": now}]
    return conditions, taints


async def set_node_ready(cluster: KubeHelpers, name: str, *, ready: bool, now: str | None = None) -> None:
    """Write the node's readiness: its status, then its taints (each with a resourceVersion
    precondition, retried on conflict, as the node lifecycle controller writes them).  ``now``:
    the time to write (the control plane's clock; default the current time)."""
    nodes = (await cluster.resource("nodes")).gvr
    for _ in range(_CONFLICT_RETRIES):
        node = await cluster.api.get(nodes, None, name)
        conditions, taints = readiness_changes(node, ready=ready,
                                               now=now or format_rfc3339(datetime.now(UTC)))
        rv = node["metadata"]["resourceVersion"]
        try:
            node = await cluster.api.patch(nodes, None, name, {"metadata": {"resourceVersion": rv},
                                                               "status": {"conditions": conditions}},
                                           subresource="status")
            await cluster.api.patch(nodes, None, name, {"metadata": {"resourceVersion": node["metadata"][
                "resourceVersion"]}, "spec": {"taints": taints or None}})
            return
        except Conflict:
            continue
    raise Conflict(f'Operation cannot be fulfilled on nodes "{name}": gave up after {_CONFLICT_RETRIES} conflicts')


async def remove_node(cluster: KubeHelpers, name: str) -> None:
    """Delete the node's ResourceSlices (its DRA driver's) and the pods bound to it (at once, as
    pod GC deletes orphaned pods), then the Node."""
    await cluster.get("nodes", name)  # 404 for a node that does not exist
    for slice_ in await cluster.list("resourceslices", field_selector=f"spec.nodeName={name}"):
        await cluster.delete("resourceslices", slice_["metadata"]["name"])
    pods = (await cluster.resource("pods")).gvr
    for pod in await cluster.list("pods", all_namespaces=True, field_selector=f"spec.nodeName={name}"):
        meta = pod["metadata"]
        try:
            await cluster.api.delete(pods, meta["namespace"], meta["name"], grace_period_seconds=0)
        except NotFound:
            pass
    await cluster.delete("nodes", name)


async def set_kubelet_stopped(cluster: KubeHelpers, name: str, *, stopped_at: str | None) -> None:
    """Stop the kubelet emulation of node ``name`` at ``stopped_at`` (an RFC 3339 time of the
    control plane's clock), or restart it (None): the node's ``fakeapi.dev/kubelet-stopped``
    annotation, which the control plane's loops read."""
    nodes = (await cluster.resource("nodes")).gvr
    await cluster.api.patch(nodes, None, name, {"metadata": {"annotations": {KUBELET_STOPPED: stopped_at}}})
