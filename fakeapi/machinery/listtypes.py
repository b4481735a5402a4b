"""Per-kind list semantics: how each list field merges under SSA and strategic merge patch.

Upstream derives both from markers on the Go types (``staging/src/k8s.io/api/*/types.go``):
``+listType=map|set|atomic`` with ``+listMapKey`` drive server-side apply (structured-merge-diff),
``+patchStrategy=merge`` with ``+patchMergeKey`` drive strategic merge patch.  The two are
independent: ``status.hostIPs`` merges by ``ip`` under SMP but is atomic under SSA, ResourceClaim
``status.devices`` is an SSA map but replaced by SMP.  This table copies the markers for the kinds
fakeapi serves.  A list field missing from the table is atomic for SSA and replaced by SMP, as
upstream treats unmarked lists.

Field paths are tuples of JSON field names; ``*`` stands for "any list item" and, in table
entries, for "any map value" (a map keyed by user data, such as ``attributes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Path = tuple[str, ...]

MAP, SET, ATOMIC = "map", "set", "atomic"


@dataclass(frozen=True)
class ListSpec:
    """The markers of one list field.

    ``merge_key`` set means SMP ``patchStrategy=merge`` on a list of objects; ``merges_primitives``
    means ``patchStrategy=merge`` on a list of scalars.  ``key_defaults`` gives values for SSA map
    keys the API server defaults (a container port's ``protocol``), so that an applied item without
    the key still matches the stored, defaulted one.
    """

    list_type: str = ATOMIC
    keys: tuple[str, ...] = ()
    merge_key: str | None = None
    merges_primitives: bool = False
    key_defaults: tuple[tuple[str, Any], ...] = ()


_ATOMIC = ListSpec()


@dataclass(frozen=True)
class ListTypes:
    """Per kind: for each list field path (e.g. ``('spec','containers')``, with ``'*'`` for list
    items and map values, e.g. ``('spec','containers','*','env')``) its SSA list type (``'map'``
    with keys, ``'set'``, or ``'atomic'``) and its strategic-merge strategy (merge key / ``'merge'``
    for primitives / replace)."""

    fields: Mapping[Path, ListSpec] = field(default_factory=dict, hash=False)

    def list_spec(self, path: Path) -> ListSpec:
        """All markers of the list at ``path`` (atomic / replace when unknown)."""
        spec = self.fields.get(path)
        if spec is not None:
            return spec
        # Table entries may use '*' for map values, where the walked path has the real map key.
        for pattern, spec in self.fields.items():
            if len(pattern) == len(path) and all(p in ("*", q) for p, q in zip(pattern, path, strict=True)):
                return spec
        return _ATOMIC

    def list_type(self, path: Path) -> tuple[str, tuple[str, ...]]:
        """``('map', keys)``, ``('set', ())`` or ``('atomic', ())``."""
        spec = self.list_spec(path)
        return spec.list_type, spec.keys

    def merge_key(self, path: Path) -> str | None:
        """The SMP ``patchMergeKey`` of a list of objects, or None."""
        return self.list_spec(path).merge_key

    def merges_primitives(self, path: Path) -> bool:
        """True when SMP unions this list of scalars instead of replacing it."""
        return self.list_spec(path).merges_primitives


def _keyed(*keys: str, smp: bool = True, **defaults: Any) -> ListSpec:
    """An SSA list map; with ``smp`` also an SMP merge list keyed by the first key."""
    return ListSpec(MAP, keys, keys[0] if smp else None, key_defaults=tuple(defaults.items()))


def _set(*, smp: bool = True) -> ListSpec:
    return ListSpec(SET, merges_primitives=smp)


def _prefixed(prefix: Path, entries: Mapping[Path, ListSpec]) -> dict[Path, ListSpec]:
    return {prefix + path: spec for path, spec in entries.items()}


_METADATA = {
    ("metadata", "finalizers"): _set(),
    ("metadata", "ownerReferences"): _keyed("uid"),
}

_CONDITIONS = {("status", "conditions"): _keyed("type")}

# core/v1 Container (also initContainers and ephemeralContainers).
_CONTAINER = {
    (): _keyed("name"),
    ("*", "ports"): _keyed("containerPort", "protocol", protocol="TCP"),
    ("*", "env"): _keyed("name"),
    ("*", "volumeMounts"): _keyed("mountPath"),
    ("*", "volumeDevices"): _keyed("devicePath"),
    ("*", "resources", "claims"): _keyed("name", smp=False),
}

_POD = {
    **_prefixed(("spec", "containers"), _CONTAINER),
    **_prefixed(("spec", "initContainers"), _CONTAINER),
    **_prefixed(("spec", "ephemeralContainers"), _CONTAINER),
    ("spec", "volumes"): _keyed("name"),
    ("spec", "imagePullSecrets"): _keyed("name"),
    ("spec", "hostAliases"): _keyed("ip"),
    ("spec", "topologySpreadConstraints"): _keyed("topologyKey", "whenUnsatisfiable"),
    ("spec", "schedulingGates"): _keyed("name"),
    ("spec", "resourceClaims"): _keyed("name"),
    **_CONDITIONS,
    ("status", "podIPs"): _keyed("ip"),
    ("status", "hostIPs"): ListSpec(ATOMIC, merge_key="ip"),
    ("status", "resourceClaimStatuses"): _keyed("name"),
}

_NODE = {
    ("spec", "podCIDRs"): _set(),
    **_CONDITIONS,
    ("status", "addresses"): _keyed("type"),
}

_RESOURCE_CLAIM = {
    ("status", "reservedFor"): _keyed("uid"),
    ("status", "devices"): _keyed("driver", "device", "pool", "shareID", smp=False),
    ("status", "devices", "*", "conditions"): _keyed("type", smp=False),
}

_POD_GROUP_TEMPLATES = {
    (): _keyed("name", smp=False),
    ("*", "resourceClaims"): _keyed("name"),
}

# One table for both Workload shapes: v1beta1 podGroupTemplates and the v1alpha1 (draft) podGroups.
_WORKLOAD = {
    **_prefixed(("spec", "podGroupTemplates"), _POD_GROUP_TEMPLATES),
    ("spec", "compositePodGroupTemplates"): _keyed("name", smp=False),
    **_prefixed(("spec", "compositePodGroupTemplates", "*", "podGroupTemplates"), _POD_GROUP_TEMPLATES),
    ("spec", "compositePodGroupTemplates", "*", "compositePodGroupTemplates"): _keyed("name", smp=False),
    **_prefixed(("spec", "podGroups"), _POD_GROUP_TEMPLATES),
}

_POD_GROUP = {
    ("spec", "resourceClaims"): _keyed("name"),
    **_CONDITIONS,
    ("status", "resourceClaimStatuses"): _keyed("name"),
}

_KINDS: dict[tuple[str, str], Mapping[Path, ListSpec]] = {
    ("", "Pod"): _POD,
    ("", "Node"): _NODE,
    ("", "Namespace"): _CONDITIONS,
    ("resource.k8s.io", "ResourceClaim"): _RESOURCE_CLAIM,
    ("resource.k8s.io", "ResourceSlice"): {("spec", "skipNodeOperations"): _set(smp=False)},
    ("resource.k8s.io", "DeviceTaintRule"): _CONDITIONS,
    ("scheduling.k8s.io", "Workload"): _WORKLOAD,
    ("scheduling.k8s.io", "PodGroup"): _POD_GROUP,
}


@cache
def list_types_for(group: str, kind: str) -> ListTypes:
    """The list table of a kind (``group`` is ``''`` for core); metadata lists for every kind."""
    return ListTypes({**_METADATA, **_KINDS.get((group, kind), {})})
