"""A pod's effective requests from its containers, as upstream's ``AggregateContainerRequests``
(``k8s.io/component-helpers/resource``): shared by the API server (pod-level defaulting) and the
scheduler (what a node must fit), each with its own reading of a container's requests.

The regular containers run together; so do the sidecars (init containers with ``restartPolicy:
Always``), which keep running from their start on.  An ordinary init container runs alone beside
the sidecars started before it.  The pod needs the most of those moments, per resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

# The resources a pod's own spec.resources may request or limit besides hugepages
# (IsSupportedPodLevelResource): what the API server defaults and checks, and the scheduler fits.
POD_LEVEL_RESOURCES = ("cpu", "memory")


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > into.get(name, 0):
            into[name] = value


def aggregate_container_requests(spec: Mapping[str, Any],
                                 requests_of: Callable[[Mapping[str, Any]], Mapping[str, int]]) -> dict[str, int]:
    """Per resource, what the pod's containers need at their busiest moment; ``requests_of`` reads
    one container's requests as numbers (in whatever unit the caller sums)."""
    total: dict[str, int] = {}
    for container in _dicts(spec.get("containers")):
        _add(total, requests_of(container))
    sidecars: dict[str, int] = {}
    busiest_init: dict[str, int] = {}
    for container in _dicts(spec.get("initContainers")):
        requests = requests_of(container)
        if container.get("restartPolicy") == "Always":
            _add(total, requests)
            _add(sidecars, requests)
            moment = sidecars
        else:
            moment = dict(requests)
            _add(moment, sidecars)
        _max(busiest_init, moment)
    _max(total, busiest_init)
    return total


def _dicts(items: Any) -> Iterable[Mapping[str, Any]]:
    return [item for item in items or () if isinstance(item, dict)]
