"""The official ``kubernetes`` client: CRUD on core and resource.k8s.io/v1, errors, SSA, binding, paging."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import GPU_CLASS, call, claim, configmap, device_class, event, node, pod, resource_slice


async def api_error(coro: Any) -> tuple[int, dict[str, Any]]:
    """Await a client call that must fail: (HTTP status, decoded Status body)."""
    with pytest.raises(client.ApiException) as info:
        await coro
    return info.value.status, json.loads(info.value.body)


def binding(pod_name: str, node_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod_name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


async def test_configmap_crud(core: client.CoreV1Api) -> None:
    created = await call(core.create_namespaced_config_map, "default", configmap("c1", {"a": "1"}))
    assert created.metadata.uid and created.metadata.namespace == "default"
    assert created.metadata.creation_timestamp is not None

    created.data["b"] = "2"
    replaced = await call(core.replace_namespaced_config_map, "c1", "default", created)
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)

    patched = await call(core.patch_namespaced_config_map, "c1", "default", {"data": {"a": "9"}})
    assert patched.data == {"a": "9", "b": "2"}
    assert (await call(core.read_namespaced_config_map, "c1", "default")).data == {"a": "9", "b": "2"}

    # ConfigMaps answer a delete with a Success Status (the generated client returns it as a dict).
    status = await call(core.delete_namespaced_config_map, "c1", "default")
    assert (status["status"], status["details"]["name"], status["details"]["kind"]) == ("Success", "c1", "configmaps")
    assert (await api_error(call(core.read_namespaced_config_map, "c1", "default")))[0] == 404


async def test_generate_name_and_server_dry_run(core: client.CoreV1Api) -> None:
    body = {"metadata": {"generateName": "gen-"}, "data": {"k": "v"}}

    dry = await call(core.create_namespaced_config_map, "default", body, dry_run="All")
    real = await call(core.create_namespaced_config_map, "default", body)

    assert dry.metadata.name.startswith("gen-") and real.metadata.name.startswith("gen-")
    names = [i.metadata.name for i in (await call(core.list_namespaced_config_map, "default")).items]
    assert names == [real.metadata.name]


async def test_pod_status_subresource_and_binding(core: client.CoreV1Api) -> None:
    await call(core.create_node, node("n1"))
    await call(core.create_namespaced_pod, "default", pod("p1"))

    # The main resource ignores status; the status subresource ignores spec.
    await call(core.patch_namespaced_pod, "p1", "default", {"status": {"phase": "Running"}})
    assert (await call(core.read_namespaced_pod, "p1", "default")).status.phase == "Pending"
    await call(core.patch_namespaced_pod_status, "p1", "default",
               {"status": {"phase": "Running"}, "spec": {"activeDeadlineSeconds": 5}})
    after = await call(core.read_namespaced_pod, "p1", "default")
    assert after.status.phase == "Running" and after.spec.active_deadline_seconds is None

    # The generated client cannot decode the 201 Status into V1Binding: read it raw.
    resp = await call(core.create_namespaced_pod_binding, "p1", "default", binding("p1", "n1"),
                      _preload_content=False)
    assert resp.status == 201
    assert json.loads(resp.data) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                     "status": "Success", "code": 201}
    assert (await call(core.read_namespaced_pod, "p1", "default")).spec.node_name == "n1"

    code, body = await api_error(call(core.create_namespaced_pod_binding, "p1", "default",
                                      binding("p1", "n2"), _preload_content=False))
    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on pods/binding "p1": '
                               'pod p1 is already assigned to node "n1"')


async def test_dra_crud_round_trip(resource_api: client.ResourceV1Api) -> None:
    await call(resource_api.create_device_class, device_class())
    await call(resource_api.create_resource_slice, resource_slice("n1-gpus", "n1"))
    created = await call(resource_api.create_namespaced_resource_claim, "default", claim("rc1"))

    assert created.spec.devices.requests[0].exactly.device_class_name == GPU_CLASS
    # Defaulting as upstream: allocationMode ExactCount with count 1.
    assert created.spec.devices.requests[0].exactly.allocation_mode == "ExactCount"
    assert created.spec.devices.requests[0].exactly.count == 1
    slices = await call(resource_api.list_resource_slice, field_selector="spec.nodeName=n1")
    assert [s.metadata.name for s in slices.items] == ["n1-gpus"]

    labelled = await call(resource_api.patch_namespaced_resource_claim, "rc1", "default",
                          {"metadata": {"labels": {"team": "a"}}})
    assert labelled.metadata.labels == {"team": "a"}
    claims = await call(resource_api.list_namespaced_resource_claim, "default", label_selector="team=a")
    assert [c.metadata.name for c in claims.items] == ["rc1"]

    deleted = await call(resource_api.delete_namespaced_resource_claim, "rc1", "default")
    assert deleted.metadata.name == "rc1"
    assert (await call(resource_api.list_namespaced_resource_claim, "default")).items == []


async def test_dra_claim_spec_is_immutable(resource_api: client.ResourceV1Api) -> None:
    created = await call(resource_api.create_namespaced_resource_claim, "default", claim("rc1"))
    created.spec.devices.requests[0].exactly.count = 2

    code, body = await api_error(call(resource_api.replace_namespaced_resource_claim, "rc1", "default", created))

    assert code == 422 and body["reason"] == "Invalid"
    assert body["details"]["kind"] == "ResourceClaim"
    assert body["message"].startswith('ResourceClaim.resource.k8s.io "rc1" is invalid: spec: Invalid value')
    assert "field is immutable" in body["message"]


async def test_stale_update_is_409(core: client.CoreV1Api) -> None:
    stale = await call(core.create_namespaced_config_map, "default", configmap("c1", {"v": "0"}))
    await call(core.replace_namespaced_config_map, "c1", "default", configmap("c1", {"v": "1"}))
    stale.data = {"v": "2"}

    code, body = await api_error(call(core.replace_namespaced_config_map, "c1", "default", stale))

    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on configmaps "c1": the object has been modified; '
                               "please apply your changes to the latest version and try again")
    assert body["details"] == {"name": "c1", "kind": "configmaps"}


@pytest.mark.parametrize(("read", "message", "details"), [
    (lambda core, res: call(core.read_namespaced_config_map, "nope", "default"),
     'configmaps "nope" not found', {"name": "nope", "kind": "configmaps"}),
    (lambda core, res: call(res.read_namespaced_resource_claim, "nope", "default"),
     'resourceclaims.resource.k8s.io "nope" not found',
     {"name": "nope", "group": "resource.k8s.io", "kind": "resourceclaims"}),
    (lambda core, res: call(core.read_namespaced_config_map, "c", "missing-ns"),
     'configmaps "c" not found', {"name": "c", "kind": "configmaps"}),
], ids=["core", "group", "missing-namespace"])
async def test_not_found_status_shape(core: client.CoreV1Api, resource_api: client.ResourceV1Api,
                                      read: Any, message: str, details: dict[str, str]) -> None:
    code, body = await api_error(read(core, resource_api))

    assert code == 404
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": message, "reason": "NotFound", "details": details, "code": 404}


async def test_server_side_apply_managers(core: client.CoreV1Api) -> None:
    def apply(manager: str, data: dict[str, str], **kw: Any) -> Any:
        return call(core.patch_namespaced_config_map, "ssa", "default", configmap("ssa", data),
                    field_manager=manager, _content_type="application/apply-patch+yaml", **kw)

    created = await apply("alice", {"a": "1"})
    assert created.data == {"a": "1"}
    entry = created.metadata.managed_fields[0]
    assert (entry.manager, entry.operation, entry.fields_v1) == ("alice", "Apply", {"f:data": {"f:a": {}}})

    code, body = await api_error(apply("bob", {"a": "2"}))
    assert code == 409 and body["reason"] == "Conflict"
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                          "field": ".data.a"}]

    forced = await apply("bob", {"a": "2"}, force=True)
    assert forced.data == {"a": "2"}
    assert {e.manager for e in forced.metadata.managed_fields} == {"bob"}

    # Alice re-applies without "a": she gives the field up, bob keeps it.
    await apply("alice", {"z": "1"})
    assert (await call(core.read_namespaced_config_map, "ssa", "default")).data == {"a": "2", "z": "1"}


async def test_server_side_apply_requires_field_manager(core: client.CoreV1Api) -> None:
    code, body = await api_error(call(core.patch_namespaced_config_map, "ssa", "default", configmap("ssa"),
                                      _content_type="application/apply-patch+yaml"))

    assert code == 422
    assert body["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                               "is required for apply patch")


async def test_failed_json_patch_reports_why(core: client.CoreV1Api) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("c1", {"a": "1"}))

    code, body = await api_error(call(core.patch_namespaced_config_map, "c1", "default",
                                      [{"op": "test", "path": "/data/a", "value": "2"}]))

    assert code == 422 and body["reason"] == "Invalid"
    # Upstream keeps the JSON-patch library's error ("testing value /data/a failed: ...") in the Status.
    assert "/data/a" in json.dumps(body)


@pytest.mark.parametrize(("selector", "expected"), [
    ("env in (prod,staging),tier notin (cache)", ["api", "web"]),
    ("env,!tier", ["batch"]),
    ("env!=prod", ["batch", "web"]),
], ids=["in-notin", "exists-not-exists", "not-equals"])
async def test_label_selector_set_syntax(core: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    for name, labels in [("api", {"env": "prod", "tier": "backend"}), ("web", {"env": "staging", "tier": "front"}),
                         ("cache", {"env": "prod", "tier": "cache"}), ("batch", {"env": "dev"})]:
        await call(core.create_namespaced_config_map, "default", configmap(name, labels=labels))

    listed = await call(core.list_namespaced_config_map, "default", label_selector=selector)

    assert [i.metadata.name for i in listed.items] == expected


async def test_pagination_with_limit_and_continue(core: client.CoreV1Api) -> None:
    names = [f"cm-{i:02d}" for i in range(7)]
    for name in reversed(names):
        await call(core.create_namespaced_config_map, "default", configmap(name))

    seen: list[str] = []
    versions: set[str] = set()
    remaining: list[int | None] = []
    token: str | None = None
    while True:
        page = await call(core.list_namespaced_config_map, "default", limit=3, _continue=token)
        seen += [i.metadata.name for i in page.items]
        versions.add(page.metadata.resource_version)
        remaining.append(page.metadata.remaining_item_count)
        token = page.metadata._continue
        if not token:
            break

    assert seen == names
    assert len(versions) == 1, "every page is served from the first page's snapshot"
    assert remaining == [4, 1, None]


async def test_expired_continue_token_is_410(fake_api: FakeCluster, core: client.CoreV1Api) -> None:
    for i in range(4):
        await call(core.create_namespaced_config_map, "default", configmap(f"cm-{i}"))
    first = await call(core.list_namespaced_config_map, "default", limit=2)
    later = await call(core.create_namespaced_config_map, "default", configmap("later"))
    fake_api.registry.store.log.compact(int(later.metadata.resource_version))

    code, body = await api_error(call(core.list_namespaced_config_map, "default", limit=2,
                                      _continue=first.metadata._continue))

    assert code == 410 and body["reason"] == "Expired"
    assert body["message"].startswith("The provided continue parameter is too old")
    # The inconsistent continuation token lets a client finish the list anyway.
    resumed = await call(core.list_namespaced_config_map, "default", limit=10, _continue=body["metadata"]["continue"])
    assert [i.metadata.name for i in resumed.items] == ["cm-2", "cm-3", "later"]


@pytest.mark.parametrize(("preconditions", "message"), [
    ({"uid": "wrong"}, "Precondition failed: UID in precondition: wrong, UID in object meta: "),
    ({"resourceVersion": "1"}, "Precondition failed: ResourceVersion in precondition: 1, "
                               "ResourceVersion in object meta: "),
], ids=["uid", "resource-version"])
async def test_delete_preconditions(core: client.CoreV1Api, preconditions: dict[str, str], message: str) -> None:
    await call(core.create_namespaced_config_map, "default", configmap("c1"))

    code, body = await api_error(call(core.delete_namespaced_config_map, "c1", "default",
                                      body={"preconditions": preconditions}))

    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"].startswith(message)
    assert body["details"] == {"name": "c1", "kind": "configmaps"}
    assert (await call(core.read_namespaced_config_map, "c1", "default")).metadata.name == "c1"


async def test_delete_collection_by_label(core: client.CoreV1Api) -> None:
    for name, labels in [("a", {"batch": "1"}), ("b", {"batch": "1"}), ("keep", {"batch": "2"})]:
        await call(core.create_namespaced_config_map, "default", configmap(name, labels=labels))

    await call(core.delete_collection_namespaced_config_map, "default", label_selector="batch=1")

    assert [i.metadata.name for i in (await call(core.list_namespaced_config_map, "default")).items] == ["keep"]


async def test_pod_field_selectors(core: client.CoreV1Api) -> None:
    await call(core.create_node, node("n1"))
    for name in ("bound", "unbound"):
        await call(core.create_namespaced_pod, "default", pod(name))
    await call(core.create_namespaced_pod_binding, "bound", "default", binding("bound", "n1"), _preload_content=False)

    async def names(selector: str) -> list[str]:
        listed = await call(core.list_pod_for_all_namespaces, field_selector=selector)
        return [p.metadata.name for p in listed.items]

    assert await names("spec.nodeName=n1") == ["bound"]
    assert await names("spec.nodeName=") == ["unbound"]
    assert await names("status.phase=Pending,metadata.name!=bound") == ["unbound"]
    code, body = await api_error(names("spec.bogus=1"))
    assert code == 400 and body["message"] == "field label not supported: spec.bogus"


async def test_server_side_apply_removes_fields_the_manager_drops(resource_api: client.ResourceV1Api) -> None:
    def apply(labels: dict[str, str]) -> Any:
        body = claim("rc1")
        body["metadata"]["labels"] = labels
        return call(resource_api.patch_namespaced_resource_claim, "rc1", "default", body, field_manager="ci",
                    _content_type="application/apply-patch+yaml")

    created = await apply({"a": "1", "b": "2"})
    assert created.metadata.labels == {"a": "1", "b": "2"}
    # Another writer (merge patch, operation Update) owns "c": the applier's drop leaves it alone.
    await call(resource_api.patch_namespaced_resource_claim, "rc1", "default", {"metadata": {"labels": {"c": "3"}}},
               field_manager="other", _content_type="application/merge-patch+json")

    reapplied = await apply({"a": "1"})

    assert reapplied.metadata.labels == {"a": "1", "c": "3"}
    managers = {e.manager: e.operation for e in reapplied.metadata.managed_fields}
    assert managers == {"ci": "Apply", "other": "Update"}


@pytest.mark.parametrize(("selector", "expected"), [
    ("involvedObject.kind=Pod,involvedObject.name=p1", ["e1"]),
    ("involvedObject.apiVersion=v1,involvedObject.name=p1", ["e1"]),
    ("reason=Scheduled", ["e2"]),
    ("type=Warning", ["e1"]),
    ("source=kubelet", ["e2"]),
], ids=["kind-name", "api-version", "reason", "type", "source"])
async def test_event_field_selectors(core: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    p1, p2 = [pod(name) for name in ("p1", "p2")]
    for about in (p1, p2):
        about["metadata"]["uid"] = (await call(core.create_namespaced_pod, "default", about)).metadata.uid
    await call(core.create_namespaced_event, "default", event("e1", p1))
    await call(core.create_namespaced_event, "default", event("e2", p2, reason="Scheduled", type_="Normal",
                                                              component="kubelet"))

    listed = await call(core.list_namespaced_event, "default", field_selector=selector)

    assert [e.metadata.name for e in listed.items] == expected
