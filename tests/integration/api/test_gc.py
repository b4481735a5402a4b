"""Garbage collection by ownerReferences and namespace deletion (upstream garbage_collector.go shapes)."""

from __future__ import annotations

from typing import Any

from fakeapi.fixtures.plugin import wait_for

from tests.integration.api.conftest import CM, Api, configmap


def owned(name: str, *owners: dict[str, Any], block: bool = False) -> dict[str, Any]:
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"],
             **({"blockOwnerDeletion": True} if block else {})} for o in owners]
    obj = configmap(name)
    obj["metadata"]["ownerReferences"] = refs
    return obj


async def _gone(api: Api, name: str) -> bool:
    return (await api.request("GET", f"{CM}/{name}"))[0] == 404


async def test_background_deletion_collects_dependents(api: Api) -> None:
    owner = await api.ok("POST", CM, configmap("owner"))
    await api.ok("POST", CM, owned("dep-1", owner))
    await api.ok("POST", CM, owned("dep-2", owner))
    await api.ok("DELETE", f"{CM}/owner", {"propagationPolicy": "Background"})
    await wait_for(lambda: _gone(api, "dep-1"), message="dep-1 collected")
    await wait_for(lambda: _gone(api, "dep-2"), message="dep-2 collected")


async def test_dependent_with_another_live_owner_survives(api: Api) -> None:
    a = await api.ok("POST", CM, configmap("a"))
    b = await api.ok("POST", CM, configmap("b"))
    await api.ok("POST", CM, owned("shared", a, b))
    await api.ok("DELETE", f"{CM}/a")

    async def refs() -> list[str] | None:
        obj = await api.ok("GET", f"{CM}/shared")
        names = [r["name"] for r in obj["metadata"].get("ownerReferences", [])]
        return names if names == ["b"] else None

    assert await wait_for(refs, message="dangling reference removed") == ["b"]


async def test_orphan_deletion_keeps_dependents_without_references(api: Api) -> None:
    owner = await api.ok("POST", CM, configmap("owner"))
    await api.ok("POST", CM, owned("dep", owner))
    await api.ok("DELETE", f"{CM}/owner", {"propagationPolicy": "Orphan"})
    await wait_for(lambda: _gone(api, "owner"), message="owner gone")
    dep = await api.ok("GET", f"{CM}/dep")
    assert "ownerReferences" not in dep["metadata"]


async def test_foreground_deletion_waits_for_blocking_dependents(api: Api) -> None:
    owner = await api.ok("POST", CM, configmap("owner"))
    dep = owned("dep", owner, block=True)
    dep["metadata"]["finalizers"] = ["example.com/slow"]
    await api.ok("POST", CM, dep)
    await api.ok("DELETE", f"{CM}/owner", {"propagationPolicy": "Foreground"})

    async def dep_deleting() -> bool:
        obj = await api.ok("GET", f"{CM}/dep")
        return bool(obj["metadata"].get("deletionTimestamp"))

    await wait_for(dep_deleting, message="dependent marked for deletion")
    held = await api.ok("GET", f"{CM}/owner")
    assert "foregroundDeletion" in held["metadata"]["finalizers"]
    current = await api.ok("GET", f"{CM}/dep")
    current["metadata"]["finalizers"] = []
    await api.ok("PUT", f"{CM}/dep", current)
    await wait_for(lambda: _gone(api, "owner"), message="owner released after its dependent went")


async def test_dangling_owner_reference_is_collected(api: Api) -> None:
    ghost = {"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}}
    await api.ok("POST", CM, owned("orphaned", ghost))
    await wait_for(lambda: _gone(api, "orphaned"), message="object with absent owner collected")


async def test_namespace_deletion_removes_everything_in_it(api: Api) -> None:
    await api.ok("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    path = "/api/v1/namespaces/team/configmaps"
    await api.ok("POST", path, configmap("one"))
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.ok("POST", path, held)
    await api.ok("POST", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaimtemplates", {
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}})
    ns = await api.ok("DELETE", "/api/v1/namespaces/team")
    assert ns["status"]["phase"] == "Terminating"
    status, body = await api.request("POST", path, configmap("late"))
    assert status == 403 and "being terminated" in body["message"]

    async def only_held_left() -> bool:
        names = [o["metadata"]["name"] for o in (await api.ok("GET", path))["items"]]
        return names == ["held"]

    await wait_for(only_held_left, message="namespace contents deleted except the finalized object")
    obj = await api.ok("GET", f"{path}/held")
    obj["metadata"]["finalizers"] = []
    await api.ok("PUT", f"{path}/held", obj)

    async def ns_gone() -> bool:
        return (await api.request("GET", "/api/v1/namespaces/team"))[0] == 404

    await wait_for(ns_gone, message="namespace finalized")
    listed = await api.ok("GET", "/apis/resource.k8s.io/v1/resourceclaimtemplates")
    assert listed["items"] == []
