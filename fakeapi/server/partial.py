"""``meta.k8s.io`` PartialObjectMetadata output: objects as their metadata alone, for metadata-only
clients (client-go's metadata informers, controller-runtime's ``OnlyMetadata`` watches), asked for
with ``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1``."""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from fakeapi.errors import NotAcceptable

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
_VERSIONS = ("v1", "v1beta1")


class Partial(NamedTuple):
    """What the Accept header asked for: ``PartialObjectMetadata`` or its list, in a version."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        return f"meta.k8s.io/{self.version}"

    def object(self, obj: dict[str, Any]) -> dict[str, Any]:
        """One object as its metadata (406 if a list was asked for)."""
        if self.kind != PARTIAL:
            raise NotAcceptable(f"you requested {PARTIAL_LIST}, but the requested object is not a list")
        return self._item(obj)

    def list(self, body: dict[str, Any]) -> dict[str, Any]:
        """A ``{Kind}List`` body as a ``PartialObjectMetadataList`` (406 if one object was asked for)."""
        if self.kind != PARTIAL_LIST:
            raise NotAcceptable(f"you requested {PARTIAL}, but the requested object is a list")
        return {"kind": PARTIAL_LIST, "apiVersion": self.api_version, "metadata": body["metadata"],
                "items": [self._item(obj) for obj in body["items"]]}

    def watch_line(self, line: bytes, first: bool = False) -> bytes:
        """A watch event with its object as metadata (bookmarks too: they carry the initial-events
        annotation); errors as they are."""
        event = orjson.loads(line)
        if event["type"] == "ERROR":
            return line
        return orjson.dumps({"type": event["type"], "object": self._item(event["object"])}) + b"\n"

    def _item(self, obj: dict[str, Any]) -> dict[str, Any]:
        return metadata_of(obj, self.version)


def metadata_of(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """``obj`` as a ``PartialObjectMetadata`` (also what a Table row carries by default)."""
    return {"kind": PARTIAL, "apiVersion": f"meta.k8s.io/{version}", "metadata": obj.get("metadata") or {}}


def requested(accept: str) -> Partial | None:
    """The PartialObjectMetadata output the first media type of ``accept`` asks for, or None."""
    if PARTIAL not in accept:  # nearly every request: no parsing
        return None
    first = accept.split(",")[0].replace(" ", "")
    params = dict(p.split("=", 1) for p in first.split(";")[1:] if "=" in p)
    kind, version = params.get("as"), params.get("v", "")
    if kind not in (PARTIAL, PARTIAL_LIST) or params.get("g") != "meta.k8s.io" or version not in _VERSIONS:
        return None
    return Partial(kind, version)
