"""Moving from client-side to server-side apply: the last-applied annotation covers conflicts."""

from __future__ import annotations

import json

import pytest

from fakeapi.machinery.apply import (
    LAST_APPLIED,
    ApplyConflict,
    last_applied_fields,
    server_side_apply,
)
from fakeapi.machinery.managedfields import track_update
from fakeapi.models.listtypes import list_types_for

TYPES = list_types_for("", "ConfigMap")
NOW = "2026-11-30T00:00:00Z"


def client_side_applied(data: dict[str, str], annotated: dict[str, str] | None) -> dict:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}
    if annotated is not None:
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": annotated}
        obj["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(config)}
    return track_update(None, obj, manager="kubectl-client-side-apply", api_version="v1", types=TYPES, now=NOW)


def conflict(live: dict, data: dict[str, str]) -> ApplyConflict:
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(live, applied, manager="kubectl", force=False, api_version="v1", types=TYPES, now=NOW)
    return err.value


@pytest.mark.parametrize(("annotated", "covered"), [
    ({"a": "1"}, True),
    ({"b": "2"}, False),
    ({"a": "0"}, False),
    (None, False),
], ids=["field-in-last-applied", "field-not-in-last-applied", "value-changed-since", "no-annotation"])
def test_conflicts_are_covered_only_by_fields_the_annotation_set(annotated: dict | None, covered: bool) -> None:
    live = client_side_applied({"a": "1", "b": "2"}, annotated)
    remaining = conflict(live, {"a": "changed"}).without(last_applied_fields(live, TYPES))
    assert (remaining is None) is covered


def test_only_uncovered_conflicts_remain() -> None:
    live = client_side_applied({"a": "1", "b": "2"}, {"a": "1"})
    remaining = conflict(live, {"a": "x", "b": "y"}).without(last_applied_fields(live, TYPES))
    assert remaining is not None
    assert remaining.conflicts == [("kubectl-client-side-apply", ".data.b")]
