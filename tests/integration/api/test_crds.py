"""CustomResourceDefinitions over HTTP: the CRD lifecycle and custom objects through the generic
registry (the scenarios of upstream's apiextensions integration tests)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from fakeapi.fixtures import wait_for

from tests.crds import CRDS, CRONTABS, GROUP, crontab, crontab_crd, established
from tests.integration.api.conftest import Api

CRD_URL = f"{CRDS}/crontabs.{GROUP}"


async def create_crd(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    await api.ok("POST", CRDS, body)
    url = f"{CRDS}/{body['metadata']['name']}"

    async def current() -> dict[str, Any]:
        return (await api.request("GET", url))[1]

    crd: dict[str, Any] = {}

    async def ready() -> bool:
        crd.update(await current())
        return established(crd)

    await wait_for(ready, message=f"{url} to be Established")
    return crd


@pytest_asyncio.fixture
async def crontabs(api: Api) -> AsyncIterator[dict[str, Any]]:
    yield await create_crd(api, crontab_crd())


async def test_crd_gets_conditions_and_joins_discovery_and_openapi(api: Api, crontabs: dict[str, Any]) -> None:
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crontabs["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"), "Established": ("True", "InitialNamesAccepted")}
    assert crontabs["status"]["acceptedNames"]["plural"] == "crontabs"
    assert crontabs["status"]["storedVersions"] == ["v1"]
    groups = await api.ok("GET", "/apis")
    assert {"groupVersion": f"{GROUP}/v1", "version": "v1"} in next(
        g for g in groups["groups"] if g["name"] == GROUP)["versions"]
    resources = {r["name"]: r for r in (await api.ok("GET", f"/apis/{GROUP}/v1"))["resources"]}
    assert resources["crontabs"]["shortNames"] == ["ct"] and resources["crontabs"]["categories"] == ["all"]
    assert resources["crontabs/status"]["kind"] == "CronTab"
    assert (resources["crontabs/scale"]["group"], resources["crontabs/scale"]["kind"]) == ("autoscaling", "Scale")
    root = await api.ok("GET", "/openapi/v3")
    assert f"apis/{GROUP}/v1" in root["paths"]
    doc = await api.ok("GET", f"/openapi/v3/apis/{GROUP}/v1")
    schema = doc["components"]["schemas"]["com.example.stable.v1.CronTab"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": GROUP, "version": "v1", "kind": "CronTab"}]
    assert schema["properties"]["spec"]["properties"]["cronSpec"]["description"] == "When to run."


async def test_custom_objects_crud_with_pruning_defaulting_and_validation(api: Api, crontabs: dict[str, Any]) -> None:
    body = crontab("a", replicas=2, unknown=1)
    body["metadata"]["bogus"] = 1
    status, created = await api.request("POST", CRONTABS + "?fieldValidation=Strict", body)
    assert status == 400
    assert created["message"] == ('CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: '
                                  'unknown field "metadata.bogus", unknown field "spec.unknown"')
    created = await api.ok("POST", CRONTABS, body)  # Warn (the default): pruned
    assert created["spec"] == {"cronSpec": "* * * * */5", "replicas": 2, "image": "busybox"}
    assert "bogus" not in created["metadata"] and created["metadata"]["generation"] == 1
    status, err = await api.request("POST", CRONTABS, crontab("b", replicas="2", cronSpec="nope"))
    assert status == 422
    assert err["message"] == (
        'CronTab.stable.example.com "b" is invalid: [spec.cronSpec: Invalid value: "nope": spec.cronSpec in body '
        "should match '^[0-9*/ ,-]+$', spec.replicas: Invalid value: \"string\": spec.replicas in body must be of "
        'type integer: "string", <nil>: Invalid value: null: some validation rules were not checked because the '
        "object was invalid; correct the existing errors to complete validation]")
    status, err = await api.request("POST", CRONTABS, crontab("b", replicas=7))
    assert (status, err["message"]) == (422, 'CronTab.stable.example.com "b" is invalid: spec: Invalid value: '
                                             '"object": busybox runs at most 5 replicas')
    # Transition rule: color is immutable once set.
    await api.ok("POST", CRONTABS, crontab("c", color="red"))
    status, err = await api.request("PATCH", f"{CRONTABS}/c", {"spec": {"color": "blue"}},
                                    content_type="application/merge-patch+json")
    assert (status, err["details"]["causes"][0]["message"]) == (422, 'Invalid value: "object": color is immutable')
    assert (await api.ok("PATCH", f"{CRONTABS}/c", {"spec": {"replicas": 1}},
                         content_type="application/merge-patch+json"))["metadata"]["generation"] == 2
    merge = "application/merge-patch+json"
    status, err = await api.request("PATCH", f"{CRONTABS}/c?fieldValidation=Strict",
                                    {"spec": {"bogus": 1}}, content_type=merge)
    assert (status, err["message"]) == (400, 'CronTab in version "v1" cannot be handled as a CronTab: strict '
                                             'decoding error: unknown field "spec.bogus"')
    patched = await api.ok("PATCH", f"{CRONTABS}/c", {"spec": {"bogus": 1, "replicas": None}}, content_type=merge)
    assert "bogus" not in patched["spec"] and "replicas" not in patched["spec"]  # pruned, and null deletes
    status, err = await api.request("PATCH", f"{CRONTABS}/c", {"spec": {"replicas": 1}},
                                    content_type="application/strategic-merge-patch+json")
    assert status == 415
    listed = await api.ok("GET", CRONTABS)
    assert (listed["kind"], [o["metadata"]["name"] for o in listed["items"]]) == ("CronTabList", ["a", "c"])
    await api.ok("DELETE", f"{CRONTABS}/a")
    assert (await api.request("GET", f"{CRONTABS}/a"))[0] == 404


async def test_selectors_pagination_and_tables(api: Api, crontabs: dict[str, Any]) -> None:
    for i, color in enumerate(["red", "blue", "red"]):
        body = crontab(f"t{i}", color=color, replicas=i)
        body["metadata"]["labels"] = {"i": str(i)}
        await api.ok("POST", CRONTABS, body)
    names = lambda body: [o["metadata"]["name"] for o in body["items"]]  # noqa: E731
    assert names(await api.ok("GET", f"{CRONTABS}?fieldSelector=spec.color%3Dred")) == ["t0", "t2"]
    assert names(await api.ok("GET", f"{CRONTABS}?labelSelector=i%20in%20(1,2)")) == ["t1", "t2"]
    assert names(await api.ok("GET", f"{CRONTABS}?fieldSelector=metadata.name%3Dt1")) == ["t1"]
    status, err = await api.request("GET", f"{CRONTABS}?fieldSelector=spec.image%3Dx")
    assert (status, err["message"]) == (400, "field label not supported: spec.image")
    page = await api.ok("GET", f"{CRONTABS}?limit=2")
    rest = await api.ok("GET", f"{CRONTABS}?limit=2&continue={page['metadata']['continue']}")
    assert names(page) + names(rest) == ["t0", "t1", "t2"]
    table = await api.ok("GET", CRONTABS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas", "Age"]
    assert table["rows"][1]["cells"][:3] == ["t1", "* * * * */5", 1]


async def test_watch_resumes_and_sees_custom_objects(api: Api, crontabs: dict[str, Any]) -> None:
    first = await api.ok("POST", CRONTABS, crontab("w1"))
    async with api.watch(f"{CRONTABS}?watch=1&resourceVersion={first['metadata']['resourceVersion']}") as watch:
        await api.ok("POST", CRONTABS, crontab("w2"))
        await api.ok("DELETE", f"{CRONTABS}/w1")
        events = await watch.events(2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w2"), ("DELETED", "w1")]
    assert events[0]["object"]["kind"] == "CronTab"


async def test_status_and_scale_subresources(api: Api, crontabs: dict[str, Any]) -> None:
    body = crontab("s", replicas=1)
    body["status"] = {"replicas": 9}
    created = await api.ok("POST", CRONTABS, body)
    assert "status" not in created  # create drops status when the status subresource is on
    status_body = {**created, "status": {"replicas": 1, "selector": "app=s"}, "spec": {"cronSpec": "1"}}
    updated = await api.ok("PUT", f"{CRONTABS}/s/status", status_body)
    assert updated["status"] == {"replicas": 1, "selector": "app=s"}
    assert updated["spec"]["cronSpec"] == "* * * * */5" and updated["metadata"]["generation"] == 1
    scale = await api.ok("GET", f"{CRONTABS}/s/scale")
    assert (scale["spec"], scale["status"]) == ({"replicas": 1}, {"replicas": 1, "selector": "app=s"})
    scale["spec"]["replicas"] = 4
    assert (await api.ok("PUT", f"{CRONTABS}/s/scale", scale))["spec"] == {"replicas": 4}
    patched = await api.ok("PATCH", f"{CRONTABS}/s/scale", {"spec": {"replicas": 3}},
                           content_type="application/merge-patch+json")
    assert patched["spec"]["replicas"] == 3
    obj = await api.ok("GET", f"{CRONTABS}/s")
    assert obj["spec"]["replicas"] == 3 and obj["metadata"]["generation"] == 3
    status, err = await api.request("PUT", f"{CRONTABS}/s/scale", {**scale, "spec": {"replicas": -1}})
    assert status == 422 and "spec.replicas: Invalid value: -1" in err["message"]
    # Upstream answers a scale whose object lacks the replicas field with NewInternalError.
    await api.ok("POST", CRONTABS, crontab("no-replicas"))
    status, err = await api.request("GET", f"{CRONTABS}/no-replicas/scale")
    cause = 'the spec replicas field ".spec.replicas" does not exist'
    assert (status, err["reason"], err["message"], err["details"]) == (
        500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]})


async def test_server_side_apply_uses_the_schema_list_types(api: Api, crontabs: dict[str, Any]) -> None:
    apply = "application/apply-patch+yaml"
    first = crontab("ssa", ports=[{"name": "http", "port": 80}])
    await api.ok("PATCH", f"{CRONTABS}/ssa?fieldManager=a", first, content_type=apply)
    second = crontab("ssa", ports=[{"name": "https", "port": 443}])
    del second["spec"]["cronSpec"]
    merged = await api.ok("PATCH", f"{CRONTABS}/ssa?fieldManager=b", second, content_type=apply)
    assert merged["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    conflicting = crontab("ssa", ports=[{"name": "http", "port": 8080}])
    del conflicting["spec"]["cronSpec"]
    status, err = await api.request("PATCH", f"{CRONTABS}/ssa?fieldManager=b", conflicting, content_type=apply)
    assert status == 409 and len(err["details"]["causes"]) == 1
    status, err = await api.request("PATCH", f"{CRONTABS}/ssa?fieldManager=b",
                                    crontab("ssa", tags=["a", "a"]), content_type=apply)
    assert status == 422 and "duplicate entries for key [=\"a\"]" in err["message"]


async def test_dry_run_finalizers_and_garbage_collection_both_ways(api: Api, crontabs: dict[str, Any]) -> None:
    assert "resourceVersion" not in (await api.ok("POST", CRONTABS + "?dryRun=All", crontab("dry")))["metadata"]
    assert (await api.request("GET", f"{CRONTABS}/dry"))[0] == 404
    owner = await api.ok("POST", CRONTABS, crontab("owner"))
    ref = {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "name": "owner", "uid": owner["metadata"]["uid"]}
    await api.ok("POST", "/api/v1/namespaces/default/configmaps",
                 {"metadata": {"name": "owned", "ownerReferences": [ref]}})
    cm = await api.ok("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "cm-owner"}})
    child = crontab("child")
    child["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm-owner",
                                             "uid": cm["metadata"]["uid"]}]
    child["metadata"]["finalizers"] = ["example.com/hold"]
    await api.ok("POST", CRONTABS, child)
    await api.ok("DELETE", f"{CRONTABS}/owner")
    await api.ok("DELETE", "/api/v1/namespaces/default/configmaps/cm-owner")

    async def collected() -> bool:
        cm_gone = (await api.request("GET", "/api/v1/namespaces/default/configmaps/owned"))[0] == 404
        held = (await api.request("GET", f"{CRONTABS}/child"))[1]
        return cm_gone and bool(held.get("metadata", {}).get("deletionTimestamp"))

    await wait_for(collected, message="dependents of a custom and of a built-in owner to be collected")
    await api.ok("PATCH", f"{CRONTABS}/child", {"metadata": {"finalizers": None}},
                 content_type="application/merge-patch+json")
    assert (await api.request("GET", f"{CRONTABS}/child"))[0] == 404


async def test_deleting_a_crd_deletes_its_objects_then_leaves_discovery(api: Api, crontabs: dict[str, Any]) -> None:
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.ok("POST", CRONTABS, held)
    await api.ok("POST", CRONTABS, crontab("plain"))
    deleting = await api.ok("DELETE", CRD_URL)
    assert "customresourcecleanup.apiextensions.k8s.io" in deleting["metadata"]["finalizers"]

    async def terminating() -> bool:
        crd = (await api.request("GET", CRD_URL))[1]
        return any(c["type"] == "Terminating" and c["reason"] == "InstanceDeletionInProgress"
                   for c in crd["status"]["conditions"])

    await wait_for(terminating, message="the CRD to start deleting instances")
    assert (await api.request("GET", f"{CRONTABS}/plain"))[0] == 404
    status, err = await api.request("POST", CRONTABS, crontab("late"))
    assert (status, err["message"]) == (403, "create not allowed while custom resource definition is terminating")
    await api.ok("PATCH", f"{CRONTABS}/held", {"metadata": {"finalizers": None}},
                 content_type="application/merge-patch+json")

    async def gone() -> bool:
        return (await api.request("GET", CRD_URL))[0] == 404 and (
            await api.request("GET", f"/apis/{GROUP}/v1"))[0] == 404

    await wait_for(gone, message="the CRD and its group version to be gone")
    groups = await api.ok("GET", "/apis")
    assert GROUP not in {g["name"] for g in groups["groups"]}


async def test_name_conflicts_are_refused_until_the_holder_goes(api: Api, crontabs: dict[str, Any]) -> None:
    rival = crontab_crd(plural="crontabz", kind="CronTab")
    rival["spec"]["names"].update(shortNames=[], singular="crontabz")
    await api.ok("POST", CRDS, rival)
    url = f"{CRDS}/crontabz.{GROUP}"

    async def condition(reason: str) -> bool:
        crd = (await api.request("GET", url))[1]
        return any(c["type"] == "NamesAccepted" and c["reason"] == reason
                   for c in (crd.get("status") or {}).get("conditions") or [])

    await wait_for(lambda: condition("KindConflict"), message="the rival's kind to conflict")
    crd = (await api.request("GET", url))[1]
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]} == {"NamesAccepted": "False",
                                                                             "Established": "False"}
    assert (await api.request("GET", f"/apis/{GROUP}/v1/namespaces/default/crontabz"))[0] == 404
    await api.ok("DELETE", CRD_URL)
    await wait_for(lambda: condition("NoConflicts"), message="the rival to be accepted once the holder is gone")


async def test_versions_share_storage_and_read_with_their_defaults(api: Api) -> None:
    base = crontab_crd()["spec"]["versions"][0]
    beta = copy.deepcopy(base)
    beta.update(name="v1beta1", storage=False)
    beta["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["image"]["default"] = "alpine"
    crd = await create_crd(api, crontab_crd(versions=[beta, base]))
    assert crd["status"]["storedVersions"] == ["v1"]
    versions = (await api.ok("GET", f"/apis/{GROUP}"))["versions"]
    assert [v["version"] for v in versions] == ["v1", "v1beta1"]
    await api.ok("POST", CRONTABS, crontab("mv"))
    as_beta = await api.ok("GET", f"/apis/{GROUP}/v1beta1/namespaces/default/crontabs/mv")
    assert as_beta["apiVersion"] == f"{GROUP}/v1beta1" and as_beta["spec"]["image"] == "busybox"
    # A default added later to the served schema shows on reads without a write.
    updated = copy.deepcopy(crd)
    props = updated["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    props["color"]["default"] = "red"
    await api.ok("PUT", CRD_URL, updated)

    async def defaulted() -> bool:
        return (await api.ok("GET", f"{CRONTABS}/mv"))["spec"].get("color") == "red"

    await wait_for(defaulted, message="the new default to show on read")
    status, err = await api.request("POST", f"/apis/{GROUP}/v1beta1/namespaces/default/crontabs", crontab("x"))
    assert (status, err["message"]) == (400, f"the API version in the data ({GROUP}/v1) does not match the expected "
                                             f"API version ({GROUP}/v1beta1)")


async def test_non_structural_crds_are_refused(api: Api) -> None:
    body = crontab_crd(schema={"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}})
    status, err = await api.request("POST", CRDS, body)
    assert status == 422
    assert err["message"] == (f'CustomResourceDefinition.apiextensions.k8s.io "crontabs.{GROUP}" is invalid: '
                              "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be "
                              "empty for specified object fields")


async def test_embedded_resources_cluster_scope_and_field_validation_ignore(api: Api) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"template": {
        "type": "object", "x-kubernetes-embedded-resource": True,
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}}}
    crd = crontab_crd(scope="Cluster", plural="wrappers", kind="Wrapper", schema=schema)
    crd["spec"]["versions"][0].update(selectableFields=[], subresources={})
    await create_crd(api, crd)
    url = f"/apis/{GROUP}/v1/wrappers"
    template = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t", "junk": 1},
                "spec": {"size": 1, "extra": 2}}
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Wrapper", "metadata": {"name": "w"},
            "spec": {"template": template, "other": 1}}
    status, created = await api.request("POST", url + "?fieldValidation=Ignore", body)
    assert status == 201 and "namespace" not in created["metadata"]
    assert created["spec"] == {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"},
                                            "spec": {"size": 1}}}
    bad = {**body, "metadata": {"name": "bad"}, "spec": {"template": {"kind": "%", "metadata": {"name": ".."}}}}
    status, err = await api.request("POST", url, bad)
    assert status == 422
    assert [c["field"] for c in err["details"]["causes"]] == ["spec.template.apiVersion", "spec.template.kind",
                                                              "spec.template.metadata.name"]
    assert (await api.request("GET", f"/apis/{GROUP}/v1/namespaces/default/wrappers/w"))[0] == 404


async def test_watch_list_streams_custom_objects_then_the_initial_events_end_bookmark(
        api: Api, crontabs: dict[str, Any]) -> None:
    await api.ok("POST", CRONTABS, crontab("wl"))
    query = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    async with api.watch(f"{CRONTABS}?{query}") as watch:
        events = await watch.events(2, skip_bookmarks=False)
    assert [(e["type"], e["object"]["kind"]) for e in events] == [("ADDED", "CronTab"), ("BOOKMARK", "CronTab")]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_deleting_a_namespace_deletes_its_custom_objects(api: Api, crontabs: dict[str, Any]) -> None:
    await api.ok("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    await api.ok("POST", f"/apis/{GROUP}/v1/namespaces/team/crontabs", crontab("in-team"))
    await api.ok("DELETE", "/api/v1/namespaces/team")

    async def gone() -> bool:
        return (await api.request("GET", "/api/v1/namespaces/team"))[0] == 404

    await wait_for(gone, message="the namespace and its custom objects to be deleted")
    assert (await api.ok("GET", f"/apis/{GROUP}/v1/crontabs"))["items"] == []


async def test_a_merge_patch_empties_metadata_maps_away_but_a_custom_list_stays(
        api: Api, crontabs: dict[str, Any]) -> None:
    body = crontab("emptied", tags=["a"])
    body["metadata"]["labels"] = {"l": "v"}
    await api.ok("POST", CRONTABS, body)
    patched = await api.ok("PATCH", f"{CRONTABS}/emptied", {"metadata": {"labels": {"l": None}}, "spec": {"tags": []}},
                           content_type="application/merge-patch+json")
    # Metadata is ObjectMeta, re-encoded with omitempty; a custom object's own fields are kept as
    # written, as upstream stores them unstructured.
    assert "labels" not in patched["metadata"]
    assert patched["spec"]["tags"] == []


async def test_printer_columns_show_what_their_type_allows(api: Api) -> None:
    """A date column shows only strings and an integer column truncates numbers as Go's int64()
    does, whatever the (unvalidated) values are: a Table is never a 500."""
    crd = crontab_crd(plural="gadgets", kind="Gadget", schema={
        "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})
    crd["spec"]["names"]["shortNames"] = []
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "When", "type": "date", "jsonPath": ".spec.when"},
        {"name": "Count", "type": "integer", "jsonPath": ".spec.count"}]
    del crd["spec"]["versions"][0]["subresources"], crd["spec"]["versions"][0]["selectableFields"]
    await create_crd(api, crd)
    gadgets = f"/apis/{GROUP}/v1/namespaces/default/gadgets"
    for name, spec in (("numbers", {"when": 5, "count": 1e30}), ("fraction", {"when": [1], "count": 2.7})):
        await api.ok("POST", gadgets, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": name},
                                       "spec": spec})
    table = await api.ok("GET", gadgets, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [row["cells"][:3] for row in table["rows"]] == [["fraction", "<unknown>", 2],
                                                           ["numbers", "<unknown>", -(2**63)]]
