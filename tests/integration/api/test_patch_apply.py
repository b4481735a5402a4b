"""Patch types, server-side apply and field validation over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.api.conftest import CM, Api, configmap

PODS = "/api/v1/namespaces/default/pods"
APPLY = "application/apply-patch+yaml"


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "a", "image": "img:1"}, {"name": "b", "image": "img:1"}]}}


async def test_json_merge_and_strategic_patches(api: Api) -> None:
    await api.ok("POST", PODS, pod("p"))
    merged = await api.ok("PATCH", f"{PODS}/p", {"metadata": {"labels": {"x": "1"}}},
                          content_type="application/merge-patch+json")
    assert merged["metadata"]["labels"] == {"x": "1"}
    smp = await api.ok("PATCH", f"{PODS}/p", {"spec": {"containers": [{"name": "b", "image": "img:2"}]}},
                       content_type="application/strategic-merge-patch+json")
    assert [(c["name"], c["image"]) for c in smp["spec"]["containers"]] == [("a", "img:1"), ("b", "img:2")]
    jp = await api.ok("PATCH", f"{PODS}/p", [{"op": "replace", "path": "/spec/containers/0/image", "value": "img:3"}],
                      content_type="application/json-patch+json")
    assert jp["spec"]["containers"][0]["image"] == "img:3"
    status, body = await api.request("PATCH", f"{PODS}/p", [{"op": "test", "path": "/metadata/name", "value": "q"}],
                                     content_type="application/json-patch+json")
    assert 400 <= status < 500 and body["kind"] == "Status"


async def test_patch_with_stale_resource_version_conflicts(api: Api) -> None:
    created = await api.ok("POST", CM, configmap("c"))
    await api.ok("PATCH", f"{CM}/c", {"data": {"a": "1"}}, content_type="application/merge-patch+json")
    status, body = await api.request("PATCH", f"{CM}/c", {"metadata": {"resourceVersion": created["metadata"][
        "resourceVersion"]}, "data": {"a": "2"}}, content_type="application/merge-patch+json")
    assert status == 409 and body["reason"] == "Conflict"


async def test_unsupported_patch_type_is_415(api: Api) -> None:
    await api.ok("POST", CM, configmap("c"))
    status, body = await api.request("PATCH", f"{CM}/c", {"data": {}}, content_type="text/plain")
    assert status == 415 and body["reason"] == "UnsupportedMediaType"


async def test_server_side_apply_creates_tracks_owners_and_conflicts(api: Api) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"owned": "mine"}}
    status, created = await api.request("PATCH", f"{CM}/ssa?fieldManager=alice", body, content_type=APPLY)
    assert status == 201 and created["data"] == {"owned": "mine"}
    managers = {(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]}
    assert managers == {("alice", "Apply")}
    other = {**body, "data": {"owned": "theirs"}}
    status, err = await api.request("PATCH", f"{CM}/ssa?fieldManager=bob", other, content_type=APPLY)
    assert status == 409 and err["reason"] == "Conflict"
    assert err["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    assert err["details"]["causes"][0]["field"] == ".data.owned"
    forced = await api.ok("PATCH", f"{CM}/ssa?fieldManager=bob&force=true", other, content_type=APPLY)
    assert forced["data"] == {"owned": "theirs"}
    # alice no longer owns the field: dropping it from her config does not remove it
    await api.ok("PATCH", f"{CM}/ssa?fieldManager=alice", {**body, "data": {}}, content_type=APPLY)
    assert (await api.ok("GET", f"{CM}/ssa"))["data"] == {"owned": "theirs"}


async def test_apply_requires_field_manager(api: Api) -> None:
    status, body = await api.request("PATCH", f"{CM}/x", configmap("x"), content_type=APPLY)
    assert status == 422
    assert "fieldManager: Required value: is required for apply patch" in body["message"]


@pytest.mark.parametrize(("mode", "expect_status"), [("Strict", 400), ("Warn", 201), ("Ignore", 201)])
async def test_field_validation_modes(api: Api, mode: str, expect_status: int) -> None:
    obj = configmap("fv")
    obj["bogus"] = 1
    async with api.session.post(f"{CM}?fieldValidation={mode}", json=obj) as resp:
        body = await resp.json()
        warning = resp.headers.get("Warning", "")
    assert resp.status == expect_status
    if mode == "Strict":
        assert 'strict decoding error: unknown field "bogus"' in body["message"]
    elif mode == "Warn":
        assert 'unknown field \\"bogus\\"' in warning and "bogus" not in body
    else:
        assert warning == "" and "bogus" not in body


def in_render_order(fields_v1: dict) -> bool:
    """FieldsV1 as the server renders it: ``"."`` first, then the members sorted, at every level."""
    names = list(fields_v1)
    members = names[1:] if names[:1] == ["."] else names
    return "." not in members and members == sorted(members) and all(map(in_render_order, fields_v1.values()))


async def test_managed_fields_across_a_pods_writes(api: Api) -> None:
    # The stored entries are edited from write to write (not rendered again): what clients read
    # must stay what each manager owns, in the server's rendering.
    created = await api.ok("POST", f"{PODS}?fieldManager=creator", pod("m"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "m"},
               "target": {"kind": "Node", "name": "n"}}
    await api.ok("POST", f"{PODS}/m/binding", binding)
    bound = await api.ok("GET", f"{PODS}/m")
    # A binding goes around the field manager, as upstream's binding storage does.
    assert bound["metadata"]["managedFields"] == created["metadata"]["managedFields"]
    running = {**bound, "status": {**bound["status"], "phase": "Running"}}
    running = await api.ok("PUT", f"{PODS}/m/status?fieldManager=kubelet", running)
    labelled = {**running, "metadata": {**running["metadata"], "labels": {"a": "1", "b": "2"}}}
    labelled = await api.ok("PUT", f"{PODS}/m?fieldManager=editor", labelled)
    await api.ok("PATCH", f"{PODS}/m?fieldManager=editor", {"metadata": {"labels": {"a": None}}},
                 content_type="application/merge-patch+json")
    await api.ok("PATCH", f"{PODS}/m?fieldManager=creator", {"spec": {"containers": [{"name": "b", "image": "img:2"}]}},
                 content_type="application/strategic-merge-patch+json")
    final = await api.ok("GET", f"{PODS}/m")
    entries = {(e["manager"], e.get("subresource", "")): e["fieldsV1"] for e in final["metadata"]["managedFields"]}
    assert entries[("kubelet", "status")] == {"f:status": {"f:phase": {}}}
    assert entries[("editor", "")] == {"f:metadata": {"f:labels": {".": {}, "f:b": {}}}}
    containers = entries[("creator", "")]["f:spec"]["f:containers"]
    assert {"f:image", "f:name"} <= set(containers['k:{"name":"b"}'])
    assert "f:phase" not in entries[("creator", "")].get("f:status", {})
    assert all(in_render_order(fields_v1) for fields_v1 in entries.values())


@pytest.mark.parametrize("patch_type", ["merge", "strategic"])
async def test_a_patch_may_reset_managed_fields(api: Api, patch_type: str) -> None:
    # Patches that leave managedFields alone carry the stored entries over; one that names them
    # writes them, as an update would.
    await api.ok("POST", f"{PODS}?fieldManager=creator", pod("r"))
    media = f"application/{patch_type}-merge-patch+json".replace("merge-merge", "merge")
    labelled = await api.ok("PATCH", f"{PODS}/r?fieldManager=labeller", {"metadata": {"labels": {"a": "1"}}},
                            content_type=media)
    assert [e["manager"] for e in labelled["metadata"]["managedFields"]] == ["creator", "labeller"]
    reset = await api.ok("PATCH", f"{PODS}/r?fieldManager=resetter",
                         {"metadata": {"labels": {"a": "2"}, "managedFields": [{}]}}, content_type=media)
    assert [(e["manager"], e["fieldsV1"]) for e in reset["metadata"]["managedFields"]] == [
        ("resetter", {"f:metadata": {"f:labels": {"f:a": {}}}})]
