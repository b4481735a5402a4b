"""Custom resources as ordinary kinds: a CustomResourceDefinition becomes one
:class:`~fakeapi.registry.resource.ResourceType` per served version, served by the same generic
registry as every built-in kind (reads, writes, watch, GC, tables, discovery, OpenAPI).

What differs is data, not code paths: the strategy decodes and validates by the version's
structural schema, columns come from ``additionalPrinterColumns``, field selectors from
``selectableFields``, SSA list types from ``x-kubernetes-list-type``, and ``read_view`` rewrites
``apiVersion`` (conversion ``None``) and applies the version's defaults to stored objects.
The ``scale`` subresource is upstream's ``ScaleREST``: an ``autoscaling/v1`` Scale view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from fakeapi.errors import BadRequest, internal_error, invalid, invalid_object
from fakeapi.machinery import jsonpath
from fakeapi.machinery import structural as st
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.listtypes import ATOMIC, ListSpec, ListTypes, Path
from fakeapi.models.listtypes import list_types_for
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import AGE, NAME, Column, FieldGetter, ResourceType, Subresource, creation_timestamp
from fakeapi.registry.subresources import STATUS, scale_admitted
from fakeapi.registry.writes import WriteOptions, Writer
from fakeapi.validation.customresource import CustomKind, CustomResourceStrategy

MAX_INT32 = 2**31 - 1
# kubectl get crd: NAME, CREATED AT (upstream's tableconvertor for CRDs).
CRD_COLUMNS = (NAME, Column("Created At", creation_timestamp, format="date",
                            description="CreationTimestamp is a timestamp representing the server time when this "
                                        "object was created."))


def version_sort_key(name: str) -> tuple[int, int, int, str]:
    """Kube-aware version order: GA before beta before alpha, higher first, then others by name."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", name)
    if match is None:
        return (3, 0, 0, name)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), name)


def resource_types(crd: dict[str, Any]) -> list[ResourceType]:
    """The served versions of an accepted CRD as kinds, preferred version first."""
    spec = crd["spec"]
    names = (crd.get("status") or {}).get("acceptedNames") or spec["names"]
    versions = sorted((v for v in spec.get("versions") or [] if v.get("served")),
                      key=lambda v: version_sort_key(v["name"]))
    schemas = {v["name"]: st.parse((v.get("schema") or {}).get("openAPIV3Schema")) for v in spec["versions"]}
    return [_resource_type(crd, names, version, schemas) for version in versions]


def _resource_type(crd: dict[str, Any], names: dict[str, Any], version: dict[str, Any],
                   schemas: dict[str, st.Schema]) -> ResourceType:
    spec = crd["spec"]
    group, name = spec["group"], version["name"]
    schema = schemas[name]
    subresources_spec = version.get("subresources") or {}
    subresources: list[Subresource] = []
    if subresources_spec.get("status") is not None:
        subresources.append(STATUS)
    if isinstance(subresources_spec.get("scale"), dict):
        subresources.append(_scale_subresource(subresources_spec["scale"]))
    kind = CustomKind(crd_name=crd["metadata"]["name"], group=group, version=name, kind=names["kind"],
                      schema=schema, status=subresources_spec.get("status") is not None)
    return ResourceType(
        group=group, version=name, kind=names["kind"], plural=names["plural"],
        namespaced=spec.get("scope") == "Namespaced",
        subresources=tuple(subresources), short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        strategy=CustomResourceStrategy(kind),
        field_selectors=_field_selectors(version),
        columns=_columns(version),
        list_types=list_types(schema),
        read_view=_read_view(f"{group}/{name}", schema, len(schemas) > 1),
        strategic_merge=False,
        openapi_schema=openapi_schema(group, name, names["kind"],
                                      (version.get("schema") or {}).get("openAPIV3Schema") or {}),
    )


# --- reads ----------------------------------------------------------------------------------

