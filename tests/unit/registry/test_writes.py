"""The generic write pipeline without HTTP: create/update/patch/delete, preconditions,
finalizers and deletion, and the kind hooks it consults instead of naming kinds."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from fakeapi.errors import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, StatusError
from fakeapi.registry import meta as m
from fakeapi.registry.subresources import bind_pod
from fakeapi.registry.writes import WriteOptions
from tests.unit.json_trees import containers
from tests.unit.registry.builders import OPTS, configmap, events_of, kind, new_registry, pod


def test_create_assigns_server_fields_and_one_global_version() -> None:
    registry = new_registry()
    cms, nodes = kind(registry, "configmaps"), kind(registry, "nodes")
    first, _ = registry.writes.create(cms, "default", configmap("a", uid="mine", resourceVersion=""), OPTS)
    second, _ = registry.writes.create(nodes, "", {"metadata": {"name": "n"}}, OPTS)
    assert first["apiVersion"] == "v1" and first["kind"] == "ConfigMap"
    assert first["metadata"]["uid"] != "mine" and first["metadata"]["namespace"] == "default"
    assert int(second["metadata"]["resourceVersion"]) == int(first["metadata"]["resourceVersion"]) + 1
    assert registry.reads.get(cms, "default", "a") == first


def test_generate_name_retries_taken_names(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("gen-bbbbb"), OPTS)
    candidates = iter(["gen-bbbbb", "gen-ccccc"])
    monkeypatch.setattr(m, "generate_name", lambda prefix: next(candidates))
    created, _ = registry.writes.create(cms, "default", {"metadata": {"generateName": "gen-"}}, OPTS)
    assert created["metadata"]["name"] == "gen-ccccc"


def test_generate_name_gives_up_after_upstreams_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("gen-bbbbb"), OPTS)
    monkeypatch.setattr(m, "generate_name", lambda prefix: "gen-bbbbb")
    with pytest.raises(AlreadyExists):
        registry.writes.create(cms, "default", {"metadata": {"generateName": "gen-"}}, OPTS)


def test_generated_names_use_upstreams_alphabet() -> None:
    name = m.generate_name("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    assert set(name[58:]) <= set(m.NAME_ALPHABET)


CREATE_ERRORS = [
    ("no-name", {"metadata": {}}, Invalid, "metadata.name: Required value: name or generateName is required"),
    ("resource-version", configmap("a", resourceVersion="3"), BadRequest, "resourceVersion should not be set"),
    ("other-namespace", configmap("a", namespace="other"), BadRequest, "does not match the namespace"),
    ("metadata-not-object", {"metadata": "a"}, BadRequest, "cannot unmarshal"),
]


@pytest.mark.parametrize(("body", "error", "message"), [c[1:] for c in CREATE_ERRORS],
                         ids=[c[0] for c in CREATE_ERRORS])
def test_create_errors(body: dict[str, Any], error: type[StatusError], message: str) -> None:
    registry = new_registry()
    with pytest.raises(error) as err:
        registry.writes.create(kind(registry, "configmaps"), "default", body, OPTS)
    assert message in err.value.message
    if error is Invalid:  # one ObjectMeta validator: each cause once
        causes = [c["field"] for c in err.value.details["causes"]]
        assert len(causes) == len(set(causes))


def test_create_in_a_missing_or_terminating_namespace() -> None:
    registry = new_registry(namespaces=("default", "doomed"))
    cms = kind(registry, "configmaps")
    with pytest.raises(StatusError) as err:
        registry.writes.create(cms, "absent", configmap("a"), OPTS)
    assert err.value.code == 404
    registry.writes.delete(registry.kinds.namespaces, "", "doomed", {})
    with pytest.raises(Forbidden, match="because it is being terminated"):
        registry.writes.create(cms, "doomed", configmap("a"), OPTS)


def test_dry_run_changes_nothing() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    seen = events_of(registry)
    created, _ = registry.writes.create(cms, "default", configmap("a"), WriteOptions(dry_run=True))
    assert "resourceVersion" not in created["metadata"] and created["metadata"]["uid"]
    assert registry.reads.find(cms, "default", "a") is None and seen == []


STATUS_ON_CREATE = [
    ("pod-status-reset-then-defaulted", "pods", pod("p") | {"status": {"phase": "Running"}}, {"phase": "Pending"}),
    ("node-keeps-status", "nodes", {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}},
     {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"}}),
]


@pytest.mark.parametrize(("plural", "body", "expected"), [c[1:] for c in STATUS_ON_CREATE],
                         ids=[c[0] for c in STATUS_ON_CREATE])
def test_status_on_create_follows_the_strategy(plural: str, body: dict, expected: dict) -> None:
    registry = new_registry()
    created, _ = registry.writes.create(kind(registry, plural), "default", body, OPTS)
    assert {k: created["status"][k] for k in expected} == expected


def test_noop_update_keeps_the_version_and_emits_nothing() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    created, _ = registry.writes.create(cms, "default", configmap("a"), OPTS)
    seen = events_of(registry)
    same, _ = registry.writes.update(cms, "default", "a", created, OPTS)
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"] and seen == []
    changed, _ = registry.writes.update(cms, "default", "a", created | {"data": {"k": "w"}}, OPTS)
    assert seen == [("MODIFIED", "a")] and changed["metadata"]["resourceVersion"] != same["metadata"]["resourceVersion"]


UPDATE_PRECONDITIONS = [
    ("stale-resource-version", {"resourceVersion": "1"}, Conflict, "the object has been modified"),
    ("other-uid", {"uid": "someone-else"}, Conflict, "Precondition failed: UID in precondition"),
    ("other-name", {"name": "b"}, BadRequest, "does not match the name on the URL"),
]


@pytest.mark.parametrize(("meta", "error", "message"), [c[1:] for c in UPDATE_PRECONDITIONS],
                         ids=[c[0] for c in UPDATE_PRECONDITIONS])
def test_update_preconditions(meta: dict, error: type[StatusError], message: str) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    created, _ = registry.writes.create(cms, "default", configmap("a"), OPTS)
    body = created | {"metadata": created["metadata"] | meta, "data": {"k": "w"}}
    with pytest.raises(error, match=message):
        registry.writes.update(cms, "default", "a", body, OPTS)


def test_status_and_main_resource_writes_are_split() -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    created, _ = registry.writes.create(pods, "default", pod("p"), OPTS)
    ran = created | {"status": {"phase": "Running"}, "metadata": created["metadata"] | {"labels": {"a": "b"}}}
    after_status, _ = registry.writes.update(pods, "default", "p", ran, WriteOptions(subresource="status"))
    assert after_status["status"]["phase"] == "Running" and "labels" not in after_status["metadata"]
    back = after_status | {"status": {"phase": "Pending"},
                           "metadata": after_status["metadata"] | {"labels": {"a": "b"}}}
    after_main, _ = registry.writes.update(pods, "default", "p", back, OPTS)
    assert after_main["status"]["phase"] == "Running" and after_main["metadata"]["labels"] == {"a": "b"}


def test_generation_bumps_on_spec_changes_only() -> None:
    registry = new_registry()
    classes = kind(registry, "deviceclasses", "resource.k8s.io")
    created, _ = registry.writes.create(classes, "", {"metadata": {"name": "gpu"}, "spec": {}}, OPTS)
    relabeled = registry.writes.patch(classes, "", "gpu", "merge", {"metadata": {"labels": {"a": "b"}}}, OPTS)[0]
    selectors = {"spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    respecced = registry.writes.patch(classes, "", "gpu", "merge", selectors, OPTS)[0]
    assert [o["metadata"]["generation"] for o in (created, relabeled, respecced)] == [1, 1, 2]


PATCHES = [
    ("merge", "merge", {"data": {"k": None, "n": "1"}}, {"n": "1"}),
    ("json", "json", [{"op": "add", "path": "/data/n", "value": "1"}], {"k": "v", "n": "1"}),
    ("strategic", "strategic", {"data": {"n": "1"}}, {"k": "v", "n": "1"}),
]


@pytest.mark.parametrize(("patch_type", "patch", "data"), [c[1:] for c in PATCHES], ids=[c[0] for c in PATCHES])
def test_patch_types(patch_type: str, patch: Any, data: dict) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a"), OPTS)
    patched, created, _ = registry.writes.patch(cms, "default", "a", patch_type, patch, OPTS)
    assert patched["data"] == data and created is False


def test_status_merge_patch_never_edits_or_shares_the_stored_object() -> None:
    # A status merge patch merges without copying the stored pod first, and a status write keeps
    # the stored spec uncopied: the write must still end with metadata and status of its own,
    # the revision it replaced unchanged, and a refused patch must leave the stored one as it was.
    registry = new_registry()
    pods = kind(registry, "pods")
    registry.writes.create(pods, "default", pod("p") | {"metadata": {
        "name": "p", "labels": {"app": "a"}, "annotations": {"note": "n"}, "finalizers": ["example.com/f"]}}, OPTS)
    status = WriteOptions(manager="kubelet", subresource="status")
    first, _, _ = registry.writes.patch(pods, "default", "p", "merge", {"status": {
        "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}, status)
    snapshot = copy.deepcopy(first)
    for bad in ({"status": {"resourceClaimStatuses": [{"name": "nope"}]}},
                {"metadata": {"resourceVersion": "1"}, "status": {"podIP": "x"}}):
        with pytest.raises((Invalid, Conflict)):
            registry.writes.patch(pods, "default", "p", "merge", bad, status)
        assert registry.reads.get(pods, "default", "p") is first and first == snapshot
    second, _, _ = registry.writes.patch(pods, "default", "p", "merge", {
        "metadata": {"resourceVersion": first["metadata"]["resourceVersion"]},
        "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}}, status)
    assert first == snapshot
    assert second["status"]["conditions"] == first["status"]["conditions"] and second["status"]["podIP"] == "10.0.0.1"
    # Only what a status write never edits is shared: the spec and the values in metadata (labels,
    # owner references, managedFields entries), not metadata itself or the status.
    assert second["spec"] is first["spec"]
    assert second["metadata"]["labels"] is first["metadata"]["labels"]
    never_edited = containers(first["spec"]) + [c for v in first["metadata"].values() for c in containers(v)]
    old_ids = {id(c) for c in containers(first)} - {id(c) for c in never_edited}
    assert [c for c in containers(second) if id(c) in old_ids] == []
    # The main resource's merge patch is still checked whole: the spec it touches is validated.
    with pytest.raises(Invalid, match=r"spec\.containers"):
        registry.writes.patch(pods, "default", "p", "merge", {"spec": {"containers": [{"name": "c", "image": ""}]}},
                              OPTS)
    assert registry.reads.get(pods, "default", "p") is second


def test_main_resource_write_defaults_status_without_editing_the_stored_pod() -> None:
    # A status PUT may drop qosClass; the next spec write defaults it again on its own copy.
    registry = new_registry()
    pods = kind(registry, "pods")
    created, _ = registry.writes.create(pods, "default", pod("p"), OPTS)
    bare, _ = registry.writes.update(pods, "default", "p", {**created, "status": {"phase": "Pending"}},
                                     WriteOptions(subresource="status"))
    snapshot = copy.deepcopy(bare)
    relabeled, _ = registry.writes.update(pods, "default", "p", {
        **bare, "metadata": {**bare["metadata"], "labels": {"a": "b"}}}, OPTS)
    assert bare == snapshot and "qosClass" not in bare["status"]
    assert relabeled["status"]["qosClass"] == "BestEffort"


def test_failed_json_patch_test_is_422_and_bad_document_400() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a"), OPTS)
    with pytest.raises(Invalid):
        registry.writes.patch(cms, "default", "a", "json", [{"op": "test", "path": "/data/k", "value": "x"}], OPTS)
    with pytest.raises(BadRequest):
        registry.writes.patch(cms, "default", "a", "json", [{"op": "nope"}], OPTS)


def test_apply_creates_then_updates_and_owns_fields() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    applier = WriteOptions(manager="applier")
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
    created, was_created, _ = registry.writes.patch(cms, "default", "a", "apply", config, applier)
    assert was_created and created["metadata"]["managedFields"][0]["manager"] == "applier"
    registry.writes.patch(cms, "default", "a", "merge", {"data": {"k": "other"}}, WriteOptions(manager="editor"))
    with pytest.raises(Conflict) as err:
        registry.writes.patch(cms, "default", "a", "apply", config, applier)
    assert err.value.details["causes"][0]["field"] == ".data.k"
    forced = registry.writes.patch(cms, "default", "a", "apply", config, WriteOptions(manager="applier", force=True))[0]
    assert forced["data"] == {"k": "v"}


def test_admission_sees_the_namespace_labels_of_the_moment() -> None:
    # Writes share an admission context per namespace while its labels stay the stored ones: a
    # label added, changed or removed is seen by the next write.
    registry = new_registry()
    claims = kind(registry, "resourceclaims", "resource.k8s.io", "v1")
    namespaces = registry.kinds.namespaces

    def admin_claim(name: str) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {"devices": {"requests": [
            {"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]}}}

    def label(labels: dict[str, str] | None) -> None:
        ns = registry.reads.get(namespaces, "", "default")
        registry.writes.update(namespaces, "", "default", {**ns, "metadata": {
            k: v for k, v in ns["metadata"].items() if k != "labels"} | ({"labels": labels} if labels else {})}, OPTS)

    with pytest.raises(Invalid, match="admin-access"):
        registry.writes.create(claims, "default", admin_claim("a"), OPTS)
    label({"resource.kubernetes.io/admin-access": "true"})
    registry.writes.create(claims, "default", admin_claim("b"), OPTS)
    label({"resource.kubernetes.io/admin-access": "false"})
    with pytest.raises(Invalid, match="admin-access"):
        registry.writes.create(claims, "default", admin_claim("c"), OPTS)
    label({"resource.kubernetes.io/admin-access": "true"})
    registry.writes.create(claims, "default", admin_claim("d"), OPTS)
    label(None)
    with pytest.raises(Invalid, match="admin-access"):
        registry.writes.create(claims, "default", admin_claim("e"), OPTS)


def test_objects_created_alike_share_spec_and_entries_that_later_writes_leave_alone() -> None:
    # Pods created alike store one spec and one managedFields list between them; every kind of
    # write to one of them (binding, status patch, spec patches and PUT, apply, deletion) builds
    # objects of its own, so the other reads back byte for byte as it was created.
    registry = new_registry()
    pods = kind(registry, "pods")
    first, _ = registry.writes.create(pods, "default", pod("a"), OPTS)
    second, _ = registry.writes.create(pods, "default", pod("b"), OPTS)
    assert second["spec"] is first["spec"]
    if second["metadata"]["creationTimestamp"] == first["metadata"]["creationTimestamp"]:
        assert second["metadata"]["managedFields"] is first["metadata"]["managedFields"]
    snapshot = orjson.dumps(second)
    writes = registry.writes
    status = WriteOptions(manager="kubelet", subresource="status")
    bind_pod(writes, pods, "default", "a", {"metadata": {"name": "a"}, "target": {"name": "node-0"}}, OPTS)
    writes.patch(pods, "default", "a", "merge", {"status": {"phase": "Running"}}, status)
    writes.patch(pods, "default", "a", "json", [{"op": "replace", "path": "/spec/containers/0/image",
                                                  "value": "other"}], OPTS)
    writes.patch(pods, "default", "a", "strategic", {"spec": {"activeDeadlineSeconds": 5,
                                                              "containers": [{"name": "c", "image": "third"}]}}, OPTS)
    current = registry.reads.get(pods, "default", "a")
    writes.update(pods, "default", "a", {**current, "spec": {**current["spec"], "activeDeadlineSeconds": 7}}, OPTS)
    writes.patch(pods, "default", "a", "apply", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
                                                  "spec": {"activeDeadlineSeconds": 9}},
                 WriteOptions(manager="applier", force=True))
    writes.delete(pods, "default", "a", {})
    assert orjson.dumps(registry.reads.get(pods, "default", "b")) == snapshot
