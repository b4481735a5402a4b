"""decode (Go-style type checks, fieldValidation) and openapi_components, straight from the models."""

from __future__ import annotations

import re
from typing import Any

import pytest

from fakeapi.errors import BadRequest
from fakeapi.models import MODELS
from fakeapi.models.schema import decode, openapi_components, schema_name

CLAIM = MODELS[("resource.k8s.io", "v1", "ResourceClaim")]
POD = MODELS[("", "v1", "Pod")]


def claim_with(exactly: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


UNKNOWN = claim_with({"deviceClassName": "gpu", "foo": 1}) | {"bar": True}


def test_strict_rejects_every_unknown_field_with_its_path() -> None:
    with pytest.raises(BadRequest) as err:
        decode(CLAIM, UNKNOWN, "Strict")
    assert err.value.message == (
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding error: '
        'unknown field "spec.devices.requests[0].exactly.foo", unknown field "bar"')


def test_warn_returns_warnings_and_prunes() -> None:
    pruned, warnings = decode(CLAIM, UNKNOWN, "Warn")
    assert warnings == ['unknown field "spec.devices.requests[0].exactly.foo"', 'unknown field "bar"']
    assert pruned == claim_with({"deviceClassName": "gpu"})


def test_ignore_drops_silently_and_does_not_touch_input() -> None:
    pruned, warnings = decode(CLAIM, UNKNOWN, "Ignore")
    assert (pruned, warnings) == (claim_with({"deviceClassName": "gpu"}), [])
    assert UNKNOWN["bar"] is True


@pytest.mark.parametrize(("exactly", "message"), [
    ({"count": "2"}, "cannot unmarshal string into Go struct field ExactDeviceRequest"
                     ".spec.devices.requests.exactly.count of type int64"),
    ({"count": 1.5}, "cannot unmarshal number 1.5 into Go struct field ExactDeviceRequest"
                     ".spec.devices.requests.exactly.count of type int64"),
    ({"count": True}, "cannot unmarshal bool into Go struct field"),
    ({"adminAccess": "yes"}, "cannot unmarshal string into Go struct field ExactDeviceRequest"
                             ".spec.devices.requests.exactly.adminAccess of type bool"),
    ({"selectors": {"cel": {}}}, "cannot unmarshal object into Go struct field ExactDeviceRequest"
                                 ".spec.devices.requests.exactly.selectors of type []v1.DeviceSelector"),
    ({"deviceClassName": 3}, "cannot unmarshal number into Go struct field"),
], ids=["string-for-int64", "fraction-for-int64", "bool-for-int64", "string-for-bool", "object-for-list",
        "number-for-string"])
def test_type_errors_name_the_field(exactly: dict, message: str) -> None:
    with pytest.raises(BadRequest) as err:
        decode(CLAIM, claim_with(exactly), "Ignore")
    assert err.value.message.startswith('ResourceClaim in version "v1" cannot be handled as a ResourceClaim: json: ')
    assert message in err.value.message


def test_quantities_accept_numbers_and_nulls_are_dropped() -> None:
    obj = {"metadata": {"name": "n", "labels": None},
           "status": {"capacity": {"cpu": 4, "memory": "8Gi"}, "allocatable": {"cpu": 3.5}}}
    pruned, _ = decode(MODELS[("", "v1", "Node")], obj)
    assert pruned == {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "memory": "8Gi"},
                                                            "allocatable": {"cpu": "3500m"}}}


@pytest.mark.parametrize(("sent", "stored"), [
    ("1000m", "1"), ("0.5", "500m"), (" 1.5Gi ", "1536Mi"), ("2048Ki", "2Mi"), ("1e3", "1e3"), ("100Mi", "100Mi"),
    (0.1, "100m"), ("-1", "-1"),
])
def test_quantities_are_stored_in_canonical_form(sent: Any, stored: str) -> None:
    # Go's decoder parses a Quantity and its encoder writes the canonical form back.
    pruned, _ = decode(MODELS[("", "v1", "Node")], {"status": {"capacity": {"cpu": sent}}})
    assert pruned["status"]["capacity"]["cpu"] == stored