def _read_view(api_version: str, schema: st.Schema, several_versions: bool
               ) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """Conversion ``None`` plus the version's defaults, on every read (upstream defaults stored
    objects when they are read, so a default added later shows without a write)."""
    if not several_versions and not schema.has_defaults:
        return None

    def view(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("apiVersion") != api_version:
            converted = deep_copy(obj)
            converted["apiVersion"] = api_version
            st.prune(converted, schema)
            obj = converted
        return st.defaulted(obj, schema)

    return view


# --- list types, columns, selectors -----------------------------------------------------------

def list_types(schema: st.Schema) -> ListTypes:
    """The SSA list types of a schema (``x-kubernetes-list-type`` / ``-list-map-keys``), with ObjectMeta's."""
    fields: dict[Path, ListSpec] = dict(list_types_for("", "").fields)
    stack: list[tuple[st.Schema, Path]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if node.type == "array" and node.list_type and node.list_type != ATOMIC:
            fields[path] = ListSpec(list_type=node.list_type, keys=node.list_keys)
        for key, sub in node.properties.items():
            if not path and key == "metadata":
                continue
            stack.append((sub, (*path, key)))
        for sub in (node.items, node.additional):
            if sub is not None:
                stack.append((sub, (*path, "*")))
    return ListTypes(fields)


_INT64 = 2**63


def _cell_getter(json_path: str, type_: str) -> Callable[[dict[str, Any]], Any]:
    try:
        steps = jsonpath.parse_path(json_path)
    except jsonpath.PathError:
        return lambda obj: None

    def get(obj: dict[str, Any]) -> Any:
        value = jsonpath.lookup(obj, steps)
        if value is jsonpath.MISSING or value is None:
            return None
        if type_ == "integer":
            if not isinstance(value, int | float) or isinstance(value, bool):
                return None
            # Go's int64(float64) on amd64: beyond int64, the most negative one
            return int(value) if -_INT64 <= value < _INT64 else -_INT64
        if type_ == "number":
            return value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if type_ == "boolean":
            return value if isinstance(value, bool) else None
        if type_ == "date":  # a time is a string; upstream's cell for anything else is empty
            return value if isinstance(value, str) else None
        if isinstance(value, dict | list):
            return orjson.dumps(value).decode()
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _columns(version: dict[str, Any]) -> tuple[Column, ...]:
    defined = version.get("additionalPrinterColumns") or []
    if not defined:
        return (NAME, AGE)
    columns = [NAME]
    for c in defined:
        json_path = c.get("jsonPath", "")
        columns.append(Column(
            c["name"], _cell_getter(json_path, c.get("type", "string")), type=c.get("type", "string"),
            format=c.get("format") or "", priority=c.get("priority") or 0, age=c.get("type") == "date",
            description=c.get("description") or f"Custom resource definition column (in JSONPath format): "
                                                 f"{json_path}"))
    return tuple(columns)


def _selectable_getter(json_path: str) -> FieldGetter:
    steps = jsonpath.parse_path(json_path)

    def get(obj: dict[str, Any]) -> str | None:
        value = jsonpath.lookup(obj, steps)
        if value is jsonpath.MISSING or value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _field_selectors(version: dict[str, Any]) -> dict[str, FieldGetter]:
    out: dict[str, FieldGetter] = {}
    for entry in version.get("selectableFields") or []:
        json_path = entry.get("jsonPath", "")
        out[json_path.lstrip(".")] = _selectable_getter(json_path)
    return out


# --- OpenAPI ----------------------------------------------------------------------------------

def model_name(group: str, version: str, kind: str) -> str:
    """Upstream's component name: the group reversed (``com.example.stable.v1.CronTab``)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _openapi_node(raw: Any, root: bool = False) -> Any:
    if not isinstance(raw, dict):
        return raw
    out = {k: v for k, v in raw.items() if k not in ("properties", "items", "additionalProperties")}
    if raw.get("x-kubernetes-int-or-string") and not raw.get("anyOf"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    props = {k: _openapi_node(v) for k, v in (raw.get("properties") or {}).items()}
    if root or raw.get("x-kubernetes-embedded-resource"):
        props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                                                                "representation of an object."}
        props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource "
                                                          "this object represents."}
        props["metadata"] = {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
                                                "ObjectMeta"}],
                             "description": "Standard object's metadata."}
    if props:
        out["properties"] = props
    if isinstance(raw.get("items"), dict):
        out["items"] = _openapi_node(raw["items"])
    if "additionalProperties" in raw:
        extra = raw["additionalProperties"]
        out["additionalProperties"] = _openapi_node(extra) if isinstance(extra, dict) else extra
    return out


def openapi_schema(group: str, version: str, kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The kind's OpenAPI v3 schema: the structural schema with TypeMeta and ObjectMeta added."""
    out = _openapi_node(raw, root=True)
    out["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
    return out


# --- scale --------------------------------------------------------------------------------------

def _scale_subresource(scale: dict[str, Any]) -> Subresource:
    spec_path = jsonpath.parse_path(scale["specReplicasPath"])
    status_path = jsonpath.parse_path(scale["statusReplicasPath"])
    selector_path = jsonpath.parse_path(scale["labelSelectorPath"]) if scale.get("labelSelectorPath") else None

    def to_scale(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        replicas = jsonpath.lookup(obj, spec_path)
        if replicas is jsonpath.MISSING:
            raise internal_error(f'the spec replicas field "{scale["specReplicasPath"]}" does not exist')
        status_replicas = jsonpath.lookup(obj, status_path)
        selector = jsonpath.lookup(obj, selector_path) if selector_path else ""
        scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                      if k in meta}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
                "spec": {"replicas": replicas},
                "status": {"replicas": 0 if status_replicas is jsonpath.MISSING else status_replicas,
                           "selector": selector if isinstance(selector, str) else ""}}

    def view(reader: Reader, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return to_scale(rt, reader.get(rt, namespace, name))

    def update(writer: Writer, rt: ResourceType, namespace: str, name: str, body: dict[str, Any],
               opts: WriteOptions) -> dict[str, Any]:
        replicas = (body.get("spec") or {}).get("replicas")
        if replicas is None:
            raise BadRequest(f'the spec replicas field "{scale["specReplicasPath"]}" cannot be empty')
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0 or replicas > MAX_INT32:
            detail = ("should be a non-negative integer" if not isinstance(replicas, int) or replicas < 0
                      else f"should be less than or equal to {MAX_INT32}")
            raise invalid_object("Scale", "autoscaling", name, [invalid("spec.replicas", replicas, detail)])
        obj = deep_copy(writer.reads.get(rt, namespace, name))
        target = obj
        for step in spec_path[:-1]:
            target = target.setdefault(step, {})
        target[spec_path[-1]] = replicas
        rv = (body.get("metadata") or {}).get("resourceVersion")
        obj["metadata"]["resourceVersion"] = rv or obj["metadata"]["resourceVersion"]
        updated, _ = writer.update(rt, namespace, name, obj, WriteOptions(
            manager=opts.manager, dry_run=opts.dry_run, field_validation="Ignore", subresource="scale",
            policies=False))  # admission judged the Scale (scale_admitted) before
        return to_scale(rt, updated)

    return Subresource("scale", ("get", "patch", "update"), kind="Scale", handler=update, view=view,
                       admitted_as=scale_admitted, api_version="autoscaling/v1")

