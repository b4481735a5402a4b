"""A kind's list table, read from its model (the SSA and SMP markers of every list field).

The models carry upstream's list markers as OpenAPI extensions (checked against upstream by the
model drift test); walking a kind's model here yields the :class:`~fakeapi.machinery.listtypes.ListTypes`
that server-side apply and strategic merge patch use, so the served OpenAPI, SSA and SMP cannot
disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel

from fakeapi.machinery.listtypes import ATOMIC, ListSpec, ListTypes, Path
from fakeapi.models import MODELS
from fakeapi.models.core_v1 import ContainerPort
from fakeapi.models.core_v1_services import ServicePort
from fakeapi.models.meta import ObjectMeta
from fakeapi.models.schema import ListOf, MapOf, Node, Struct, struct_fields

# SSA map keys the API server defaults, by list item model.  Upstream applies defaults to the
# applied configuration before merging; fakeapi defaults in validation, after the merge, so the
# merge needs the default to match ``{containerPort: 80}`` with the stored ``{.., protocol: TCP}``.
# Upstream's OpenAPI does not publish the default (only the description says it), hence a table.
_KEY_DEFAULTS: dict[type[BaseModel], tuple[tuple[str, Any], ...]] = {ContainerPort: (("protocol", "TCP"),),
                                                                      ServicePort: (("protocol", "TCP"),)}

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
            if list_spec != ListSpec():  # the default (atomic, replace) needs no entry
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