@pytest.mark.parametrize("sent", ["abc", "1 Gi", "1.5.5", "", "10x"])
def test_a_value_that_is_no_quantity_is_refused_as_go_refuses_it(sent: str) -> None:
    with pytest.raises(BadRequest) as err:
        decode(MODELS[("", "v1", "Node")], {"status": {"capacity": {"cpu": sent}}})
    assert err.value.message == ('Node in version "v1" cannot be handled as a Node: quantities must match the '
                                 "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_open_structs_keep_unmodelled_fields_but_typed_parts_stay_strict() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}},
                        "volumeMounts": [{"name": "v", "mountPath": "/v", "mountPropagation": "None"}]}],
        "volumes": [{"name": "v", "emptyDir": {}}]}}
    assert decode(POD, pod)[0] == pod
    with pytest.raises(BadRequest, match=re.escape('unknown field "spec.containers[0].imagePullPolice"')):
        decode(POD, {"spec": {"containers": [{"name": "c", "imagePullPolice": "Always"}]}})


def test_opaque_parameters_are_kept_verbatim() -> None:
    config = {"opaque": {"driver": "gpu.example.com", "parameters": {"anything": [1, {"x": None}]}}}
    obj = {"spec": {"devices": {"config": [config]}}}
    assert decode(CLAIM, obj)[0] == obj


def test_metadata_is_object_meta() -> None:
    meta = {"name": "c", "generateName": "c-", "labels": {"a": "b"}, "annotations": {"x": "y"},
            "finalizers": ["f/g"], "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                                        "uid": "u", "controller": True}],
            "managedFields": [{"manager": "kubectl", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]}
    assert decode(CLAIM, {"metadata": meta})[0] == {"metadata": meta}
    with pytest.raises(BadRequest, match=re.escape('unknown field "metadata.nmae"')):
        decode(CLAIM, {"metadata": {"nmae": "x"}})


def test_every_kind_has_a_component_with_its_gvk() -> None:
    components = openapi_components()
    for group, version, kind in MODELS:
        schema = components[schema_name(group, version, kind)]
        assert schema["x-kubernetes-group-version-kind"] == [{"group": group, "version": version, "kind": kind}]
        assert schema["description"]
        assert {"apiVersion", "kind", "metadata"} <= set(schema["properties"])


def test_components_are_closed_under_refs() -> None:
    components = openapi_components()
    refs: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):  # JSONSchemaProps has a *property* named $ref
                refs.append(node["$ref"].removeprefix("#/components/schemas/"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(components)
    assert refs and set(refs) <= set(components)


def test_component_details_follow_upstream() -> None:
    c = openapi_components()
    status = c["io.k8s.api.resource.v1.ResourceClaimStatus"]["properties"]
    assert status["reservedFor"]["x-kubernetes-list-type"] == "map"
    assert status["reservedFor"]["x-kubernetes-list-map-keys"] == ["uid"]
    request = c["io.k8s.api.resource.v1.ExactDeviceRequest"]
    assert request["properties"]["count"] == {"type": "integer", "format": "int64",
                                              "description": request["properties"]["count"]["description"]}
    assert request["required"] == ["deviceClassName"]
    assert c["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]["x-kubernetes-list-map-keys"] == ["name"]
    draft = c["io.k8s.api.scheduling.v1alpha1.PodGroupResourceClaim"]
    assert "fakeapi extension" in draft["description"]
    assert "fakeapi extension" in draft["properties"]["constraints"]["description"]
    assert c["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"


@pytest.mark.parametrize(("gvk", "name"), [
    (("", "v1", "Pod"), "io.k8s.api.core.v1.Pod"),
    (("resource.k8s.io", "v1", "ResourceSlice"), "io.k8s.api.resource.v1.ResourceSlice"),
    (("scheduling.k8s.io", "v1beta1", "PodGroup"), "io.k8s.api.scheduling.v1beta1.PodGroup"),
], ids=["core", "resource", "scheduling"])
def test_schema_name(gvk: tuple[str, str, str], name: str) -> None:
    assert schema_name(*gvk) == name


def test_models_parse_decoded_objects() -> None:
    pruned, _ = decode(CLAIM, claim_with({"deviceClassName": "gpu", "count": 2}))
    claim = CLAIM.model_validate(pruned)
    assert claim.spec.devices.requests[0].exactly.count == 2
    assert claim.model_dump(exclude_none=True)["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
