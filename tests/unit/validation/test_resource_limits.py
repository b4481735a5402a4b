"""The device size limits are one: what ResourceSlice validation accepts is what the CEL cost
estimator's ``device`` bounds (``API_LIMITS``) cover, at each limit and one past it."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery import resourcelimits as limits
from fakeapi.machinery.cel import device_env
from fakeapi.validation.devices import validate_slice_spec


def slice_spec(driver: str = "gpu.example.com", domain: str = "gpu.example.com", ident: str = "model",
               value: str = "a100", attributes: int = 1) -> dict[str, Any]:
    attrs = {f"{domain}/{ident}": {"string": value}}
    attrs.update({f"extra{i}": {"int": i} for i in range(attributes - 1)})
    return {"driver": driver, "nodeName": "node-1",
            "pool": {"name": "pool", "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": attrs}]}


def subdomain(length: int) -> str:
    """A DNS subdomain of ``length`` (62 to 124) characters: two labels."""
    return "a" * 60 + "." + "a" * (length - 61)


@pytest.mark.parametrize(("changes", "field"), [
    ({"driver": subdomain(limits.DRIVER_NAME_MAX + 1)}, "spec.driver"),
    ({"domain": subdomain(limits.DOMAIN_MAX + 1)}, "spec.devices[0].attributes"),
    ({"ident": "x" * (limits.ID_MAX + 1)}, "spec.devices[0].attributes"),
    ({"value": "v" * (limits.ATTRIBUTE_VALUE_MAX + 1)}, "spec.devices[0].attributes"),
    ({"attributes": limits.ATTRIBUTES_AND_CAPACITIES_MAX + 1}, "spec.devices[0]"),
], ids=["driver", "domain", "id", "value", "attributes"])
def test_the_api_limits_bound_both_validation_and_cel_costs(changes: dict[str, Any], field: str) -> None:
    key, over = next(iter(changes.items()))
    at_limit = {key: over[:-1] if isinstance(over, str) else over - 1}
    spec = slice_spec(**at_limit)
    assert validate_slice_spec(spec) == []
    assert device_env(spec["driver"], spec["devices"][0]).within_limits
    spec = slice_spec(**changes)
    errors = validate_slice_spec(spec)
    assert errors and all(e.field.startswith(field) for e in errors), errors
    assert not device_env(spec["driver"], spec["devices"][0]).within_limits
