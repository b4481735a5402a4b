"""URL → resource coordinates, with an explicit table instead of naming conventions.

``/api/v1/...`` and ``/apis/{group}/{version}/...`` share one parser.  The only ambiguity in
Kubernetes paths is ``namespaces/{ns}/{x}``: a namespaced collection when ``x`` is a namespaced
plural of the group/version, otherwise a subresource of the namespace (``status``, ``finalize``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fakeapi.errors import NotFound
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry

NOT_FOUND_MESSAGE = "the server could not find the requested resource"


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs four times as much, per request
class Target:
    """What a request addresses."""

    resource: ResourceType
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str | None = None
    subresource: str = ""

    @property
    def is_collection(self) -> bool:
        return self.name is None


def _not_found() -> NotFound:
    return NotFound(NOT_FOUND_MESSAGE, details={})


def resolve(registry: Registry, group: str, version: str, segments: list[str]) -> Target:
    """Parse the path segments after the group/version prefix."""
    segs = [s for s in segments if s != ""] if segments and segments[-1] == "" else segments
    if not segs:
        raise _not_found()
    kinds = registry.kinds
    if segs[0] == "namespaces" and len(segs) >= 3:
        rt = kinds.resource(group, version, segs[2])
        if rt is not None and rt.namespaced:
            ns = segs[1]
            if len(segs) == 3:
                return Target(rt, ns)
            if len(segs) == 4:
                return Target(rt, ns, segs[3])
            if len(segs) == 5 and rt.subresource(segs[4]) is not None:
                return Target(rt, ns, segs[3], segs[4])
            raise _not_found()
    rt = kinds.resource(group, version, segs[0])
    if rt is None:
        raise _not_found()
    if len(segs) == 1:
        return Target(rt, None)
    if rt.namespaced:
        raise _not_found()
    if len(segs) == 2:
        return Target(rt, None, segs[1])
    if len(segs) == 3 and rt.subresource(segs[2]) is not None:
        return Target(rt, None, segs[1], segs[2])
    raise _not_found()
