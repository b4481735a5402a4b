"""REST verbs over raw HTTP: create/get/update/patch/delete, status, binding, dry-run, errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.integration.api.conftest import CM, Api, configmap

PODS = "/api/v1/namespaces/default/pods"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
MERGE = "application/merge-patch+json"


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


async def test_create_sets_server_fields_and_get_returns_it(api: Api) -> None:
    created = await api.ok("POST", CM, configmap("a", data={"k": "v"}))
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"].endswith("Z")
    assert meta["namespace"] == "default"
    assert (await api.ok("GET", f"{CM}/a")) == created


async def test_generate_name_uses_upstream_alphabet(api: Api) -> None:
    created = await api.ok("POST", CM, {"metadata": {"generateName": "gen-"}})
    name = created["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


META_CASES = [
    ("no-name", CM, {"metadata": {}}, "metadata.name", "FieldValueRequired",
     "metadata.name: Required value: name or generateName is required"),
    ("bad-namespace-name", "/api/v1/namespaces", {"metadata": {"name": "team.a"}}, "metadata.name",
     "FieldValueInvalid", "a lowercase RFC 1123 label"),
    ("bad-label", CM, {"metadata": {"name": "a", "labels": {"-bad": "x"}}}, "metadata.labels", "FieldValueInvalid",
     "-bad"),
]


@pytest.mark.parametrize(("path", "body", "field", "reason", "fragment"), [c[1:] for c in META_CASES],
                         ids=[c[0] for c in META_CASES])
async def test_object_meta_is_validated_once(api: Api, path: str, body: dict, field: str, reason: str,
                                             fragment: str) -> None:
    status, answer = await api.request("POST", path, body)
    assert status == 422, answer
    causes = [c for c in answer["details"]["causes"] if c["field"] == field]
    assert len(causes) == 1, answer["details"]["causes"]
    assert causes[0]["reason"] == reason and fragment in answer["message"]
    assert answer["message"].count(field) == 1


async def test_duplicate_is_409_already_exists(api: Api) -> None:
    await api.ok("POST", CLAIMS, claim("rc1"))
    status, body = await api.request("POST", CLAIMS, claim("rc1"))
    assert status == 409 and body["reason"] == "AlreadyExists"
    assert body["message"] == 'resourceclaims.resource.k8s.io "rc1" already exists'
    assert body["details"] == {"name": "rc1", "group": "resource.k8s.io", "kind": "resourceclaims"}


async def test_missing_namespace_is_404(api: Api) -> None:
    status, body = await api.request("POST", "/api/v1/namespaces/nope/configmaps", configmap("a"))
    assert status == 404 and body["message"] == 'namespaces "nope" not found'


async def test_stale_update_is_409_conflict_and_noop_keeps_version(api: Api) -> None:
    created = await api.ok("POST", CM, configmap("a", data={"k": "v"}))
    updated = await api.ok("PUT", f"{CM}/a", {**created, "data": {"k": "w"}})
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    status, body = await api.request("PUT", f"{CM}/a", {**created, "data": {"k": "x"}})
    assert status == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on configmaps "a": the object has been modified; '
                               "please apply your changes to the latest version and try again")
    same = await api.ok("PUT", f"{CM}/a", updated)
    assert same["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]


async def test_put_missing_object_is_404(api: Api) -> None:
    status, body = await api.request("PUT", f"{CM}/ghost", configmap("ghost"))
    assert status == 404 and body["message"] == 'configmaps "ghost" not found'


async def test_generation_bumps_on_spec_only_and_status_is_separate(api: Api) -> None:
    created = await api.ok("POST", CLAIMS, {**claim("rc"), "status": {"allocation": {"devices": {"results": []}}}})
    # The status sent on create is dropped; Go's encoder still writes the empty value struct.
    assert created["metadata"]["generation"] == 1 and created["status"] == {}
    labelled = await api.ok("PATCH", f"{CLAIMS}/rc", {"metadata": {"labels": {"a": "b"}}},
                            content_type="application/merge-patch+json")
    assert labelled["metadata"]["generation"] == 1
    status = {"reservedFor": [], "allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}}}
    written = await api.ok("PUT", f"{CLAIMS}/rc/status", {**labelled, "status": status,
                                                         "metadata": {**labelled["metadata"], "labels": {"x": "y"}}})
    assert written["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert written["metadata"]["labels"] == {"a": "b"}, "status writes ignore metadata changes"
    assert written["metadata"]["generation"] == 1
    main = await api.ok("PUT", f"{CLAIMS}/rc", {**written, "status": {}})
    assert main["status"] == written["status"], "main-resource writes ignore status"


async def test_binding_assigns_node_once(api: Api) -> None:
    await api.ok("POST", PODS, pod("p"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    status, body = await api.request("POST", f"{PODS}/p/binding", binding)
    assert status == 201 and body["status"] == "Success" and body["code"] == 201
    bound = await api.ok("GET", f"{PODS}/p")
    assert bound["spec"]["nodeName"] == "node-1"
    status, body = await api.request("POST", f"{PODS}/p/binding", {**binding, "target": {"name": "node-2"}})
    assert status == 409
    assert body["message"] == ('Operation cannot be fulfilled on pods/binding "p": pod p is already assigned '
                               'to node "node-1"')


async def test_writes_to_a_pod_leave_the_pods_created_alike_as_they_were(api: Api) -> None:
    # Pods created alike share their stored spec and managedFields: no write to one of them
    # (binding, status, JSON, strategic and apply patches, PUT, deletion) shows in the others.
    alike = [await api.ok("POST", PODS, pod(name)) for name in ("a", "b", "c")]
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"}, "target": {"name": "node-1"}}
    await api.ok("POST", f"{PODS}/a/binding", binding)
    await api.ok("PATCH", f"{PODS}/a/status", {"status": {"phase": "Running"}},
                 content_type="application/merge-patch+json")
    await api.ok("PATCH", f"{PODS}/a", [{"op": "replace", "path": "/spec/containers/0/image", "value": "j"}],
                 content_type="application/json-patch+json")
    await api.ok("PATCH", f"{PODS}/a", {"spec": {"containers": [{"name": "c", "image": "k"}]}},
                 content_type="application/strategic-merge-patch+json")
    await api.ok("PATCH", f"{PODS}/a?fieldManager=applier&force=true",
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"activeDeadlineSeconds": 5}},
                 content_type="application/apply-patch+yaml")
    current = await api.ok("GET", f"{PODS}/a")
    await api.ok("PUT", f"{PODS}/a", {**current, "spec": {**current["spec"], "activeDeadlineSeconds": 4}})
    await api.ok("DELETE", f"{PODS}/b")
    assert await api.ok("GET", f"{PODS}/c") == alike[2]


async def test_dry_run_persists_nothing(api: Api) -> None:
    before = await api.ok("GET", CM)
    created = await api.ok("POST", f"{CM}?dryRun=All", configmap("dry"))
    assert created["metadata"]["name"] == "dry"
    status, _ = await api.request("GET", f"{CM}/dry")
    assert status == 404
    after = await api.ok("GET", CM)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    status, body = await api.request("POST", f"{CM}?dryRun=Some", configmap("dry"))
    assert status == 422 and "dryRun" in body["message"]


async def test_finalizers_hold_deletion_until_removed(api: Api) -> None:
    await api.ok("POST", CM, {**configmap("f"), "metadata": {"name": "f", "finalizers": ["example.com/hold"]}})
    lingering = await api.ok("DELETE", f"{CM}/f")
    assert lingering["metadata"]["deletionTimestamp"]
    obj = await api.ok("GET", f"{CM}/f")
    status, body = await api.request("PUT", f"{CM}/f", {**obj, "metadata": {**obj["metadata"],
                                                                        "finalizers": ["example.com/hold", "new"]}})
    assert status == 422 and "no new finalizers" in body["message"]
    await api.ok("PUT", f"{CM}/f", {**obj, "metadata": {**obj["metadata"], "finalizers": []}})
    status, _ = await api.request("GET", f"{CM}/f")
    assert status == 404


async def test_delete_preconditions_and_status_body(api: Api) -> None:
    created = await api.ok("POST", CM, configmap("gone"))
    status, body = await api.request("DELETE", f"{CM}/gone", {"preconditions": {"uid": "other"}})
    assert status == 409 and body["message"].startswith("Precondition failed: UID in precondition: other")
    body = await api.ok("DELETE", f"{CM}/gone")
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"] == {"name": "gone", "kind": "configmaps", "uid": created["metadata"]["uid"]}


async def test_dra_kinds_return_the_deleted_object(api: Api) -> None:
    created = await api.ok("POST", CLAIMS, claim("rc"))
    body = await api.ok("DELETE", f"{CLAIMS}/rc")
    assert body["kind"] == "ResourceClaim" and body["metadata"]["uid"] == created["metadata"]["uid"]


async def test_unbound_pod_deletes_at_once_bound_pod_waits_for_kubelet(api: Api) -> None:
    await api.ok("POST", PODS, pod("free"))
    deleted = await api.ok("DELETE", f"{PODS}/free")
    assert deleted["kind"] == "Pod"
    assert (await api.request("GET", f"{PODS}/free"))[0] == 404
    await api.ok("POST", PODS, pod("bound", nodeName="node-1"))
    await api.ok("DELETE", f"{PODS}/bound")
    lingering = await api.ok("GET", f"{PODS}/bound")
    assert lingering["metadata"]["deletionGracePeriodSeconds"] == 30
    # Writes during the grace period keep it (upstream's ShouldDeleteDuringUpdate): the kubelet
    # reports the pod terminal before it confirms.
    await api.ok("PATCH", f"{PODS}/bound", {"metadata": {"labels": {"seen": "yes"}}}, content_type=MERGE)
    stopped = await api.ok("PATCH", f"{PODS}/bound/status", {"status": {"phase": "Failed"}}, content_type=MERGE)
    assert stopped["status"]["phase"] == "Failed" and stopped["metadata"]["labels"] == {"seen": "yes"}
    await api.ok("DELETE", f"{PODS}/bound?gracePeriodSeconds=0")
    assert (await api.request("GET", f"{PODS}/bound"))[0] == 404


@pytest.mark.parametrize(("query", "fragment"), [
    ("labelSelector=a%20in%20(b", "unable to parse requirement"),
    ("fieldSelector=spec.bogus%3Dx", "field label not supported: spec.bogus"),
    ("resourceVersionMatch=Exact", "resourceVersionMatch"),
], ids=["bad-label-syntax", "unknown-field-label", "match-without-rv"])
async def test_bad_list_options_are_client_errors(api: Api, query: str, fragment: str) -> None:
    status, body = await api.request("GET", f"{PODS}?{query}")
    assert status in (400, 422) and body["kind"] == "Status"
    assert fragment in body["message"]


async def test_field_selectors_on_pods(api: Api) -> None:
    await api.ok("POST", PODS, pod("on-1", nodeName="node-1"))
    await api.ok("POST", PODS, pod("on-2", nodeName="node-2"))
    await api.ok("POST", PODS, pod("nowhere"))
    listed = await api.ok("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["on-1"]
    listed = await api.ok("GET", f"{PODS}?fieldSelector=spec.nodeName%3D,status.phase%3DPending")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["nowhere"]


async def test_future_resource_version_times_out_with_504(api: Api) -> None:
    api.cluster.registry  # noqa: B018 - started
    from fakeapi.registry import reads

    reads_wait, reads.RV_WAIT_SECONDS = reads.RV_WAIT_SECONDS, 0.05
    try:
        status, body = await api.request("GET", f"{CM}?resourceVersion=999999&resourceVersionMatch=NotOlderThan")
    finally:
        reads.RV_WAIT_SECONDS = reads_wait
    assert status == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_get_waits_for_a_future_resource_version(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GET's resourceVersion is "not older than", as a list's: never an answer older than it."""
    from fakeapi.registry import reads

    created = await api.ok("POST", CM, configmap("rv-get"))
    rv = int(created["metadata"]["resourceVersion"])
    assert await api.ok("GET", f"{CM}/rv-get?resourceVersion=0") == created
    assert await api.ok("GET", f"{CM}/rv-get?resourceVersion={rv}") == created
    waiting = asyncio.create_task(api.request("GET", f"{CM}/rv-get?resourceVersion={rv + 1}"))
    updated = await api.ok("PUT", f"{CM}/rv-get", {**created, "data": {"k": "v"}})
    async with asyncio.timeout(5):
        assert await waiting == (200, updated)
    monkeypatch.setattr(reads, "RV_WAIT_SECONDS", 0.05)
    status, body = await api.request("GET", f"{PODS}/no-such-pod/status?resourceVersion={rv + 100}")
    assert (status, body["details"]["causes"][0]["reason"]) == (504, "ResourceVersionTooLarge")
    assert body["message"] == f"Too large resource version: {rv + 100}, current: {rv + 1}"


