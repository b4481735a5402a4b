"""Decoding the Kubernetes protobuf request envelope for the few kinds kubectl sends that way.

kubectl's typed generators (``kubectl create configmap``, ``kubectl create namespace``) always
send ``application/vnd.kubernetes.protobuf`` and client-go does not fall back to JSON on 415.
This decodes the ``k8s\\x00`` envelope (``runtime.Unknown``) and the generated messages of
those kinds into the JSON shape; anything else is an honest 415.  Field numbers follow
``k8s.io/api/core/v1/generated.proto`` and ``apimachinery/pkg/apis/meta/v1/generated.proto``.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from fakeapi.errors import BadRequest, UnsupportedMediaType
from fakeapi.machinery.timestamps import format_rfc3339

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# A schema maps field number -> (json name, type); a type is "string", "bytes" (base64 in JSON),
# "blob" (raw bytes), "int", "bool", "time", a nested schema (dict), ("map", value type) or ("repeated", item type).
Schema = dict[int, tuple[str, Any]]

TYPE_META: Schema = {1: ("apiVersion", "string"), 2: ("kind", "string")}
UNKNOWN: Schema = {1: ("typeMeta", TYPE_META), 2: ("raw", "blob"), 3: ("contentEncoding", "string"),
                   4: ("contentType", "string")}
OWNER_REFERENCE: Schema = {1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"),
                           5: ("apiVersion", "string"), 6: ("controller", "bool"),
                           7: ("blockOwnerDeletion", "bool")}
OBJECT_META: Schema = {
    1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"), 5: ("uid", "string"),
    6: ("resourceVersion", "string"), 7: ("generation", "int"), 8: ("creationTimestamp", "time"),
    11: ("labels", ("map", "string")), 12: ("annotations", ("map", "string")),
    13: ("ownerReferences", ("repeated", OWNER_REFERENCE)), 14: ("finalizers", ("repeated", "string")),
}
KINDS: dict[tuple[str, str], Schema] = {
    ("v1", "ConfigMap"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "string")),
                          3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool")},
    ("v1", "Namespace"): {1: ("metadata", OBJECT_META), 2: ("spec", {1: ("finalizers", ("repeated", "string"))}),
                          3: ("status", {1: ("phase", "string")})},
}
# kubectl drain deletes pods with a protobuf DeleteOptions body, whatever group version it names.
DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", "int"), 2: ("preconditions", {1: ("uid", "string"), 2: ("resourceVersion", "string")}),
    3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "string"), 5: ("dryRun", ("repeated", "string")),
}
TIME: Schema = {1: ("seconds", "int"), 2: ("nanos", "int")}


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def varint(self) -> int:
        shift = result = 0
        while True:
            if self.pos >= len(self.data):
                raise BadRequest("protobuf: truncated varint")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def fields(self) -> list[tuple[int, int, Any]]:
        out = []
        while self.pos < len(self.data):
            key = self.varint()
            number, wire = key >> 3, key & 7
            if wire == 0:
                out.append((number, wire, self.varint()))
            elif wire == 2:
                size = self.varint()
                if self.pos + size > len(self.data):
                    raise BadRequest("protobuf: truncated field")
                out.append((number, wire, self.data[self.pos:self.pos + size]))
                self.pos += size
            elif wire in (1, 5):
                self.pos += 8 if wire == 1 else 4
            else:
                raise BadRequest(f"protobuf: unsupported wire type {wire}")
        return out


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode()
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "blob":
        return bytes(value)
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value - (1 << 64) if value >= 1 << 63 else value  # two's complement int64
    if kind == "time":
        seconds = _message(TIME, value).get("seconds", 0)
        return format_rfc3339(datetime.fromtimestamp(seconds, UTC))
    return _message(kind, value)


def _message(schema: Schema, data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _wire, value in _Reader(data).fields():
        if number not in schema:
            continue  # fields the server would ignore or set itself
        name, kind = schema[number]
        if isinstance(kind, tuple) and kind[0] == "map":
            entry = _message({1: ("key", "string"), 2: ("value", kind[1])}, value)
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "" if kind[1] == "string" else None)
        elif isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(name, []).append(_scalar(kind[1], value))
        else:
            out[name] = _scalar(kind, value)
    return out


def decode_protobuf(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf request body; 415 for kinds we cannot decode."""
    if not body.startswith(MAGIC):
        raise BadRequest("protobuf: missing the k8s envelope")
    try:
        envelope = _message(UNKNOWN, body[len(MAGIC):])
        type_meta = envelope.get("typeMeta") or {}
        key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
        schema = DELETE_OPTIONS if key[1] == "DeleteOptions" else KINDS.get(key)
        if schema is None:
            raise UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"application/json, application/yaml (protobuf only for "
                f"{', '.join(k for _, k in KINDS)}, DeleteOptions)")
        return {"apiVersion": key[0], "kind": key[1], **_message(schema, envelope.get("raw", b""))}
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise BadRequest(f"protobuf: cannot decode the request body: {exc}") from exc
