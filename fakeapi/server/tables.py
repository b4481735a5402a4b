"""``meta.k8s.io/v1`` Table output for ``kubectl get`` (server-side printing)."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.durations import human_age
from fakeapi.registry.resource import AGE, NAME, Column, ResourceType
from fakeapi.server.partial import metadata_of

TABLE_MEDIA = "as=Table"


def wants_table(accept: str) -> bool:
    """True if the first acceptable media type asks for a Table (kubectl get sends it first)."""
    if "Table" not in accept:  # nearly every request: no parsing
        return False
    first = accept.split(",")[0].replace(" ", "")
    return TABLE_MEDIA in first and "g=meta.k8s.io" in first


def accepts_only_table(accept: str) -> bool:
    if "Table" not in accept:  # nearly every request (every watch asks): no parsing
        return False
    kinds = [part.replace(" ", "") for part in accept.split(",") if part.strip()]
    return bool(kinds) and all(TABLE_MEDIA in k for k in kinds)


def columns(rt: ResourceType) -> tuple[Column, ...]:
    """The kind's full column list: a kind that lists a name column lists them all (events)."""
    if any(c.format == "name" for c in rt.columns):
        return rt.columns
    return (NAME, *rt.columns) if AGE in rt.columns else (NAME, *rt.columns, AGE)


def column_definitions(rt: ResourceType) -> list[dict[str, Any]]:
    return [{"name": c.name, "type": c.type, "format": c.format, "priority": c.priority,
             "description": c.description} for c in columns(rt)]


def row(rt: ResourceType, obj: dict[str, Any], include_object: str) -> dict[str, Any]:
    cells = [human_age(c.getter(obj)) if c.age else _cell(c.getter(obj)) for c in columns(rt)]
    out: dict[str, Any] = {"cells": cells}
    if rt.row_conditions is not None and (conditions := rt.row_conditions(obj)):
        out["conditions"] = conditions
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = metadata_of(obj)
    return out


def _cell(value: Any) -> Any:
    return "<none>" if value is None or value == "" else value


def to_table(rt: ResourceType, objects: list[dict[str, Any]], list_meta: dict[str, Any],
             include_object: str = "Metadata", with_columns: bool = True) -> dict[str, Any]:
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "columnDefinitions": column_definitions(rt) if with_columns else [],
            "rows": [row(rt, o, include_object) for o in objects]}
