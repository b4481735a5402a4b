"""remember_valid: a pure check skipped for values it found valid before, known by their JSON."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.errors import FieldError, invalid
from fakeapi.validation.common import remember_valid
from fakeapi.validation.core import PodStrategy
from fakeapi.validation.strategy import AdmissionContext


def _counting(limit: int = 8) -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    def check(value: Any) -> list[FieldError]:
        seen.append(value)
        return [] if value.get("ok") is True else [invalid("spec.ok", value.get("ok"), "must be true")]
    return remember_valid(check, limit), seen


@pytest.mark.parametrize(("values", "checked", "failing"), [
    ([{"ok": True}, {"ok": True}], 1, 0),
    ([{"ok": False}, {"ok": False}], 2, 2),
    ([{"ok": True}, {"ok": 1}, {"ok": 1.0}], 3, 2),
    ([{"ok": True, "a": 1}, {"a": 1, "ok": True}], 2, 0),
    ([{"ok": True, "n": i} for i in range(3)] + [{"ok": True, "n": 0}], 4, 0),
], ids=["valid-remembered", "invalid-checked-every-time", "true-1-and-1.0-differ", "key-order-differs",
        "over-the-limit-starts-over"])
def test_remember_valid(values: list[dict], checked: int, failing: int) -> None:
    check, seen = _counting(limit=2)
    results = [check(value) for value in values]
    assert len(seen) == checked
    assert sum(1 for errs in results if errs) == failing


def test_a_pod_like_a_valid_one_but_invalid_is_refused() -> None:
    spec = {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}
    strategy, ctx = PodStrategy(), AdmissionContext()
    assert strategy.validate({"spec": spec}, ctx) == []
    assert strategy.validate({"spec": dict(spec)}, ctx) == []
    errors = strategy.validate({"spec": {**spec, "restartPolicy": "Sometimes"}}, ctx)
    assert [(e.type, e.field) for e in errors] == [("FieldValueNotSupported", "spec.restartPolicy")]
    errors.append(invalid("x", 1, "y"))  # a caller extending the result changes no later answer
    assert strategy.validate({"spec": spec}, ctx) == []
