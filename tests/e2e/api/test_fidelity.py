"""Regression tests for fidelity bugs third-party clients found (issue 10), one section per bug."""

from __future__ import annotations

import json

import pytest
from fakeapi.fixtures.plugin import Kubectl
from kubernetes import client

from tests.e2e.api.conftest import call, configmap, to_yaml


async def get_json(kubectl: Kubectl, *args: str) -> dict:
    return json.loads((await kubectl.run("get", *args, "-o", "json", "--show-managed-fields")).stdout)


# 1. Only kubectl's own server-side apply takes over what client-side apply set.

async def test_other_managers_conflict_with_client_side_applied_fields(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("web", {"a": "1"})))

    other = await kubectl.run("apply", "--server-side", "--field-manager=deployer", "-f", "-",
                              input=to_yaml(configmap("web", {"a": "2"})), check=False)

    assert other.returncode != 0
    assert "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a" \
        in other.stderr
    # kubectl itself still takes the field over without a conflict.
    await kubectl.run("apply", "--server-side", "-f", "-", input=to_yaml(configmap("web", {"a": "2"})))
    assert (await get_json(kubectl, "configmap", "web"))["data"] == {"a": "2"}


# 2. Writes to metadata.managedFields are stored.

async def test_json_patch_and_update_of_managed_fields_are_stored(core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, "default", configmap("cm", {"a": "1"}),
                         field_manager="first")
    renamed = [{"manager": "renamed", "operation": "Apply", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]

    patched = await call(core.patch_namespaced_config_map, "cm", "default",
                         [{"op": "replace", "path": "/metadata/managedFields", "value": renamed}])

    assert [(e.manager, e.operation) for e in patched.metadata.managed_fields] == [("renamed", "Apply")]
    stored = await call(core.read_namespaced_config_map, "cm", "default")
    assert stored.metadata.managed_fields[0].manager == "renamed"
    assert stored.metadata.resource_version != created.metadata.resource_version

    stored.metadata.managed_fields[0].manager = "updated"
    updated = await call(core.replace_namespaced_config_map, "cm", "default", stored)
    assert [e.manager for e in updated.metadata.managed_fields] == ["updated"]


# 3. An apply that changes no value makes its manager a co-owner.

async def test_apply_of_equal_values_records_a_co_owner(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "--server-side", "-f", "-", input=to_yaml(configmap("shared", {"k": "v"})))
    before = await get_json(kubectl, "configmap", "shared")

    await kubectl.run("apply", "--server-side", "--field-manager=second", "-f", "-",
                      input=to_yaml(configmap("shared", {"k": "v"})))

    after = await get_json(kubectl, "configmap", "shared")
    owners = {e["manager"]: e["fieldsV1"] for e in after["metadata"]["managedFields"]}
    assert owners == {"kubectl": {"f:data": {"f:k": {}}}, "second": {"f:data": {"f:k": {}}}}
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]


# 8. Applying a kind the server does not serve ends in discovery's answer, as against a real apiserver.

@pytest.mark.parametrize("verb", [("apply",), ("apply", "--server-side"), ("create",)], ids=" ".join)
async def test_an_unserved_kind_has_no_matches(kubectl: Kubectl, verb: tuple[str, ...]) -> None:
    foo = {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}}

    out = await kubectl.run(*verb, "-f", "-", input=to_yaml(foo), check=False)

    assert out.returncode != 0
    assert 'no matches for kind "Foo" in version "example.com/v1"' in out.stderr
    assert "error validating data" not in out.stderr
