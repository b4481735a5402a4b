"""kubectl writes that go through create/apply: client-side and server-side apply, dry-run, validation."""

from __future__ import annotations

import json

import pytest
from fakeapi.fixtures.plugin import Kubectl

from tests.e2e.api.conftest import claim, configmap, device_class, pod, to_yaml

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


async def get_json(kubectl: Kubectl, *args: str) -> dict:
    return json.loads((await kubectl.run("get", *args, "-o", "json")).stdout)


async def test_client_side_apply_creates_then_updates_with_last_applied(kubectl: Kubectl) -> None:
    first = await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("web", {"a": "1", "gone": "x"})))
    assert first.stdout.strip() == "configmap/web created"

    second = await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("web", {"a": "2", "b": "3"})))

    assert second.stdout.strip() == "configmap/web configured"
    cm = await get_json(kubectl, "configmap", "web")
    # The three-way merge drops "gone": it was in the last applied config but not in the new one.
    assert cm["data"] == {"a": "2", "b": "3"}
    assert json.loads(cm["metadata"]["annotations"][LAST_APPLIED])["data"] == {"a": "2", "b": "3"}


async def test_client_side_apply_unchanged_is_a_noop(kubectl: Kubectl) -> None:
    manifest = to_yaml(configmap("web", {"a": "1"}))
    await kubectl.run("apply", "-f", "-", input=manifest)
    before = await get_json(kubectl, "configmap", "web")

    again = await kubectl.run("apply", "-f", "-", input=manifest)

    assert again.stdout.strip() == "configmap/web unchanged"
    assert (await get_json(kubectl, "configmap", "web"))["metadata"]["resourceVersion"] == \
        before["metadata"]["resourceVersion"]


async def test_client_side_apply_of_dra_objects(kubectl: Kubectl) -> None:
    out = await kubectl.run("apply", "-f", "-", input=to_yaml(device_class(), claim("rc1")))
    assert out.stdout.split("\n")[:2] == ["deviceclass.resource.k8s.io/gpu.example.com created",
                                           "resourceclaim.resource.k8s.io/rc1 created"]

    changed = claim("rc1")
    changed["metadata"]["labels"] = {"team": "a"}
    again = await kubectl.run("apply", "-f", "-", input=to_yaml(changed))

    assert again.stdout.strip() == "resourceclaim.resource.k8s.io/rc1 configured"
    assert (await get_json(kubectl, "resourceclaim", "rc1"))["metadata"]["labels"] == {"team": "a"}


async def test_server_side_apply_conflict_then_force(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "--server-side", "-f", "-", input=to_yaml(configmap("ssa", {"k": "one"})))
    theirs = to_yaml(configmap("ssa", {"k": "two"}))

    conflict = await kubectl.run("apply", "--server-side", "--field-manager=other", "-f", "-",
                                 input=theirs, check=False)
    assert conflict.returncode != 0
    assert 'conflict with "kubectl"' in conflict.stderr and ".data.k" in conflict.stderr
    assert (await get_json(kubectl, "configmap", "ssa"))["data"] == {"k": "one"}

    await kubectl.run("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-",
                      input=theirs)

    cm = await get_json(kubectl, "configmap", "ssa", "--show-managed-fields")
    assert cm["data"] == {"k": "two"}
    owners = {e["manager"]: e for e in cm["metadata"]["managedFields"]}
    assert owners["other"]["operation"] == "Apply"
    assert owners["other"]["fieldsV1"] == {"f:data": {"f:k": {}}}
    # The forced field moved away from kubectl, which owned nothing else.
    assert "kubectl" not in owners


async def test_server_side_apply_shared_field_same_value_coowns(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "--server-side", "-f", "-", input=to_yaml(configmap("ssa", {"k": "v"})))

    await kubectl.run("apply", "--server-side", "--field-manager=other", "-f", "-",
                      input=to_yaml(configmap("ssa", {"k": "v", "mine": "1"})))

    cm = await get_json(kubectl, "configmap", "ssa", "--show-managed-fields")
    owners = {e["manager"]: e["fieldsV1"] for e in cm["metadata"]["managedFields"]}
    assert owners == {"kubectl": {"f:data": {"f:k": {}}}, "other": {"f:data": {"f:k": {}, "f:mine": {}}}}


async def test_client_side_to_server_side_apply_upgrade(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("web", {"a": "1"})))

    # Upstream lets manager "kubectl" take over fields listed in last-applied-configuration without conflicts.
    out = await kubectl.run("apply", "--server-side", "-f", "-", input=to_yaml(configmap("web", {"a": "2"})))

    assert out.stdout.strip() == "configmap/web serverside-applied"
    cm = await get_json(kubectl, "configmap", "web", "--show-managed-fields")
    assert cm["data"] == {"a": "2"}
    assert {"manager": "kubectl", "operation": "Apply"}.items() <= next(
        e for e in cm["metadata"]["managedFields"] if e["manager"] == "kubectl").items()