@pytest.mark.parametrize("rv", ["abc", "-1", "18446744073709551616"])
async def test_get_refuses_an_unparsable_resource_version(api: Api, rv: str) -> None:
    await api.ok("POST", CM, configmap("rv-bad"))
    status, body = await api.request("GET", f"{CM}/rv-bad?resourceVersion={rv}")
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (f'GetOptions.meta.k8s.io "" is invalid: resourceVersion: Invalid value: "{rv}": '
                               "must be a non-negative integer")


async def test_yaml_bodies_read_as_sigs_k8s_io_yaml_reads_them(api: Api) -> None:
    """Time-like scalars stay text, number keys become text, a mistagged value is a 400 (not a 500)."""
    created = await api.ok("POST", CM, b"metadata: {name: from-yaml}\ndata: {when: 2024-13-01, 8080: port}\n",
                           content_type="application/yaml")
    assert created["data"] == {"when": "2024-13-01", "8080": "port"}
    status, body = await api.request("POST", CM, b"metadata: {name: tagged}\ndata: {a: !!int abc}\n",
                                     content_type="application/yaml")
    assert (status, body["message"]) == (
        400, "error converting YAML to JSON: yaml: cannot decode !!str `abc` as a !!int")


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_body_that_does_not_decompress_is_a_400(api: Api, encoding: str) -> None:
    status, body = await api.request("POST", CM, b"not compressed", headers={"Content-Encoding": encoding})
    assert (status, body["message"]) == (400, f"the request body could not be read: Can not decode "
                                               f"content-encoding: {encoding}")
    assert (await api.request("GET", CM))[0] == 200  # the session goes on (on a new connection)


