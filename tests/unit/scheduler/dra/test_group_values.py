"""Values for a pod group's matchAttribute: candidates in first-fit order, pruning, wording."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.dra.devices import Device, build_slice
from fakeapi.scheduler.dra.group_values import (
    candidate_values,
    constraint_reason,
    device_values,
    devices_per_claim,
)

from .builders import device, exact, first_available, request, slice_, sub

BLOCK, RACK = "driver-a/block", "example.com/rack"


def _devices(*blocks: str | None) -> list[Device]:
    devs = [device(f"d{i}") if b is None else device(f"d{i}").with_attrs(block=b).with_attr(RACK, "r1")
            for i, b in enumerate(blocks)]
    return build_slice(slice_("s", *devs)).devices


@pytest.mark.parametrize(("blocks", "needed", "taken", "want"), [
    (["a", "a", "b", "b", "b", "c", "c", "c"], 3, set(), ["b", "c"]),
    (["a", "a", "b", "b", "b", "c", "c", "c"], 2, set(), ["a", "b", "c"]),
    (["a", "b", "a"], 2, set(), ["a"]),
    (["a", "a", "b", "b"], 2, {"d0"}, ["b"]),
    ([None, None, "a"], 1, set(), ["a"]),
    (["a", "a"], 3, set(), []),
], ids=["issue-example", "all-large-enough", "first-seen-order", "allocated-devices-do-not-count",
        "devices-without-the-attribute-do-not-qualify", "nothing-large-enough"])
def test_candidate_values(blocks: list[str | None], needed: int, taken: set[str], want: list[str]) -> None:
    found = candidate_values(_devices(*blocks), [BLOCK], free=lambda d: d.name not in taken, needed=needed)
    assert [values[0][1] for values in found] == want


def test_values_of_several_attributes_are_one_tuple() -> None:
    (dev,) = _devices("a")
    assert device_values(dev, [BLOCK, RACK]) == (("string", "a"), ("string", "r1"))
    assert device_values(dev, [BLOCK, "example.com/missing"]) is None


def _claim(*requests: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"devices": {"requests": list(requests)}}}


@pytest.mark.parametrize(("claim", "want"), [
    (_claim(request()), 1),
    (_claim(request(count=4), request("req-1")), 5),
    (_claim({"name": "r", "exactly": exact(mode="All")}), 1),
    (_claim(first_available("r", sub("big", count=4), sub("small", count=2))), 2),
    (_claim(), 0),
], ids=["one-device", "counts-add-up", "all-mode-counts-one", "cheapest-subrequest", "no-requests"])
def test_devices_per_claim(claim: dict[str, Any], want: int) -> None:
    assert devices_per_claim(claim) == want


def test_constraint_reason_names_each_attribute_and_held_value() -> None:
    assert constraint_reason([BLOCK, RACK], {BLOCK: ("string", "a"), RACK: None}) == (
        f'cannot allocate all claims: the pod group\'s devices must match on {BLOCK}="a", {RACK}')
