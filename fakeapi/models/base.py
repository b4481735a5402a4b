"""Building blocks shared by every model module: the base class, Go scalar types and list markers.

The models are plain pydantic v2 classes with camelCase aliases.  Go-specific facts that JSON
Schema cannot express (``int32`` vs ``int64``, ``Quantity``, ``Time``) ride along as
:class:`GoType` markers inside ``Annotated``; :mod:`fakeapi.models.schema` reads them to check
JSON types the way Go's decoder does and to write OpenAPI formats.
"""

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel


@dataclass(frozen=True)
class GoType:
    """The Go type behind a JSON scalar, e.g. ``int32`` or ``resource.Quantity``."""

    name: str


def _number_to_text(value: Any) -> Any:
    # Go's Quantity decoder accepts a bare JSON number and always re-encodes it as a string.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


Int32 = Annotated[int, GoType("int32")]
Int64 = Annotated[int, GoType("int64")]
Quantity = Annotated[str, BeforeValidator(_number_to_text), GoType("resource.Quantity")]
Time = Annotated[str, GoType("v1.Time")]
MicroTime = Annotated[str, GoType("v1.MicroTime")]
IntOrString = Annotated[int | str, GoType("intstr.IntOrString")]
Bytes = Annotated[str, GoType("[]byte")]
"""Go ``[]byte``: base64 text on the wire."""
RawExtension = Annotated[Any, GoType("runtime.RawExtension")]
"""Opaque JSON (driver parameters, device data): any value is kept verbatim."""


class KubeModel(BaseModel):
    """Base of every model: camelCase aliases, population by name, unknown keys ignored.

    Unknown-field policy is not pydantic's job here: :func:`fakeapi.models.schema.decode`
    reports or drops them according to ``fieldValidation``.  Subclasses that stand for an
    upstream struct we only model partially set ``extra="allow"`` so decode keeps those keys.
    """

    # defer_build: requests are decoded by fakeapi.models.schema from the fields alone, so a
    # pydantic validator and serializer per model is built only when something asks for one
    # (building all of them cost every importing process ~90 ms and its collector ~6,000 objects).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore",
                              serialize_by_alias=True, defer_build=True)


class TopLevel(KubeModel):
    """A kind served by the API; ``gvk`` is (group, version, kind)."""

    gvk: ClassVar[tuple[str, str, str]]


def opt(description: str, *, alias: str | None = None, markers: dict[str, Any] | None = None) -> Any:
    """An optional field (default None) with its OpenAPI description and list markers."""
    return Field(None, description=description, alias=alias, json_schema_extra=markers)


def req(description: str, *, alias: str | None = None, markers: dict[str, Any] | None = None) -> Any:
    """A required field: validation reports it missing, OpenAPI lists it under ``required``."""
    return Field(..., description=description, alias=alias, json_schema_extra=markers)


def list_map(*keys: str) -> dict[str, Any]:
    """``+listType=map`` with its ``+listMapKey`` keys (server-side apply)."""
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)}


def patch_merge(key: str | None = None, *, retain_keys: bool = False) -> dict[str, Any]:
    """``+patchStrategy=merge`` (strategic merge patch), keyed by ``+patchMergeKey`` ``key``.

    Without a key the list holds scalars and patches union with it.  ``retain_keys`` adds
    ``retainKeys`` (``merge,retainKeys``), as upstream marks lists of one-of structs.  Independent
    of the SSA list type, so combine the two: ``list_map("name") | patch_merge("name")``.
    """
    strategy = "merge,retainKeys" if retain_keys else "merge"
    markers = {"x-kubernetes-patch-strategy": strategy}
    if key is not None:
        markers["x-kubernetes-patch-merge-key"] = key
    return markers


ATOMIC: dict[str, Any] = {"x-kubernetes-list-type": "atomic"}
VALUE_STRUCT: dict[str, Any] = {"default": {}}
"""A Go value (non-pointer) struct field: always on the wire, ``{}`` when empty, as upstream
marks it in OpenAPI (``default: {}``); the write pipeline fills it in."""
SET: dict[str, Any] = {"x-kubernetes-list-type": "set"}