async def test_warnings_are_bounded_as_upstream_bounds_them(api: Api) -> None:
    """Thousands of unknown fields warn within 4 Ki runes of text, so any client can read the header."""
    body = {"metadata": {"name": "many-unknown"}, **{f"field{i:05d}": 1 for i in range(5000)}}
    async with api.session.post(f"{CM}?fieldValidation=Warn", json=body) as resp:
        assert resp.status == 201
        warnings = resp.headers["Warning"].split(", 299 - ")
    texts = [f'unknown field "field{i:05d}"' for i in range(5000)]
    kept = next(n for n in range(1, 5000) if sum(map(len, texts[:n])) >= 4096)
    assert len(warnings) == kept and warnings[-1] == f'"unknown field \\"field{kept - 1:05d}\\""'


async def test_unknown_paths_and_methods(api: Api) -> None:
    status, body = await api.request("GET", "/apis/nope.example.com/v1/things")
    assert status == 404 and body["message"] == "the server could not find the requested resource"
    status, body = await api.request("POST", f"{CM}/x")
    assert status == 405 and body["reason"] == "MethodNotAllowed"


@pytest.mark.parametrize(("method", "path", "code"), [
    ("GET", "/", 404), ("GET", "/nope", 404), ("DELETE", "/apis/apps/v1/nope/extra/segments/here/too", 404),
    ("POST", "/version", 405), ("PUT", "/apis", 405), ("DELETE", "/openapi/v2", 405), ("POST", "/api/v1/", 405),
    ("PATCH", "/apis/apps", 405), ("POST", "/healthz", 405),
], ids=["root", "unknown-path", "deep-unknown-resource", "post-version", "put-apis", "delete-openapi",
        "post-core-discovery", "patch-group", "post-healthz"])