async def test_create_dry_run_server_persists_nothing(kubectl: Kubectl) -> None:
    out = await kubectl.run("create", "--dry-run=server", "-o", "json", "-f", "-", input=to_yaml(pod("dry")))

    echoed = json.loads(out.stdout)
    assert echoed["metadata"]["name"] == "dry"
    # Defaults were applied, as a real create would.
    assert echoed["spec"]["restartPolicy"] == "Always"
    assert "resourceVersion" not in echoed["metadata"]
    missing = await kubectl.run("get", "pod", "dry", check=False)
    assert 'pods "dry" not found' in missing.stderr


async def test_apply_strict_validation_rejects_unknown_field(kubectl: Kubectl) -> None:
    bad = configmap("bad", {"a": "1"}) | {"bogus": 1}

    out = await kubectl.run("apply", "--validate=strict", "-f", "-", input=to_yaml(bad), check=False)

    assert out.returncode != 0
    assert "Error from server (BadRequest)" in out.stderr
    assert 'strict decoding error: unknown field "bogus"' in out.stderr


async def test_apply_strict_validation_rejects_unknown_nested_dra_field(kubectl: Kubectl) -> None:
    bad = claim("rc1")
    bad["spec"]["devices"]["requests"][0]["exactly"]["colour"] = "red"

    out = await kubectl.run("apply", "--validate=strict", "-f", "-", input=to_yaml(bad), check=False)

    assert out.returncode != 0
    assert 'unknown field "spec.devices.requests[0].exactly.colour"' in out.stderr


@pytest.mark.parametrize(("command", "created", "check"), [
    (("create", "configmap", "gen", "--from-literal=x=1"), "configmap/gen created",
     ("configmap", "gen", "{.data.x}", "1")),
    (("create", "namespace", "team"), "namespace/team created", ("namespace", "team", "{.status.phase}", "Active")),
    (("run", "p1", "--image=busybox", "--labels=app=web", "--", "sleep", "1"), "pod/p1 created",
     ("pod", "p1", "{.spec.containers[0].args}", '["sleep","1"]')),
], ids=["configmap", "namespace", "run"])
async def test_typed_generators(kubectl: Kubectl, command: tuple[str, ...], created: str,
                                check: tuple[str, str, str, str]) -> None:
    # kubectl's typed generators may send protobuf bodies for built-in kinds (findings-h H1).
    out = await kubectl.run(*command)

    assert out.stdout.strip() == created
    kind, name, path, expected = check
    assert (await kubectl.run("get", kind, name, "-o", f"jsonpath={path}")).stdout == expected


async def test_create_of_existing_object_is_already_exists(kubectl: Kubectl) -> None:
    manifest = to_yaml(configmap("dup"))
    await kubectl.run("create", "-f", "-", input=manifest)

    out = await kubectl.run("create", "-f", "-", input=manifest, check=False)

    assert out.returncode != 0
    assert 'Error from server (AlreadyExists): error when creating "STDIN": configmaps "dup" already exists' \
        in out.stderr


def class_with_selector(expression: str) -> dict:
    dc = device_class("bad")
    dc["spec"]["selectors"][0]["cel"]["expression"] = expression
    return dc


def claim_with_duplicate_requests() -> dict:
    dup = claim("dup")
    dup["spec"]["devices"]["requests"] *= 2
    return dup


@pytest.mark.parametrize(("obj", "expected"), [
    (class_with_selector("device.driver =="),
     'The DeviceClass "bad" is invalid: spec.selectors[0].cel.expression: Invalid value: "device.driver ==": '
     "compilation failed: ERROR: <input>:1:17: Syntax error:"),
    (class_with_selector("device.driver"),
     'The DeviceClass "bad" is invalid: spec.selectors[0].cel.expression: Invalid value: "device.driver": '
     "must evaluate to bool or the unknown type, not string"),
    (claim_with_duplicate_requests(),
     'The ResourceClaim "dup" is invalid: spec.devices.requests[1]: Duplicate value: "gpu"'),
], ids=["cel-syntax", "cel-not-bool", "duplicate-request"])
async def test_invalid_dra_objects_are_explained(kubectl: Kubectl, obj: dict, expected: str) -> None:
    out = await kubectl.run("apply", "-f", "-", input=to_yaml(obj), check=False)

    assert out.returncode != 0
    assert out.stderr.startswith(expected), out.stderr
