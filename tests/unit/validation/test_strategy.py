"""validate_update's ObjectMeta checks: run on every metadata change, not on metadata left as
stored (status writes), which was checked when it was stored."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import AdmissionContext, validate_update
from tests.unit.validation.builders import causes

POD = ("", "v1", "Pod")
STORED = {"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "p", "namespace": "default", "uid": "u-1", "labels": {"app": "web"},
                       "finalizers": ["example.com/keep"], "deletionTimestamp": "2026-12-01T10:00:00Z"},
          "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}}


def _with_meta(**changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(STORED)
    obj["metadata"].update(changes)
    return obj


@pytest.mark.parametrize(("new", "subresource", "expected"), [
    (_with_meta(), "status", []),
    (_with_meta(), "", []),
    (_with_meta(labels={"app": "-bad-"}), "status", [("FieldValueInvalid", "metadata.labels")]),
    (_with_meta(labels={"app": "-bad-"}), "", [("FieldValueInvalid", "metadata.labels")]),
    (_with_meta(finalizers=["example.com/keep", "example.com/new"]), "status",
     [("FieldValueForbidden", "metadata.finalizers")]),
    (_with_meta(uid="u-2"), "", [("FieldValueInvalid", "metadata.uid")]),
], ids=["status-write-unchanged-meta", "update-unchanged-meta", "status-write-bad-label", "update-bad-label",
        "new-finalizer-while-deleting", "uid-changed"])
def test_object_meta_checked_when_it_changes(new: dict[str, Any], subresource: str, expected: list) -> None:
    errors = validate_update(STRATEGIES[POD], new, copy.deepcopy(STORED), AdmissionContext(subresource=subresource),
                             namespaced=True)
    assert causes(errors) == expected


OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-rs", "controller": True}
LIVE = {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u-1", "labels": {"app": "web"},
                     "annotations": {"note": "n"}, "finalizers": ["example.com/keep"], "ownerReferences": [OWNER]},
        "spec": STORED["spec"]}


@pytest.mark.parametrize(("changes", "expected"), [
    ({"labels": {"app": "-bad-"}}, [("FieldValueInvalid", "metadata.labels")]),
    ({"annotations": {"-bad-/x": "n"}}, [("FieldValueInvalid", "metadata.annotations")]),
    ({"finalizers": ["example.com/keep", "-bad-/x"]}, [("FieldValueInvalid", "metadata.finalizers[1]")]),
    ({"ownerReferences": [OWNER, {**OWNER, "name": "rs2", "uid": "u-rs2"}]},
     [("FieldValueInvalid", "metadata.ownerReferences")]),
    ({"ownerReferences": [OWNER, {**OWNER, "uid": "", "controller": False}]},
     [("FieldValueInvalid", "metadata.ownerReferences[1].uid")]),
    ({"finalizers": ["example.com/keep", "example.com/new"], "labels": {"app": "web", "tier": "db"}}, []),
], ids=["labels", "annotations", "finalizers", "two-controllers", "owner-without-uid", "valid-changes"])
def test_each_changed_metadata_section_is_checked(changes: dict[str, Any], expected: list) -> None:
    # Sections a write leaves as stored are not walked again; every section it changes is.
    new = copy.deepcopy(LIVE)
    new["metadata"].update(copy.deepcopy(changes))
    errors = validate_update(STRATEGIES[POD], new, copy.deepcopy(LIVE), AdmissionContext(), namespaced=True)
    assert causes(errors) == expected


def test_a_section_left_as_stored_is_not_walked_again() -> None:
    # What was stored passed these checks then; a stored label no longer valid (made so here)
    # is not the business of a write that only adds a finalizer.
    stored = copy.deepcopy(LIVE)
    stored["metadata"]["labels"] = {"app": "-bad-"}
    new = copy.deepcopy(stored)
    new["metadata"]["finalizers"] = ["example.com/keep", "example.com/new"]
    assert validate_update(STRATEGIES[POD], new, stored, AdmissionContext(), namespaced=True) == []
