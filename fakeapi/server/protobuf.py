"""Decoding the Kubernetes protobuf request envelope for the few kinds kubectl sends that way.

kubectl's typed generators (``kubectl create configmap``, ``kubectl create namespace``) always
send ``application/vnd.kubernetes.protobuf`` and client-go does not fall back to JSON on 415.
This decodes the ``k8s\\x00`` envelope (``runtime.Unknown``) and the generated messages of
those kinds into the JSON shape; anything else is an honest 415.  Field numbers follow
``k8s.io/api/core/v1/generated.proto`` and ``apimachinery/pkg/apis/meta/v1/generated.proto``.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from fakeapi.errors import BadRequest, UnsupportedMediaType
from fakeapi.machinery.timestamps import format_rfc3339

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# A schema maps field number -> (json name, type); a type is "string", "bytes" (base64 in JSON),
# "blob" (raw bytes), "int", "bool", "time", a nested schema (dict), ("map", value type), ("repeated", item type)
# or ("inline", schema): an embedded Go struct, a message on the wire whose fields JSON lists in the parent.
# A "?" suffix marks a pointer field, whose zero value ("", 0, false) is still a value.
Schema = dict[int, tuple[str, Any]]

TYPE_META: Schema = {1: ("apiVersion", "string"), 2: ("kind", "string")}
UNKNOWN: Schema = {1: ("typeMeta", TYPE_META), 2: ("raw", "blob"), 3: ("contentEncoding", "string"),
                   4: ("contentType", "string")}
OWNER_REFERENCE: Schema = {1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"),
                           5: ("apiVersion", "string"), 6: ("controller", "bool"),
                           7: ("blockOwnerDeletion", "bool")}
OBJECT_META: Schema = {
    1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"), 5: ("uid", "string"),
    6: ("resourceVersion", "string"), 7: ("generation", "int"), 8: ("creationTimestamp", "time"),
    11: ("labels", ("map", "string")), 12: ("annotations", ("map", "string")),
    13: ("ownerReferences", ("repeated", OWNER_REFERENCE)), 14: ("finalizers", ("repeated", "string")),
}
KINDS: dict[tuple[str, str], Schema] = {
    ("v1", "ConfigMap"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "string")),
                          3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool?")},
    ("v1", "Namespace"): {1: ("metadata", OBJECT_META), 2: ("spec", {1: ("finalizers", ("repeated", "string"))}),
                          3: ("status", {1: ("phase", "string")})},
}

# The workload kinds kubectl's generators send (``create deployment|job|cronjob|poddisruptionbudget``,
# ``create job --from=cronjob/x``, ``drain``'s evictions): the fields those generators set and the
# pod template fields a manifest commonly carries.  Field numbers follow the generated.proto of
# k8s.io/api apps/v1, batch/v1, policy/v1 and core/v1.
LABEL_SELECTOR: Schema = {
    1: ("matchLabels", ("map", "string")),
    2: ("matchExpressions", ("repeated", {1: ("key", "string"), 2: ("operator", "string"),
                                          3: ("values", ("repeated", "string"))})),
}
RESOURCE_LIST = ("map", "quantity")
CONTAINER: Schema = {
    1: ("name", "string"), 2: ("image", "string"), 3: ("command", ("repeated", "string")),
    4: ("args", ("repeated", "string")), 5: ("workingDir", "string"),
    6: ("ports", ("repeated", {1: ("name", "string"), 2: ("hostPort", "int"), 3: ("containerPort", "int"),
                               4: ("protocol", "string"), 5: ("hostIP", "string")})),
    7: ("env", ("repeated", {1: ("name", "string"), 2: ("value", "string")})),
    8: ("resources", {1: ("limits", RESOURCE_LIST), 2: ("requests", RESOURCE_LIST)}),
    13: ("terminationMessagePath", "string"), 14: ("imagePullPolicy", "string"), 16: ("stdin", "bool"),
    17: ("stdinOnce", "bool"), 18: ("tty", "bool"), 20: ("terminationMessagePolicy", "string"),
}
POD_SPEC: Schema = {
    2: ("containers", ("repeated", CONTAINER)), 3: ("restartPolicy", "string"),
    4: ("terminationGracePeriodSeconds", "int?"), 5: ("activeDeadlineSeconds", "int?"), 6: ("dnsPolicy", "string"),
    7: ("nodeSelector", ("map", "string")), 8: ("serviceAccountName", "string"), 10: ("nodeName", "string"),
    16: ("hostname", "string"), 17: ("subdomain", "string"), 19: ("schedulerName", "string"),
    20: ("initContainers", ("repeated", CONTAINER)), 24: ("priorityClassName", "string"),
}
POD_TEMPLATE: Schema = {1: ("metadata", OBJECT_META), 2: ("spec", POD_SPEC)}
JOB_SPEC: Schema = {
    1: ("parallelism", "int?"), 2: ("completions", "int?"), 3: ("activeDeadlineSeconds", "int?"),
    4: ("selector", LABEL_SELECTOR), 5: ("manualSelector", "bool?"), 6: ("template", POD_TEMPLATE),
    7: ("backoffLimit", "int?"), 8: ("ttlSecondsAfterFinished", "int?"), 9: ("completionMode", "string"),
    10: ("suspend", "bool?"), 12: ("backoffLimitPerIndex", "int?"), 13: ("maxFailedIndexes", "int?"),
    14: ("podReplacementPolicy", "string"), 15: ("managedBy", "string"),
}
WORKLOAD_KINDS: dict[tuple[str, str], Schema] = {
    ("apps/v1", "Deployment"): {1: ("metadata", OBJECT_META), 2: ("spec", {
        1: ("replicas", "int?"), 2: ("selector", LABEL_SELECTOR), 3: ("template", POD_TEMPLATE),
        4: ("strategy", {1: ("type", "string"), 2: ("rollingUpdate", {1: ("maxUnavailable", "intstr"),
                                                                      2: ("maxSurge", "intstr")})}),
        5: ("minReadySeconds", "int"), 6: ("revisionHistoryLimit", "int?"), 7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int?")})},
    ("batch/v1", "Job"): {1: ("metadata", OBJECT_META), 2: ("spec", JOB_SPEC)},
    ("batch/v1", "CronJob"): {1: ("metadata", OBJECT_META), 2: ("spec", {
        1: ("schedule", "string"), 2: ("startingDeadlineSeconds", "int?"), 3: ("concurrencyPolicy", "string"),
        4: ("suspend", "bool?"), 5: ("jobTemplate", {1: ("metadata", OBJECT_META), 2: ("spec", JOB_SPEC)}),
        6: ("successfulJobsHistoryLimit", "int?"), 7: ("failedJobsHistoryLimit", "int?"),
        8: ("timeZone", "string")})},
    ("policy/v1", "PodDisruptionBudget"): {1: ("metadata", OBJECT_META), 2: ("spec", {
        1: ("minAvailable", "intstr"), 2: ("selector", LABEL_SELECTOR), 3: ("maxUnavailable", "intstr"),
        4: ("unhealthyPodEvictionPolicy", "string")})},
}
KINDS.update(WORKLOAD_KINDS)
# kubectl drain deletes pods with a protobuf DeleteOptions body, whatever group version it names.
DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", "int?"), 2: ("preconditions", {1: ("uid", "string"), 2: ("resourceVersion", "string")}),
    3: ("orphanDependents", "bool?"), 4: ("propagationPolicy", "string"), 5: ("dryRun", ("repeated", "string")),
}
TIME: Schema = {1: ("seconds", "int"), 2: ("nanos", "int")}
# kubectl drain evicts pods with a protobuf policy/v1 Eviction.
KINDS[("policy/v1", "Eviction")] = {1: ("metadata", OBJECT_META), 2: ("deleteOptions", DELETE_OPTIONS)}
INT_OR_STRING: Schema = {1: ("type", "int"), 2: ("intVal", "int"), 3: ("strVal", "string")}

# RBAC and the access reviews: kubectl create role|clusterrole|rolebinding|clusterrolebinding,
# kubectl auth can-i and auth whoami send these (rbac, authorization and authentication v1).
_STRINGS = ("repeated", "string")
LABEL_SELECTOR: Schema = {1: ("matchLabels", ("map", "string")), 2: ("matchExpressions", ("repeated", {
    1: ("key", "string"), 2: ("operator", "string"), 3: ("values", _STRINGS)}))}
_RULES = ("rules", ("repeated", {1: ("verbs", _STRINGS), 2: ("apiGroups", _STRINGS), 3: ("resources", _STRINGS),
                                 4: ("resourceNames", _STRINGS), 5: ("nonResourceURLs", _STRINGS)}))
_BINDING: Schema = {
    1: ("metadata", OBJECT_META),
    2: ("subjects", ("repeated", {1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"),
                                  4: ("namespace", "string")})),
    3: ("roleRef", {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")}),
}
_RESOURCE_ATTRIBUTES: Schema = {
    1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"), 4: ("version", "string"),
    5: ("resource", "string"), 6: ("subresource", "string"), 7: ("name", "string"),
}
_ACCESS_SPEC: Schema = {1: ("resourceAttributes", _RESOURCE_ATTRIBUTES),
                        2: ("nonResourceAttributes", {1: ("path", "string"), 2: ("verb", "string")}),
                        3: ("user", "string"), 4: ("groups", _STRINGS), 6: ("uid", "string")}
KINDS.update({
    ("rbac.authorization.k8s.io/v1", "Role"): {1: ("metadata", OBJECT_META), 2: _RULES},
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): {
        1: ("metadata", OBJECT_META), 2: _RULES,
        3: ("aggregationRule", {1: ("clusterRoleSelectors", ("repeated", LABEL_SELECTOR))})},
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): _BINDING,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): _BINDING,
    **{("authorization.k8s.io/v1", kind): {1: ("metadata", OBJECT_META), 2: ("spec", _ACCESS_SPEC)}
       for kind in ("SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview")},
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): {
        1: ("metadata", OBJECT_META), 2: ("spec", {1: ("namespace", "string")})},
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {1: ("metadata", OBJECT_META)},
    ("authentication.k8s.io/v1", "TokenReview"): {
        1: ("metadata", OBJECT_META), 2: ("spec", {1: ("token", "string"), 2: ("audiences", _STRINGS)})},
})


# The everyday kinds kubectl's generators send: create secret, create serviceaccount, create token,
# expose and create service, create quota (k8s.io/api core/v1 and authentication/v1 generated.proto).
_OBJECT_REFERENCE: Schema = {1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"),
                             4: ("uid", "string"), 5: ("apiVersion", "string"), 6: ("resourceVersion", "string"),
                             7: ("fieldPath", "string")}
_SERVICE_PORT: Schema = {1: ("name", "string"), 2: ("protocol", "string"), 3: ("port", "int"),
                         4: ("targetPort", "intstr"), 5: ("nodePort", "int"), 6: ("appProtocol", "string")}
_SERVICE_SPEC: Schema = {
    1: ("ports", ("repeated", _SERVICE_PORT)), 2: ("selector", ("map", "string")), 3: ("clusterIP", "string"),
    4: ("type", "string"), 5: ("externalIPs", _STRINGS), 7: ("sessionAffinity", "string"),
    8: ("loadBalancerIP", "string"), 9: ("loadBalancerSourceRanges", _STRINGS), 10: ("externalName", "string"),
    11: ("externalTrafficPolicy", "string"), 12: ("healthCheckNodePort", "int"),
    13: ("publishNotReadyAddresses", "bool"),
    14: ("sessionAffinityConfig", {1: ("clientIP", {1: ("timeoutSeconds", "int?")})}), 17: ("ipFamilyPolicy", "string"),
    18: ("clusterIPs", _STRINGS), 19: ("ipFamilies", _STRINGS), 20: ("allocateLoadBalancerNodePorts", "bool?"),
    21: ("loadBalancerClass", "string"), 22: ("internalTrafficPolicy", "string"), 23: ("trafficDistribution", "string"),
}
KINDS.update({
    ("v1", "Secret"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "bytes")), 3: ("type", "string"),
                       4: ("stringData", ("map", "string")), 5: ("immutable", "bool?")},
    ("v1", "ServiceAccount"): {1: ("metadata", OBJECT_META), 2: ("secrets", ("repeated", _OBJECT_REFERENCE)),
                               3: ("imagePullSecrets", ("repeated", {1: ("name", "string")})),
                               4: ("automountServiceAccountToken", "bool?")},
    ("v1", "Service"): {1: ("metadata", OBJECT_META), 2: ("spec", _SERVICE_SPEC)},
    ("v1", "ResourceQuota"): {1: ("metadata", OBJECT_META), 2: ("spec", {1: ("hard", RESOURCE_LIST),
                                                                         2: ("scopes", _STRINGS)})},
    ("authentication.k8s.io/v1", "TokenRequest"): {1: ("metadata", OBJECT_META), 2: ("spec", {
        1: ("audiences", _STRINGS), 4: ("expirationSeconds", "int?"),
        3: ("boundObjectRef", {1: ("kind", "string"), 2: ("apiVersion", "string"), 3: ("name", "string"),
                               4: ("uid", "string")})})},
})

# kubectl create priorityclass (k8s.io/api scheduling/v1 generated.proto); value's zero is a value.
KINDS[("scheduling.k8s.io/v1", "PriorityClass")] = {
    1: ("metadata", OBJECT_META), 2: ("value", "int?"), 3: ("globalDefault", "bool"), 4: ("description", "string"),
    5: ("preemptionPolicy", "string")}

# kubectl create ingress (k8s.io/api networking/v1 generated.proto).  A rule embeds
# IngressRuleValue in Go: field 2 of the message, but ``http`` beside ``host`` in JSON ("inline").
_INGRESS_BACKEND: Schema = {
    3: ("resource", {1: ("apiGroup", "string?"), 2: ("kind", "string"), 3: ("name", "string")}),
    4: ("service", {1: ("name", "string"), 2: ("port", {1: ("name", "string"), 2: ("number", "int")})}),
}
_HTTP_INGRESS_PATH: Schema = {1: ("path", "string"), 2: ("backend", _INGRESS_BACKEND), 3: ("pathType", "string?")}
KINDS[("networking.k8s.io/v1", "Ingress")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("defaultBackend", _INGRESS_BACKEND),
    2: ("tls", ("repeated", {1: ("hosts", _STRINGS), 2: ("secretName", "string")})),
    3: ("rules", ("repeated", {1: ("host", "string"), 2: ("ingressRuleValue", ("inline", {
        1: ("http", {1: ("paths", ("repeated", _HTTP_INGRESS_PATH))})}))})),
    4: ("ingressClassName", "string?")})}

# kubectl autoscale (1.37 creates autoscaling/v2 first; k8s.io/api autoscaling/v2 generated.proto).
_CROSS_VERSION_REFERENCE: Schema = {1: ("kind", "string"), 2: ("name", "string"), 3: ("apiVersion", "string")}
_METRIC_IDENTIFIER: Schema = {1: ("name", "string"), 2: ("selector", LABEL_SELECTOR)}
_METRIC_TARGET: Schema = {1: ("type", "string"), 2: ("value", "quantity"), 3: ("averageValue", "quantity"),
                          4: ("averageUtilization", "int?")}
_SCALING_RULES: Schema = {
    1: ("selectPolicy", "string?"), 2: ("policies", ("repeated", {1: ("type", "string"), 2: ("value", "int"),
                                                                  3: ("periodSeconds", "int")})),
    3: ("stabilizationWindowSeconds", "int?"), 4: ("tolerance", "quantity")}
KINDS[("autoscaling/v2", "HorizontalPodAutoscaler")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("scaleTargetRef", _CROSS_VERSION_REFERENCE), 2: ("minReplicas", "int?"), 3: ("maxReplicas", "int"),
    4: ("metrics", ("repeated", {
        1: ("type", "string"),
        2: ("object", {1: ("describedObject", _CROSS_VERSION_REFERENCE), 2: ("target", _METRIC_TARGET),
                       3: ("metric", _METRIC_IDENTIFIER)}),
        3: ("pods", {1: ("metric", _METRIC_IDENTIFIER), 2: ("target", _METRIC_TARGET)}),
        4: ("resource", {1: ("name", "string"), 2: ("target", _METRIC_TARGET)}),
        5: ("external", {1: ("metric", _METRIC_IDENTIFIER), 2: ("target", _METRIC_TARGET)}),
        7: ("containerResource", {1: ("name", "string"), 2: ("target", _METRIC_TARGET), 3: ("container", "string")}),
    })),
    5: ("behavior", {1: ("scaleUp", _SCALING_RULES), 2: ("scaleDown", _SCALING_RULES)})})}


# kubectl certificate approve|deny (k8s.io/api certificates/v1 generated.proto): the request read
# back, its conditions changed.  ``extra`` (a map of ExtraValue messages) is left out: the server
# keeps the stored spec on every update.
KINDS[("certificates.k8s.io/v1", "CertificateSigningRequest")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("request", "bytes"), 2: ("username", "string"), 3: ("uid", "string"), 4: ("groups", _STRINGS),
    5: ("usages", _STRINGS), 7: ("signerName", "string"), 8: ("expirationSeconds", "int?")}), 3: ("status", {
        1: ("conditions", ("repeated", {1: ("type", "string"), 6: ("status", "string"), 2: ("reason", "string"),
                                        3: ("message", "string"), 4: ("lastUpdateTime", "time"),
                                        5: ("lastTransitionTime", "time")})),
        2: ("certificate", "bytes")})}

class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def varint(self) -> int:
        shift = result = 0
        while True:
            if shift >= 64:
                raise BadRequest("proto: integer overflow")
            if self.pos >= len(self.data):
                raise BadRequest("protobuf: truncated varint")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result & ((1 << 64) - 1)
            shift += 7

    def fields(self) -> list[tuple[int, int, Any]]:
        out = []
        while self.pos < len(self.data):
            key = self.varint()
            number, wire = key >> 3, key & 7
            if number <= 0:
                raise BadRequest(f"proto: illegal tag {number} (wire type {wire})")
            if wire == 0:
                out.append((number, wire, self.varint()))
            elif wire == 2:
                size = self.varint()
                if self.pos + size > len(self.data):
                    raise BadRequest("protobuf: truncated field")
                out.append((number, wire, self.data[self.pos:self.pos + size]))
                self.pos += size
            elif wire in (1, 5):  # fixed64 and fixed32: no field we decode has them
                self.pos += 8 if wire == 1 else 4
                if self.pos > len(self.data):
                    raise BadRequest("protobuf: truncated field")
            else:
                raise BadRequest(f"protobuf: unsupported wire type {wire}")
        return out


def _scalar(kind: str, value: Any) -> Any:
    kind = kind.rstrip("?") if isinstance(kind, str) else kind
    if kind == "string":
        return bytes(value).decode()
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "blob":
        return bytes(value)
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value - (1 << 64) if value >= 1 << 63 else value  # two's complement int64
    if kind == "quantity":  # resource.Quantity is a message with one string field
        return _message({1: ("string", "string")}, value).get("string", "")
    if kind == "intstr":
        number = _message(INT_OR_STRING, value)
        return number.get("strVal", "") if number.get("type") == 1 else number.get("intVal", 0)
    if kind == "time":
        stamp = _message(TIME, value)
        if not stamp:  # Go encodes the zero time as an empty message: no timestamp at all
            return None
        return format_rfc3339(datetime.fromtimestamp(stamp.get("seconds", 0), UTC))
    return _message(kind, value)


def _wire_type(kind: Any) -> int:
    """The wire type a field of ``kind`` is encoded with: varint for numbers and booleans,
    length-delimited for everything else (strings, bytes, messages, map entries)."""
    if isinstance(kind, tuple):
        return 2 if kind[0] == "map" else _wire_type(kind[1])
    return 0 if kind in ("int", "bool", "int?", "bool?") else 2


def _message(schema: Schema, data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, value in _Reader(data).fields():
        if number not in schema:
            continue  # fields the server would ignore or set itself
        name, kind = schema[number]
        if wire != _wire_type(kind):
            raise BadRequest(f"proto: wrong wireType = {wire} for field {name}")
        if isinstance(kind, tuple) and kind[0] == "map":
            entry = _message({1: ("key", "string"), 2: ("value", kind[1])}, value)
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "" if kind[1] == "string" else None)
        elif isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(name, []).append(_scalar(kind[1], value))
        elif isinstance(kind, tuple) and kind[0] == "inline":
            out.update(_message(kind[1], value))
        elif value or kind not in ("string", "int", "bool"):
            # Go's generated marshallers write the zero values of non-pointer fields too ("", 0,
            # false); its JSON (omitempty) and defaulting treat them as unset, so they are left
            # out here.  Pointer fields ("int?", "bool?": replicas, suspend, gracePeriodSeconds)
            # are only written when set, and their zero is a value.
            out[name] = _scalar(kind, value)
    return out


def decode_protobuf(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf request body; 415 for kinds we cannot decode."""
    if not body.startswith(MAGIC):
        raise BadRequest("protobuf: missing the k8s envelope")
    try:
        envelope = _message(UNKNOWN, body[len(MAGIC):])
        type_meta = envelope.get("typeMeta") or {}
        key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
        schema = DELETE_OPTIONS if key[1] == "DeleteOptions" else KINDS.get(key)
        if schema is None:
            raise UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"application/json, application/yaml (protobuf only for "
                f"{', '.join(k for _, k in KINDS)}, DeleteOptions)")
        return {"apiVersion": key[0], "kind": key[1], **_message(schema, envelope.get("raw", b""))}
    except (ValueError, IndexError, UnicodeDecodeError, OverflowError, OSError) as exc:  # a time out of range too
        raise BadRequest(f"protobuf: cannot decode the request body: {exc}") from exc