async def test_paths_without_a_handler_answer_a_status(api: Api, method: str, path: str, code: int) -> None:
    status, body = await api.request(method, path)
    expected = {404: ("NotFound", "the server could not find the requested resource"),
                405: ("MethodNotAllowed", "the server does not allow this method on the requested resource")}
    assert (status, body["kind"], body["reason"], body["message"]) == (code, "Status", *expected[code])


async def test_bad_bodies_are_400_never_500(api: Api) -> None:
    status, body = await api.request("POST", CM, b"{not json")
    assert status == 400 and body["reason"] == "BadRequest"
    status, body = await api.request("POST", CM, [1, 2])
    assert status == 400
    status, body = await api.request("POST", CM, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}})
    assert status == 400 and "kind" in body["message"]
    status, body = await api.request("POST", CM, b"x" * (3 * 1024 * 1024 + 10))
    assert status == 413


@pytest.mark.parametrize(("method", "path"), [
    ("DELETE", f"{PODS}/p/status"), ("POST", f"{PODS}/p/status"), ("GET", f"{PODS}/p/binding"),
    ("PUT", f"{PODS}/p/binding"), ("PATCH", f"{PODS}/p/eviction"),
], ids=["delete-status", "post-status", "get-binding", "put-binding", "patch-eviction"])
async def test_a_subresource_answers_only_its_verbs(api: Api, method: str, path: str) -> None:
    await api.ok("POST", PODS, pod("p"))
    status, body = await api.request(method, path, {"metadata": {"name": "p"}})
    assert (status, body["reason"]) == (405, "MethodNotAllowed")
