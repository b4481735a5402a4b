"""Per-kind list semantics: how each list field merges under SSA and strategic merge patch.

Upstream derives both from markers on the Go types (``staging/src/k8s.io/api/*/types.go``):
``+listType=map|set|atomic`` with ``+listMapKey`` drive server-side apply (structured-merge-diff),
``+patchStrategy=merge`` with ``+patchMergeKey`` drive strategic merge patch.  The two are
independent: ``status.hostIPs`` merges by ``ip`` under SMP but is atomic under SSA, ResourceClaim
``status.devices`` is an SSA map but replaced by SMP.  The models carry the same markers as
OpenAPI extensions (checked against upstream by the model drift test); this module reads them by
walking a kind's model, so the served OpenAPI, SSA and SMP cannot disagree.  A list field without
markers is atomic for SSA and replaced by SMP, as upstream treats unmarked lists.

Field paths are tuples of JSON field names; ``*`` stands for "any list item" and, in table
entries, for "any map value" (a map keyed by user data, such as ``attributes``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from fakeapi.models import MODELS
from fakeapi.models.core_v1 import ContainerPort
from fakeapi.models.meta import ObjectMeta
from fakeapi.models.schema import ListOf, MapOf, Node, Struct, struct_fields

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


# SSA map keys the API server defaults, by list item model.  Upstream applies defaults to the
# applied configuration before merging; fakeapi defaults in validation, after the merge, so the
# merge needs the default to match ``{containerPort: 80}`` with the stored ``{.., protocol: TCP}``.
# Upstream's OpenAPI does not publish the default (only the description says it), hence a table.
_KEY_DEFAULTS: dict[type[BaseModel], tuple[tuple[str, Any], ...]] = {ContainerPort: (("protocol", "TCP"),)}

# Recursive models (composite pod-group templates) are unrolled as deep as upstream validation
# lets them nest; a deeper list would be atomic.
_MAX_NESTING = 4


def list_spec_of(markers: Mapping[str, Any], item: Node) -> ListSpec:
    """The :class:`ListSpec` a list field's OpenAPI markers describe (``item``: its item type)."""
    merges = "merge" in markers.get("x-kubernetes-patch-strategy", "").split(",")
    merge_key = markers.get("x-kubernetes-patch-merge-key") if merges else None
    defaults = _KEY_DEFAULTS.get(item.model, ()) if isinstance(item, Struct) else ()
    return ListSpec(list_type=markers.get("x-kubernetes-list-type", ATOMIC),
                    keys=tuple(markers.get("x-kubernetes-list-map-keys", ())),
                    merge_key=merge_key, merges_primitives=merges and merge_key is None,
                    key_defaults=defaults)


def _walk_struct(model: type[BaseModel], path: Path, ancestors: tuple[type[BaseModel], ...]
                 ) -> Iterator[tuple[Path, ListSpec]]:
    for name, spec in struct_fields(model).items():
        if isinstance(spec.node, ListOf):
            list_spec = list_spec_of(spec.markers, spec.node.item)
            if list_spec != _ATOMIC:  # the default needs no entry
                yield (*path, name), list_spec
        yield from _walk(spec.node, (*path, name), ancestors)


def _walk(node: Node, path: Path, ancestors: tuple[type[BaseModel], ...]) -> Iterator[tuple[Path, ListSpec]]:
    if isinstance(node, (ListOf, MapOf)):
        yield from _walk(node.item if isinstance(node, ListOf) else node.value, (*path, "*"), ancestors)
    elif isinstance(node, Struct) and ancestors.count(node.model) < _MAX_NESTING:
        yield from _walk_struct(node.model, path, (*ancestors, node.model))


@cache
def list_types_for(group: str, kind: str) -> ListTypes:
    """The list table of a kind (``group`` is ``''`` for core), read from its models.

    The tables of all served versions of the kind are merged (the v1beta1 and v1alpha1 Workload
    shapes use different field names).  Metadata lists come from ObjectMeta for every kind, with
    a model or without.
    """
    fields = dict(_walk(Struct(ObjectMeta), ("metadata",), ()))
    for (model_group, _, model_kind), model in MODELS.items():
        if (model_group, model_kind) == (group, kind):
            fields.update(_walk(Struct(model), (), ()))
    return ListTypes(fields)
