"""The protobuf request envelope kubectl's generators send, decoded for ConfigMap and Namespace."""

from __future__ import annotations

import pytest

from fakeapi.errors import BadRequest, UnsupportedMediaType
from fakeapi.server.protobuf import MAGIC, decode_protobuf


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = field(1, api_version.encode()) + field(2, kind.encode())
    return MAGIC + field(1, type_meta) + field(2, raw) + field(4, b"application/vnd.kubernetes.protobuf")


def test_configmap_with_labels_data_and_binary_data() -> None:
    meta = field(1, b"settings") + field(11, field(1, b"app") + field(2, b"web"))
    data = field(2, field(1, b"k") + field(2, b"v"))
    binary = field(3, field(1, b"bin") + field(2, b"\x00\x01"))
    raw = field(1, meta) + data + binary + field(4, 1)
    assert decode_protobuf(envelope("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": "web"}},
        "data": {"k": "v"}, "binaryData": {"bin": "AAE="}, "immutable": True}


def test_namespace_with_finalizers() -> None:
    raw = field(1, field(1, b"team")) + field(2, field(1, b"kubernetes"))
    assert decode_protobuf(envelope("v1", "Namespace", raw)) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}, "spec": {"finalizers": ["kubernetes"]}}


def test_delete_options_of_kubectl_drain() -> None:
    raw = field(1, (1 << 64) - 1) + field(2, field(1, b"uid-1")) + field(4, b"Background") + field(5, b"All")
    assert decode_protobuf(envelope("meta.k8s.io/v1", "DeleteOptions", raw)) == {
        "apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": -1,
        "preconditions": {"uid": "uid-1"}, "propagationPolicy": "Background", "dryRun": ["All"]}


def test_other_kinds_are_415() -> None:
    with pytest.raises(UnsupportedMediaType):
        decode_protobuf(envelope("v1", "PersistentVolume", b""))


def test_secret_of_kubectl_create_secret() -> None:
    raw = field(1, field(1, b"creds")) + field(2, field(1, b"user") + field(2, b"admin")) + field(3, b"Opaque")
    assert decode_protobuf(envelope("v1", "Secret", raw)) == {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"user": "YWRtaW4="},
        "type": "Opaque"}


def test_service_of_kubectl_expose() -> None:
    target = field(1, 1) + field(3, b"http")  # IntOrString{type: String, strVal: "http"}
    port = field(1, b"web") + field(2, b"TCP") + field(3, 80) + field(4, target)
    spec = field(1, port) + field(2, field(1, b"app") + field(2, b"web")) + field(4, b"NodePort")
    raw = field(1, field(1, b"web")) + field(2, spec)
    assert decode_protobuf(envelope("v1", "Service", raw)) == {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"name": "web", "protocol": "TCP", "port": 80, "targetPort": "http"}],
                 "selector": {"app": "web"}, "type": "NodePort"}}


def test_ingress_rules_inline_their_http_value_and_keep_an_empty_pointer_string() -> None:
    # Go writes non-pointer zero values (host "", port number 0); pointer fields only when set.
    service = field(1, b"web") + field(2, field(1, b"") + field(2, 0))
    path = field(1, b"/api") + field(2, field(4, service)) + field(3, b"Exact")
    rule = field(1, b"") + field(2, field(1, field(1, path)))
    spec = field(3, rule) + field(2, field(1, b"shop.example.com") + field(2, b"")) + field(4, b"")
    raw = field(1, field(1, b"shop")) + field(2, spec)
    assert decode_protobuf(envelope("networking.k8s.io/v1", "Ingress", raw)) == {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "shop"},
        "spec": {"rules": [{"http": {"paths": [{"path": "/api", "pathType": "Exact",
                                                "backend": {"service": {"name": "web", "port": {}}}}]}}],
                 "tls": [{"hosts": ["shop.example.com"]}], "ingressClassName": ""}}


def test_token_request_of_kubectl_create_token() -> None:
    bound = field(1, b"Pod") + field(2, b"v1") + field(3, b"p") + field(4, b"uid-1")
    spec = field(1, b"vault") + field(4, 600) + field(3, bound)
    raw = field(1, b"") + field(2, spec)
    assert decode_protobuf(envelope("authentication.k8s.io/v1", "TokenRequest", raw)) == {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {},
        "spec": {"audiences": ["vault"], "expirationSeconds": 600,
                 "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "uid-1"}}}


@pytest.mark.parametrize("body", [b"not-protobuf", MAGIC + b"\x0a\xff", MAGIC + b"\x0a\x09ab"],
                         ids=["no-envelope", "truncated-varint", "truncated-field"])
def test_garbage_is_400(body: bytes) -> None:
    with pytest.raises(BadRequest):
        decode_protobuf(body)


def raw_field(number: int, wire: int, payload: bytes) -> bytes:
    return varint(number << 3 | wire) + payload


def configmap(raw: bytes) -> bytes:
    return envelope("v1", "ConfigMap", raw)


# Each body a field of the wrong wire type or a malformed field: every one is a 400, never a crash.
MALFORMED = [
    ("string-as-varint", configmap(field(1, field(1, 7))), "wrong wireType = 0 for field name"),
    ("message-as-varint", configmap(field(1, 5)), "wrong wireType = 0 for field metadata"),
    ("map-as-varint", configmap(field(2, 3)), "wrong wireType = 0 for field data"),
    ("map-value-as-varint", configmap(field(2, field(1, b"k") + field(2, 9))), "wrong wireType = 0 for field value"),
    ("repeated-message-as-varint", configmap(field(1, field(13, 1))), "wrong wireType = 0 for field ownerReferences"),
    ("repeated-string-as-varint", configmap(field(1, field(14, 1))), "wrong wireType = 0 for field finalizers"),
    ("time-as-varint", configmap(field(1, field(8, 1))), "wrong wireType = 0 for field creationTimestamp"),
    ("bool-as-bytes", configmap(field(4, b"\x01")), "wrong wireType = 2 for field immutable"),
    ("int-as-bytes", configmap(field(1, field(7, b"\x01"))), "wrong wireType = 2 for field generation"),
    ("type-meta-as-varint", MAGIC + field(1, 1), "wrong wireType = 0 for field typeMeta"),
    ("fixed64-truncated", configmap(raw_field(9, 1, b"\x00\x01")), "truncated field"),
    ("fixed32-truncated", configmap(raw_field(9, 5, b"\x00")), "truncated field"),
    ("start-group", configmap(raw_field(9, 3, b"")), "unsupported wire type 3"),
    ("wire-type-7", configmap(raw_field(9, 7, b"")), "unsupported wire type 7"),
    ("varint-overflow", configmap(raw_field(9, 0, b"\xff" * 11 + b"\x01")), "integer overflow"),
    ("tag-zero", configmap(raw_field(0, 0, b"\x01")), "illegal tag 0"),
    ("time-out-of-range", configmap(field(1, field(8, field(1, 1 << 62)))), "cannot decode the request body"),
]


@pytest.mark.parametrize(("body", "message"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_fields_are_400(body: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        decode_protobuf(body)
