"""``/openapi/v3`` documents generated from the registry and the models.

kubectl downloads the per-group-version document before create/apply; it turns on server-side
field validation when a ``patch`` operation carries the kind's
``x-kubernetes-group-version-kind`` and a ``fieldValidation`` parameter.  Schemas come from the
pydantic models (``fakeapi.models.schema.openapi_components``), one source of truth.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

import orjson

from fakeapi.models import MODELS
from fakeapi.registry import crds
from fakeapi.registry.patching import PATCH_MEDIA
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _param(name: str, where: str = "query", schema_type: str = "string") -> dict[str, Any]:
    return {"name": name, "in": where, "schema": {"type": schema_type}, "uniqueItems": True,
            **({"required": True} if where == "path" else {})}


WRITE_PARAMS = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]
LIST_PARAMS = [_param(n) for n in ("labelSelector", "fieldSelector", "resourceVersion", "resourceVersionMatch",
                                   "continue")] + [_param("limit", schema_type="integer"),
                                                   _param("watch", schema_type="boolean"),
                                                   _param("allowWatchBookmarks", schema_type="boolean"),
                                                   _param("sendInitialEvents", schema_type="boolean"),
                                                   _param("timeoutSeconds", schema_type="integer")]
SUBRESOURCE_METHODS = {"get": "get", "create": "post", "update": "put", "patch": "patch"}


def schema_name(rt: ResourceType) -> str:
    if rt.openapi_schema is not None:
        return crds.model_name(rt.group, rt.version, rt.kind)
    if rt.model is not None:
        from fakeapi.models.schema import schema_name as model_schema_name

        return model_schema_name(rt.group, rt.version, rt.kind)
    group = rt.group or "core"
    return f"io.k8s.api.{group.split('.')[0]}.{rt.version}.{rt.kind}"


def _ref(rt: ResourceType) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{schema_name(rt)}"}


def _op(rt: ResourceType, action: str, params: list[dict[str, Any]], body: bool = False,
        media: list[str] | None = None, schema: dict[str, Any] | None = None, suffix: str = "") -> dict[str, Any]:
    """One operation; ``schema`` is the body's when it is not the kind's (a subresource's Binding)."""
    schema = schema or _ref(rt)
    op: dict[str, Any] = {
        "operationId": f"{action}{rt.kind}{suffix}",
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
    }
    if body:
        op["requestBody"] = {"content": {m: {"schema": schema} for m in (media or ["application/json"])},
                             "required": True}
    return op


def _subresource_paths(rt: ResourceType, item: str, item_params: list[dict[str, Any]]) -> dict[str, Any]:
    """The subresources with handlers of their own (``pods/binding``, ``namespaces/finalize``, ...),
    each verb with the body kind it takes, as upstream's documents list them."""
    paths: dict[str, Any] = {}
    for sub in rt.subresources:
        if sub.handler is None:
            continue  # status: the kind's own operations, above
        group, _, version = (sub.api_version or rt.api_version).rpartition("/")
        model = MODELS.get((group, version, sub.kind)) if sub.kind else rt.model
        if model is not None:
            from fakeapi.models.schema import schema_name as model_schema_name

            schema = {"$ref": f"#/components/schemas/{model_schema_name(group, version, sub.kind or rt.kind)}"}
        else:
            schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        suffix = sub.name[:1].upper() + sub.name[1:]
        paths[f"{item}/{sub.name}"] = {
            method: _op(rt, method, item_params + (WRITE_PARAMS if method != "get" else []), body=method != "get",
                        media=PATCH_MEDIA[:3] if method == "patch" else None, schema=schema, suffix=suffix)
            for method in (SUBRESOURCE_METHODS[verb] for verb in sub.verbs)}
    return paths


def _paths(rt: ResourceType) -> dict[str, Any]:
    base = "/" + _gv_path(rt.group, rt.version)
    ns_param = [_param("namespace", "path")] if rt.namespaced else []
    coll = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
    if rt.review is not None:  # create-only
        return {coll: {"post": _op(rt, "post", ns_param + WRITE_PARAMS, body=True)}}
    item = f"{coll}/{{name}}"
    item_params = [*ns_param, _param("name", "path")]
    paths: dict[str, Any] = {
        coll: {"get": _op(rt, "list", ns_param + LIST_PARAMS),
               "post": _op(rt, "post", ns_param + WRITE_PARAMS, body=True),
               "delete": _op(rt, "deletecollection", ns_param + LIST_PARAMS)},
        item: {"get": _op(rt, "get", item_params),
               "put": _op(rt, "put", item_params + WRITE_PARAMS, body=True),
               "patch": _op(rt, "patch", [*item_params, *WRITE_PARAMS, _param("force", schema_type="boolean")],
                            body=True, media=PATCH_MEDIA),
               "delete": _op(rt, "delete", [*item_params, _param("dryRun"), _param("gracePeriodSeconds"),
                                            _param("propagationPolicy")])},
    }
    if rt.namespaced:
        paths[f"{base}/{rt.plural}"] = {"get": _op(rt, "list", LIST_PARAMS)}
    if rt.has_status:
        paths[f"{item}/status"] = {
            "get": _op(rt, "get", item_params),
            "put": _op(rt, "put", item_params + WRITE_PARAMS, body=True),
            "patch": _op(rt, "patch", [*item_params, *WRITE_PARAMS, _param("force", schema_type="boolean")],
                         body=True, media=PATCH_MEDIA)}
    paths.update(_subresource_paths(rt, item, item_params))
    return paths


@cache
def _components() -> dict[str, Any]:
    if not MODELS:
        return {}
    from fakeapi.models.schema import openapi_components

    return openapi_components()


def _fallback_schema(rt: ResourceType) -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [{"group": rt.group, "version": rt.version, "kind": rt.kind}]}


