"""decode's compiled per-model decoders against fixtures of good and bad bodies: every node type
(strings, numbers, bools, quantities, times, base64, opaque values, lists, maps, structs, a
recursive model), plain bodies and patches, with upstream's messages and field paths."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.errors import BadRequest
from fakeapi.models import MODELS, schema
from fakeapi.models.schema import decode

POD = MODELS[("", "v1", "Pod")]
NODE = MODELS[("", "v1", "Node")]
CONFIGMAP = MODELS[("", "v1", "ConfigMap")]
EVENT = MODELS[("", "v1", "Event")]
CRD = MODELS[("apiextensions.k8s.io", "v1", "CustomResourceDefinition")]


def _schema(props: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"properties": props}}}]}}


# (model, body, patch ("", "merge" or "strategic"), decoded body, warnings)
GOOD = [
    (POD, {"spec": {"nodeSelector": {"a": "b", "c": None}}}, "",
     {"spec": {"nodeSelector": {"a": "b", "c": ""}}}, []),
    (POD, {"spec": {"nodeSelector": {"a": "b", "c": None}}}, "strategic",
     {"spec": {"nodeSelector": {"a": "b", "c": None}}}, []),
    (POD, {"spec": {"tolerations": [None], "containers": [{"name": "c", "args": ["a", None]}]}}, "",
     {"spec": {"tolerations": [{}], "containers": [{"name": "c", "args": ["a", ""]}]}}, []),
    (POD, {"metadata": {"creationTimestamp": "2026-12-01T10:00:00.5+01:00", "labels": None}}, "",
     {"metadata": {"creationTimestamp": "2026-12-01T09:00:00Z"}}, []),
    (EVENT, {"eventTime": "2026-12-01T10:00:00.123456+00:00", "count": 2}, "",
     {"eventTime": "2026-12-01T10:00:00.123456Z", "count": 2}, []),
    (CONFIGMAP, {"binaryData": {"k": "QUJD", "j": "QQ==\n"}}, "",
     {"binaryData": {"k": "QUJD", "j": "QQ==\n"}}, []),
    (NODE, {"status": {"capacity": {"cpu": 4, "memory": None, "pods": "110"}}}, "",
     {"status": {"capacity": {"cpu": "4", "memory": "0", "pods": "110"}}}, []),
    (POD, {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}},
                                    "livenessProbe": {"x": [1, None]}}], "priority": 2}}, "",
     {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}},
                               "livenessProbe": {"x": [1, None]}}], "priority": 2}}, []),
    (POD, {"spec": {"$setElementOrder/containers": [{"name": "c"}],
                    "containers": [{"name": "c", "$patch": "replace", "zz": 1}], "nodeName": None}}, "strategic",
     {"spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "c", "$patch": "replace"}],
               "nodeName": None}}, ['unknown field "spec.containers[0].zz"']),
    (POD, {"spec": {"$setElementOrder/containers": [{"name": "c"}], "nodeName": None}}, "",
     {"spec": {}}, ['unknown field "spec.$setElementOrder/containers"']),
    (CRD, _schema({"a": {"typo": "x", "properties": {"b": {"type": "string", "typo2": 1}}}}), "",
     _schema({"a": {"properties": {"b": {"type": "string"}}}}),
     ['unknown field "spec.versions[0].schema.openAPIV3Schema.properties.a.typo"',
      'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.a.properties.b.typo2"']),
    (POD, {"status": {"containerStatuses": [{"name": "c", "ready": None, "state": {"running": {"x": [1, None]}}},
                                            None]}}, "",
     {"status": {"containerStatuses": [{"name": "c", "ready": None, "state": {"running": {"x": [1, None]}}},
                                       None]}}, []),
    (POD, {"status": {"containerStatuses": [{"name": "c", "restartCount": None}]}}, "strategic",
     {"status": {"containerStatuses": [{"name": "c", "restartCount": None}]}}, []),
    (CRD, _schema({"a": {"enum": ["x", 1, None, {"k": None}, [True]]}}), "",
     _schema({"a": {"enum": ["x", 1, None, {"k": None}, [True]]}}), []),
    # A merge patch replaces lists whole: their items decode as in a body (null and empty fields
    # left out, no directives), while its maps keep their nulls (deletions).
    (POD, {"spec": {"nodeSelector": {"c": None}, "tolerations": [{"key": "k", "value": None}],
                    "containers": [{"name": "c", "$patch": "replace", "env": []}]}}, "merge",
     {"spec": {"nodeSelector": {"c": None}, "tolerations": [{"key": "k"}], "containers": [{"name": "c"}]}},
     ['unknown field "spec.containers[0].$patch"']),
    # Values of one well-typed JSON type are kept without a call: an integer in a float64 field
    # takes the checked path and is kept too; times in list items are normalized there.
    (CRD, _schema({"a": {"minimum": 1, "maximum": 2.5, "nullable": True, "maxLength": 3}}), "",
     _schema({"a": {"minimum": 1, "maximum": 2.5, "nullable": True, "maxLength": 3}}), []),
    (POD, {"status": {"conditions": [{"type": "Ready", "lastTransitionTime": "2026-12-01T10:00:00+01:00"},
                                     {"type": "x", "lastTransitionTime": "2026-12-01T09:00:00Z", "q": 1}]}}, "merge",
     {"status": {"conditions": [{"type": "Ready", "lastTransitionTime": "2026-12-01T09:00:00Z"},
                                {"type": "x", "lastTransitionTime": "2026-12-01T09:00:00Z"}]}},
     ['unknown field "status.conditions[1].q"']),
]


@pytest.mark.parametrize(("model", "body", "patch", "decoded", "warnings"), GOOD, ids=[
    "null-map-value-is-zero", "null-map-value-in-patch-deletes", "null-list-items-are-zero-values",
    "time-to-utc-seconds", "microtime-keeps-microseconds", "base64-with-padding-and-newline",
    "numeric-quantity-to-string-null-to-zero", "opaque-kept-verbatim", "patch-keeps-directives-and-nulls",
    "directive-outside-patch-is-unknown", "recursive-model-unknown-paths", "open-maps-kept-with-their-nulls",
    "open-map-in-patch-keeps-nulls", "opaque-list-kept-with-its-nulls", "merge-patch-lists-are-whole",
    "numbers-and-bools-kept", "times-in-list-items"])
def test_good_bodies_decode(model: Any, body: dict, patch: str, decoded: dict, warnings: list[str]) -> None:
    assert decode(model, body, "Warn", patch=patch) == (decoded, warnings)


BAD = [
    (POD, {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort "
     "of type int32"),
    (POD, {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": True}]}]}},
     "json: cannot unmarshal bool into Go struct field ContainerPort.spec.containers.ports.containerPort "
     "of type int32"),
    (POD, {"spec": {"priority": 2.5}},
     "json: cannot unmarshal number 2.5 into Go struct field PodSpec.spec.priority of type int32"),
    (POD, {"spec": {"containers": [None, {"name": "c", "args": ["a", None, 3]}]}},
     "json: cannot unmarshal number into Go struct field Container.spec.containers.args of type string"),
    (POD, {"spec": {"nodeSelector": {"a": 1}}},
     "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string"),
    (POD, {"metadata": {"labels": {"a": ["x"]}}},
     "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type string"),
    (POD, {"spec": {"containers": "c"}},
     "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"),
    (POD, {"spec": {"securityContext": {}, "affinity": []}},
     "json: cannot unmarshal array into Go struct field PodSpec.spec.affinity of type v1.Affinity"),
    (POD, {"spec": {"overhead": {"cpu": [1]}}},
     "json: cannot unmarshal array into Go struct field PodSpec.spec.overhead of type resource.Quantity"),
    (NODE, {"status": {"capacity": {"cpu": True}}},
     "json: cannot unmarshal bool into Go struct field NodeStatus.status.capacity of type resource.Quantity"),
    (POD, {"metadata": {"creationTimestamp": "yesterday"}},
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
    (EVENT, {"eventTime": "2026-12-01T10:00:00.1234567Z"},
     'parsing time "2026-12-01T10:00:00.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": '
     'cannot parse "7Z" as "Z07:00"'),
    (CONFIGMAP, {"binaryData": {"k": "QUJD", "j": "QU=D"}}, "illegal base64 data at input byte 3"),
    (CONFIGMAP, {"binaryData": {"k": 1}},
     "json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []byte"),
    (CRD, _schema({"a": {"properties": {"b": {"type": 1}}}}),
     "json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema"
     ".properties.properties.type of type string"),
    (POD, [1], "json: cannot unmarshal array into Go value of type v1.Pod"),
    (POD, {"status": {"containerStatuses": [{"name": "c"}, "c"]}},
     "json: cannot unmarshal string into Go struct field PodStatus.status.containerStatuses of type "
     "map[string]interface {}"),
    (POD, {"status": {"containerStatuses": {"name": "c"}}},
     "json: cannot unmarshal object into Go struct field PodStatus.status.containerStatuses of type "
     "[]map[string]interface {}"),
    (CRD, _schema({"a": {"minimum": True}}),
     "json: cannot unmarshal bool into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema"
     ".properties.minimum of type float64"),
    (CRD, _schema({"a": {"nullable": "yes"}}),
     "json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema"
     ".properties.nullable of type bool"),
    (POD, {"status": {"conditions": [{"type": "Ready"}, {"type": "x", "lastTransitionTime": 5}]}},
     "json: cannot unmarshal number into Go struct field PodCondition.status.conditions.lastTransitionTime "
     "of type v1.Time"),
    (CRD, _schema({"a": {"enum": {"x": 1}}}),
     "json: cannot unmarshal object into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema"
     ".properties.enum of type []runtime.RawExtension"),
]


@pytest.mark.parametrize(("model", "body", "message"), BAD, ids=[
    "string-for-int32", "bool-for-int32", "fraction-for-int32", "number-in-string-list", "number-in-string-map",
    "array-in-string-map", "string-for-list", "array-for-struct", "array-for-quantity", "bool-for-quantity",
    "bad-time", "microtime-too-precise", "bad-base64", "number-for-bytes", "recursive-model-type-error",
    "array-for-object", "string-for-open-map", "object-for-list-of-open-maps", "bool-for-float64",
    "string-for-bool", "number-for-time-in-list", "object-for-opaque-list"])
@pytest.mark.parametrize("patch", ["", "merge", "strategic"], ids=["body", "merge-patch", "strategic-patch"])
def test_bad_bodies_name_the_field(model: Any, body: Any, message: str, patch: str) -> None:
    kind = model.gvk[2]
    with pytest.raises(BadRequest) as err:
        decode(model, body, "Ignore", patch=patch)
    assert err.value.message == f'{kind} in version "v1" cannot be handled as a {kind}: {message}'


def test_decoded_objects_share_nothing_with_the_body() -> None:
    body = {"metadata": {"name": "p", "labels": {"a": "b"}, "finalizers": ["x/y"]},
            "spec": {"containers": [{"name": "c", "args": ["a"], "livenessProbe": {"exec": {"command": ["true"]}}}]},
            "status": {"containerStatuses": [{"name": "c", "state": {"running": {}}}]}}
    decoded, _ = decode(POD, body)
    decoded["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = "now"
    decoded["status"]["containerStatuses"][0]["name"] = "d"
    decoded["metadata"]["labels"]["a"] = "changed"
    decoded["metadata"]["finalizers"].append("z/w")
    decoded["spec"]["containers"][0]["args"].append("b")
    decoded["spec"]["containers"][0]["livenessProbe"]["exec"]["command"].append("false")
    assert body == {"metadata": {"name": "p", "labels": {"a": "b"}, "finalizers": ["x/y"]},
                    "spec": {"containers": [{"name": "c", "args": ["a"],
                                             "livenessProbe": {"exec": {"command": ["true"]}}}]},
                    "status": {"containerStatuses": [{"name": "c", "state": {"running": {}}}]}}


def test_times_are_remembered_per_go_type_and_errors_never(monkeypatch: pytest.MonkeyPatch) -> None:
    for memo in schema._NORMALIZED_TIMES.values():
        monkeypatch.setattr(memo, "limit", 2)
    moment = "2026-12-01T10:00:00.123456+00:00"
    for _ in range(2):  # the second round hits what the first remembered
        assert decode(POD, {"metadata": {"creationTimestamp": moment}})[0] == {
            "metadata": {"creationTimestamp": "2026-12-01T10:00:00Z"}}
        assert decode(EVENT, {"eventTime": moment})[0] == {"eventTime": "2026-12-01T10:00:00.123456Z"}
        for second in range(5):  # more than are kept: the memo starts over, results stay right
            assert decode(POD, {"metadata": {"creationTimestamp": f"2026-12-01T10:00:0{second}+01:00"}})[0] == {
                "metadata": {"creationTimestamp": f"2026-12-01T09:00:0{second}Z"}}
        with pytest.raises(BadRequest, match="parsing time"):
            decode(POD, {"metadata": {"creationTimestamp": "yesterday"}})


# (model, patch, patched result, what drop_emptied leaves of it)
EMPTIED = [
    # An emptied map or list the patch reaches goes (not one it does not reach); a struct stays,
    # as Go writes an empty struct.
    (POD, {"spec": {"nodeSelector": {"a": None}, "containers": [{"name": "c", "resources": {}}]}},
     {"spec": {"nodeSelector": {}, "tolerations": [], "containers": [{"name": "c", "resources": {}}]}},
     {"spec": {"tolerations": [], "containers": [{"name": "c", "resources": {}}]}}),
    # A strategic directive reaches the list it names.
    (POD, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f"]}},
     {"metadata": {"name": "p", "finalizers": []}}, {"metadata": {"name": "p"}}),
    # List elements are walked whole; map values stay even when empty (not a struct field).
    (POD, {"spec": {"containers": [{"name": "c"}]}},
     {"spec": {"containers": [{"name": "c", "env": [], "resources": {"limits": {}}}]}},
     {"spec": {"containers": [{"name": "c", "resources": {}}]}}),
    (CONFIGMAP, {"data": {"k": None}}, {"data": {}}, {}),
    (CONFIGMAP, {"binaryData": {"k": "QQ=="}}, {"binaryData": {"k": "QQ=="}}, {"binaryData": {"k": "QQ=="}}),
]


@pytest.mark.parametrize(("model", "patch", "result", "left"), EMPTIED)
def test_drop_emptied_leaves_out_what_the_patch_emptied(model: Any, patch: dict, result: dict, left: dict) -> None:
    schema.drop_emptied(model, patch, result, strategic=True)
    assert result == left


def test_structs_of_scalars_are_not_walked() -> None:
    def plan(model: Any, key: str) -> dict[str, Any]:
        node = schema.struct_fields(model)[key].node
        assert isinstance(node, schema.Struct)
        return schema._emptying_plan(node.model)

    assert plan(POD, "status")["conditions"] == (list, None)  # PodCondition holds scalars only
    assert plan(POD, "spec")["containers"][1] is not None  # a container's resources hold maps
