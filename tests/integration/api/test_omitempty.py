"""Empty optional maps and lists are not stored, as Go's ``omitempty`` leaves them out of what
kube-apiserver stores and returns: a client that reads back ``labels`` it sent as ``{}`` finds
none, here as on a real cluster."""

from __future__ import annotations

from typing import Any

from tests.integration.api.conftest import CM, Api

PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _cm(name: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}, "data": {}}


async def test_a_create_stores_no_empty_optional_map_or_list(api: Api) -> None:
    created = await api.ok("POST", CM, _cm("empty", labels={}, annotations={}, finalizers=[], ownerReferences=[]))
    read = await api.ok("GET", f"{CM}/empty")
    for obj in (created, read):
        assert "data" not in obj
        assert not {"labels", "annotations", "finalizers", "ownerReferences"} & set(obj["metadata"])
    # Not empty: kept as sent.
    kept = await api.ok("POST", CM, _cm("kept", labels={"a": "b"}) | {"data": {"k": ""}})
    assert (kept["metadata"]["labels"], kept["data"]) == ({"a": "b"}, {"k": ""})


async def test_nested_empty_lists_and_maps_go_and_empty_structs_stay(api: Api) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"nodeSelector": {}, "tolerations": [], "securityContext": {},
                    "containers": [{"name": "c", "image": "i", "ports": [], "env": [],
                                    "resources": {"requests": {}, "limits": {}}}]}}
    spec = (await api.ok("POST", PODS, pod))["spec"]
    assert "nodeSelector" not in spec
    assert spec.get("tolerations") != []  # admission may add its own; never an empty list
    container = spec["containers"][0]
    assert not {"ports", "env"} & set(container)
    assert container["resources"] == {}  # a struct stays, as Go writes an empty struct
    assert spec["securityContext"] == {}


async def test_patches_that_leave_a_map_empty_store_none(api: Api) -> None:
    await api.ok("POST", CM, _cm("patched", labels={"a": "b"}))
    merged = await api.ok("PATCH", f"{CM}/patched", {"metadata": {"labels": {"a": None}, "annotations": {}}},
                          content_type="application/merge-patch+json")
    assert not {"labels", "annotations"} & set(merged["metadata"])
    added = await api.ok("PATCH", f"{CM}/patched", [{"op": "add", "path": "/metadata/labels", "value": {}}],
                         content_type="application/json-patch+json")
    assert "labels" not in added["metadata"]


async def test_patches_that_empty_a_nested_map_or_list_leave_it_out(api: Api) -> None:
    template = {"metadata": {"labels": {"app": "a"}},
                "spec": {"nodeSelector": {"disk": "ssd"}, "tolerations": [{"key": "k", "operator": "Exists"}],
                         "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]},
                                        {"name": "d", "image": "i", "env": [{"name": "B", "value": "2"}]}]}}
    await api.ok("POST", DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "emptied", "finalizers": ["x.io/keep"]},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template}})
    path = f"{DEPLOYMENTS}/emptied"
    merged = await api.ok("PATCH", path, {"spec": {"template": {"spec": {"nodeSelector": {"disk": None}}}}},
                          content_type="application/merge-patch+json")
    assert "nodeSelector" not in merged["spec"]["template"]["spec"]
    strategic = await api.ok("PATCH", path, {
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/keep"]},
        "spec": {"template": {"spec": {
            "tolerations": [], "containers": [{"name": "d", "env": [{"name": "B", "$patch": "delete"}]}]}}},
    }, content_type="application/strategic-merge-patch+json")
    read = await api.ok("GET", path)
    for obj in (strategic, read):
        assert "finalizers" not in obj["metadata"]
        spec = obj["spec"]["template"]["spec"]
        assert "tolerations" not in spec
        first, second = spec["containers"]
        assert first["env"] == [{"name": "A", "value": "1"}]  # untouched
        assert "env" not in second


async def test_an_apply_that_takes_away_the_last_label_stores_no_labels(api: Api) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"a": "b"}}}
    path = f"{CM}/applied?fieldManager=tester"
    first = await api.ok("PATCH", path, config, content_type="application/apply-patch+yaml")
    assert first["metadata"]["labels"] == {"a": "b"}
    del config["metadata"]["labels"]
    second = await api.ok("PATCH", path, config, content_type="application/apply-patch+yaml")
    assert "labels" not in second["metadata"]


async def test_a_wrong_type_is_still_refused_when_empty(api: Api) -> None:
    status, answer = await api.request("POST", CM, _cm("wrong", labels=[]))
    assert (status, answer["reason"]) == (400, "BadRequest")
    assert "cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string" \
        in answer["message"]


async def test_a_merge_patch_replaces_a_list_with_items_decoded_as_in_a_body(api: Api) -> None:
    """RFC 7386 replaces lists whole, nulls and all; the apiserver then decodes the result into Go
    structs, where a null field is its zero value (left out) and an unknown one is reported."""
    await api.ok("POST", DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nulls"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {
            "metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    patch = {"spec": {"template": {"spec": {
        "tolerations": [{"key": "k", "operator": "Equal", "value": None, "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": "j", "env": [{"name": "E", "value": None}], "ports": []}]}}}}
    patched = await api.ok("PATCH", f"{DEPLOYMENTS}/nulls?fieldValidation=Strict", patch,
                           content_type="application/merge-patch+json")
    spec = patched["spec"]["template"]["spec"]
    assert spec["tolerations"] == [{"key": "k", "operator": "Equal", "effect": "NoSchedule"}]
    assert spec["containers"][0]["env"] == [{"name": "E"}] and "ports" not in spec["containers"][0]
    status, answer = await api.request("PATCH", f"{DEPLOYMENTS}/nulls?fieldValidation=Strict",
                                       {"spec": {"template": {"spec": {"containers": [
                                           {"name": "c", "image": "j", "$patch": "replace"}]}}}},
                                       content_type="application/merge-patch+json")
    assert status == 400, answer
    assert answer["message"].endswith('strict decoding error: unknown field "spec.template.spec.containers[0].$patch"')