def group_version_document(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    kinds = [k for k in registry.kinds if k.group == group and k.version == version]
    if not kinds:
        return None
    paths: dict[str, Any] = {}
    schemas = dict(_components())
    for rt in kinds:
        paths.update(_paths(rt))
        if rt.openapi_schema is not None:
            schemas[schema_name(rt)] = dict(rt.openapi_schema)
        schemas.setdefault(schema_name(rt), _fallback_schema(rt))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (fakeapi)", "version": "v1.37.0"},
            "paths": paths, "components": {"schemas": schemas}}


class OpenAPICache:
    """Documents change only with the kind table (custom resources come and go): build each once
    per table revision, hash it for the root index."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._docs: dict[str, bytes] = {}
        self._revision = registry.kinds.revision

    def document(self, group: str, version: str) -> bytes | None:
        if self._revision != self.registry.kinds.revision:
            self._docs.clear()
            self._revision = self.registry.kinds.revision
        key = _gv_path(group, version)
        if key not in self._docs:
            doc = group_version_document(self.registry, group, version)
            if doc is None:
                return None
            self._docs[key] = orjson.dumps(doc)
        return self._docs[key]

    def root(self) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        for group, versions in self.registry.kinds.group_versions().items():
            for version in versions:
                doc = self.document(group, version)
                assert doc is not None
                digest = hashlib.sha512(doc).hexdigest()[:32].upper()
                paths[_gv_path(group, version)] = {
                    "serverRelativeURL": f"/openapi/v3/{_gv_path(group, version)}?hash={digest}"}
        return {"paths": paths}


# ``/openapi/v2``: an empty Swagger 2.0 document.  Schemas are served by v3 only; kubectl falls
# back to v2 just for kinds v3 does not know, and a v2 document without them makes it skip its
# client-side validation, so applying an unserved kind ends in discovery's "no matches for kind"
# as against a real apiserver (a 404 here made kubectl fail with "error validating data").
SWAGGER_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_SWAGGER_INFO = {"title": "Kubernetes (fakeapi)", "version": "v1.37.0"}


def _proto_string(number: int, text: str) -> bytes:
    data = text.encode()
    return bytes([number << 3 | 2, len(data)]) + data


def swagger_document(accept: str) -> tuple[bytes, str]:
    """The empty v2 document as (body, content type): gnostic protobuf when asked for, else JSON."""
    if "protobuf" in accept:
        info = _proto_string(1, _SWAGGER_INFO["title"]) + _proto_string(2, _SWAGGER_INFO["version"])
        return _proto_string(1, "2.0") + bytes([2 << 3 | 2, len(info)]) + info, SWAGGER_PROTOBUF
    return orjson.dumps({"swagger": "2.0", "info": _SWAGGER_INFO, "paths": {}}), "application/json"
