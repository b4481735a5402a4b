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
