"""Drift test: every typed model against the upstream OpenAPI schemas shipped by ``kubernetes-validate``.

The schemas come from Kubernetes' own OpenAPI (``_definitions.json``, ``$defs`` keyed by
``io.k8s.api.<group>.<version>.<Kind>``).  Walking a model and its upstream definition side by
side, recursively by JSON name, reports:

- ``not upstream``: a model field upstream does not have (a typo, or an invented field);
- ``missing``: an upstream field the model lacks (the decoder would call it unknown);
- ``shape``: list vs map vs struct vs scalar, or a scalar's Go type (int32 vs int64, Quantity);
- ``list type``: ``x-kubernetes-list-type``/``-map-keys`` (server-side apply merges by them);
- ``patch strategy``: ``x-kubernetes-patch-strategy``/``-merge-key`` (strategic merge patch merges
  by them).  ``fakeapi.models.listtypes`` derives both from the models, so this keeps SSA and
  SMP faithful too.

Deliberate differences are allow-listed below with the reason, and an unused entry fails too, so
the lists shrink when the models catch up.

Versions: the served release is 1.37, which has ``scheduling.k8s.io`` v1beta1 (and v1alpha3) but
no v1alpha1; the 1.35 Workload (inline ``podGroups[]``) we serve as v1alpha1 is compared with the
1.35 schemas (1.36 moved it to v1alpha2).  Pod ``spec.workloadRef`` is also 1.35-only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from pydantic import BaseModel, create_model

from fakeapi.models import MODELS
from fakeapi.models.base import ATOMIC, Int32, KubeModel, opt, patch_merge
from fakeapi.models.schema import ListOf, MapOf, Node, Opaque, Scalar, Struct, struct_fields

SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
SERVED = "v1.37.0-local"
OLDEST_WITH = {("scheduling.k8s.io", "v1alpha1"): "v1.35.0-local"}
"""Group versions no longer in the served release, compared with the last release that had them."""

OLDER_FIELDS = {
    # Pod.spec.workloadRef{name, podGroup, podGroupReplicaKey}: the 1.35 field, replaced by
    # spec.schedulingGroup in 1.36; served for the 1.35 / KEP-5729 draft shape.
    "v1/Pod.spec.workloadRef": "v1.35.0-local",
}
"""Fields removed upstream but still served: compared with the release that last had them."""

EXTENSIONS = {
    "v1alpha1/Workload.spec.podGroups[].resourceClaims":
        "KEP-5729 draft: claims per pod-group instance (with constraints[].matchAttribute), never shipped",
}
"""Model fields that exist in no upstream release."""

_CONTAINER_OPEN = ("envFrom[]", "env[].valueFrom", "resizePolicy[]", "restartPolicyRules[]", "volumeDevices[]",
                   "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "securityContext")
OPEN = {
    # Pod: everything the scheduler, kubelet emulation and DRA never read stays opaque JSON, so
    # manifests round-trip without a full core/v1 model (strict field checks stop here).
    **{f"v1/Pod.spec.{c}[].{f}": "container detail fakeapi never reads"
       for c in ("containers", "initContainers", "ephemeralContainers") for f in _CONTAINER_OPEN},
    **{f"v1/Pod.spec.{f}": "pod detail fakeapi never reads"
       for f in ("securityContext", "imagePullSecrets[]", "hostAliases[]",
                 "dnsConfig", "topologySpreadConstraints[]", "os", "evictionResponders[]")},
    "v1/Pod.spec.affinity.podAffinity": "inter-pod affinity is not evaluated",
    "v1/Pod.spec.affinity.podAntiAffinity": "inter-pod anti-affinity is not evaluated",
    **{f"v1/Pod.status.{f}": "kubelet-reported detail fakeapi does not emulate"
       for f in ("initContainerStatuses[]", "containerStatuses[]", "ephemeralContainerStatuses[]",
                 "extendedResourceClaimStatus", "volumeHealth[]", "nodeAllocatableResourceClaimStatuses[]")},
    **{f"v1/Node.spec.{f}": "deprecated or alpha node field, stored verbatim"
       for f in ("configSource", "podPreemptionPolicy")},
    **{f"v1/Node.status.{f}": "kubelet-reported detail fakeapi does not emulate"
       for f in ("daemonEndpoints", "images[]", "volumesAttached[]", "config", "runtimeHandlers[]", "features")},
}
"""Model fields kept as opaque JSON where upstream has a typed struct."""

PARTIAL = {
    "v1/Pod.spec.volumes[]": "only the name is typed; the volume source is kept verbatim",
    **{f"v1/Pod.spec.{c}[].volumeMounts[]": "mount options beyond path/subPath kept verbatim"
       for c in ("containers", "initContainers", "ephemeralContainers")},
    "v1/Node.status.nodeInfo": "newer kubelet-reported fields kept verbatim",
    "v1/PersistentVolume.spec": "the volume source (hostPath, nfs, csi, ...) is kept verbatim",
}
"""Model structs that keep unknown keys (``extra="allow"``): upstream fields they lack are fine."""

# The Go type behind each scalar marker, as upstream OpenAPI writes it: (type, format) or the
# name of the definition upstream refers to.
UPSTREAM_SCALAR = {
    "string": ("string", None), "[]byte": ("string", "byte"), "bool": ("boolean", None),
    "float64": ("number", "double"),
    "int32": ("integer", "int32"), "int64": ("integer", "int64"),
    "v1.Time": ("string", "date-time"), "v1.MicroTime": ("string", "date-time"),
    "resource.Quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "intstr.IntOrString": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
}
UPSTREAM_OPAQUE = {"io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"}
MARKERS = {
    "list type": ("x-kubernetes-list-type", "x-kubernetes-list-map-keys"),
    "patch strategy": ("x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key"),
}
"""Kind of drift -> the OpenAPI extensions a model field must carry exactly as upstream does."""


@dataclass(frozen=True)
class Drift:
    """One difference between a model and upstream at a JSON path."""

    path: str
    what: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path}: {self.what}" + (f" ({self.detail})" if self.detail else "")


@cache
def definitions(release: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / release / "_definitions.json").read_text())["$defs"]


def definition_name(group: str, version: str, kind: str) -> str:
    if group == "apiextensions.k8s.io":  # defined in apiextensions-apiserver, not k8s.io/api
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    return f"io.k8s.api.{group.split('.')[0] or 'core'}.{version}.{kind}"


def resolve(defs: dict[str, Any], schema: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Follow ``$ref``s; returns the last definition name (None for an inline schema) and the schema."""
    name = None
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = defs[name]
    return name, schema


def json_type(schema: dict[str, Any]) -> str | None:
    kinds = schema.get("type")
    if isinstance(kinds, list):
        kinds = next((k for k in kinds if k != "null"), None)
    return kinds


def upstream_shape(defs: dict[str, Any], schema: dict[str, Any]) -> str:
    name, schema = resolve(defs, schema)
    if "properties" in schema:
        return "struct"
    kind = json_type(schema)
    if kind == "array":
        return "list"
    if kind == "object":
        return "map" if "additionalProperties" in schema else "object"
    return f"scalar {name or (kind, schema.get('format'))}"


def is_open(node: Node) -> bool:
    """Opaque JSON: ``Any``/RawExtension or ``dict[str, Any]``."""
    return isinstance(node, Opaque) or (isinstance(node, MapOf) and isinstance(node.value, Opaque))


class Walker:
    """Compares one model tree with one upstream definition tree, collecting :class:`Drift`s."""

    def __init__(self) -> None:
        self.drifts: list[Drift] = []
        self._ancestors: list[tuple[type[BaseModel], str | None]] = []

    def struct(self, model: type[BaseModel], defs: dict[str, Any], schema: dict[str, Any], path: str) -> None:
        name, schema = resolve(defs, schema)
        if (model, name) in self._ancestors:  # recursive types (composite pod group templates)
            return
        self._ancestors.append((model, name))
        self.fields(model, defs, name, schema, path)
        self._ancestors.pop()

    def fields(self, model: type[BaseModel], defs: dict[str, Any], name: str | None, schema: dict[str, Any],
               path: str) -> None:
        upstream = schema.get("properties", {})
        fields = struct_fields(model)
        for key, spec in fields.items():
            field_path = f"{path}.{key}"
            older_release = OLDER_FIELDS.get(POD_TEMPLATES.sub("v1/Pod.spec.", field_path))
            if older_release:
                older = definitions(older_release)
                self.field(spec.node, spec.markers, older, older[name]["properties"][key], field_path)
            elif key not in upstream:
                self.drifts.append(Drift(field_path, "not upstream"))
            else:
                self.field(spec.node, spec.markers, defs, upstream[key], field_path)
        for key in upstream.keys() - fields.keys():
            what = "missing" if model.model_config.get("extra") != "allow" else "missing in partial struct"
            self.drifts.append(Drift(f"{path}.{key}", what))

    def field(self, node: Node, markers: dict[str, Any], defs: dict[str, Any], schema: dict[str, Any],
              path: str) -> None:
        resolved = resolve(defs, schema)[1]
        for what, names in MARKERS.items():
            for marker in names:
                if markers.get(marker) != resolved.get(marker):
                    self.drifts.append(Drift(path, what, f"{marker}: ours {markers.get(marker)}, "
                                                         f"upstream {resolved.get(marker)}"))
        self.value(node, defs, schema, path)

    def value(self, node: Node, defs: dict[str, Any], schema: dict[str, Any], path: str) -> None:
        shape = upstream_shape(defs, schema)
        name, resolved = resolve(defs, schema)
        if is_open(node):
            # An upstream struct without fields (BasicSchedulingPolicy) is not opaque: strict
            # decoding rejects every key in it.
            if shape == "struct" or (shape == "object" and name not in UPSTREAM_OPAQUE):
                self.drifts.append(Drift(path, "open JSON for a typed struct", str(name)))
            return
        if isinstance(node, ListOf) and shape == "list":
            self.value(node.item, defs, resolved["items"], path + "[]")
        elif isinstance(node, MapOf) and shape == "map":
            self.value(node.value, defs, resolved["additionalProperties"], path + "{}")
        elif isinstance(node, Struct) and shape in ("struct", "object"):
            self.struct(node.model, defs, schema, path)
        elif isinstance(node, Scalar) and shape.startswith("scalar"):
            expected = UPSTREAM_SCALAR.get(node.go)
            actual = name if "type" not in resolved else (json_type(resolved), resolved.get("format"))
            if expected != actual:
                self.drifts.append(Drift(path, "shape", f"ours {node.go}, upstream {actual}"))
        else:
            self.drifts.append(Drift(path, "shape", f"ours {type(node).__name__}, upstream {shape}"))


def model_drift(group: str, version: str, kind: str) -> list[Drift]:
    defs = definitions(OLDEST_WITH.get((group, version), SERVED))
    walker = Walker()
    walker.struct(MODELS[(group, version, kind)], defs, defs[definition_name(group, version, kind)],
                  f"{version}/{kind}")
    return walker.drifts


# Workload pod templates carry the full pod spec: what is allowed for a pod's spec is allowed there.
POD_TEMPLATES = re.compile(r"^v1/(Deployment|ReplicaSet|StatefulSet|DaemonSet|Job)\.spec\.template\.spec\."
                           r"|^v1/CronJob\.spec\.jobTemplate\.spec\.template\.spec\."
                           r"|^v1/PodTemplate\.template\.spec\.")
OPEN["v1/StatefulSet.spec.volumeClaimTemplates[]"] = "PersistentVolumeClaims are not served; validation refuses them"


def allowed(drift: Drift) -> bool:
    drift = Drift(POD_TEMPLATES.sub("v1/Pod.spec.", drift.path), drift.what, drift.detail)
    if drift.what == "not upstream":
        return drift.path in EXTENSIONS
    if drift.what == "open JSON for a typed struct":
        return drift.path in OPEN
    if drift.what == "missing in partial struct":
        return drift.path.rsplit(".", 1)[0] in PARTIAL
    return False


@cache
def all_drift() -> tuple[Drift, ...]:
    return tuple(d for gvk in MODELS for d in model_drift(*gvk))


@pytest.mark.parametrize("gvk", sorted(MODELS), ids=lambda g: f"{g[1]}/{g[2]}")
def test_model_matches_upstream(gvk: tuple[str, str, str]) -> None:
    unexpected = [str(d) for d in model_drift(*gvk) if not allowed(d)]
    assert unexpected == []


def test_every_served_kind_has_an_upstream_definition() -> None:
    missing = [gvk for gvk in MODELS
               if definition_name(*gvk) not in definitions(OLDEST_WITH.get(gvk[:2], SERVED))]
    assert missing == []


def test_v1alpha1_workload_is_gone_from_the_served_release() -> None:
    # If upstream ever brings it back, compare with the served release instead of 1.35.
    assert definition_name("scheduling.k8s.io", "v1alpha1", "Workload") not in definitions(SERVED)
    assert "workloadRef" not in definitions(SERVED)["io.k8s.api.core.v1.PodSpec"]["properties"]


def test_allow_lists_have_no_stale_entries() -> None:
    drifts = all_drift()
    used = ({d.path for d in drifts if allowed(d)}
            | {d.path.rsplit(".", 1)[0] for d in drifts if d.what == "missing in partial struct"})
    stale = sorted((EXTENSIONS.keys() | OPEN.keys() | PARTIAL.keys()) - used)
    assert stale == []


@pytest.mark.parametrize(("model_json", "upstream", "expected"), [
    ({"a": "string"}, {"properties": {"a": {"type": "string"}}}, []),
    ({"a": "string", "b": "string"}, {"properties": {"a": {"type": "string"}}}, ["t.b: not upstream"]),
    ({}, {"properties": {"a": {"type": "string"}}}, ["t.a: missing"]),
    ({"a": "int32"}, {"properties": {"a": {"type": ["integer", "null"], "format": "int64"}}},
     ["t.a: shape (ours int32, upstream ('integer', 'int64'))"]),
    ({"a": "list"}, {"properties": {"a": {"type": "array", "items": {"type": "string"},
                                          "x-kubernetes-list-type": "set"}}},
     ["t.a: list type (x-kubernetes-list-type: ours atomic, upstream set)"]),
    ({"a": "list"}, {"properties": {"a": {"type": "array", "items": {"type": "string"},
                                          "x-kubernetes-list-type": "atomic",
                                          "x-kubernetes-patch-strategy": "merge"}}},
     ["t.a: patch strategy (x-kubernetes-patch-strategy: ours None, upstream merge)"]),
    ({"a": "keyed"}, {"properties": {"a": {"type": "array", "items": {"type": "string"},
                                           "x-kubernetes-list-type": "atomic",
                                           "x-kubernetes-patch-strategy": "merge",
                                           "x-kubernetes-patch-merge-key": "ip"}}},
     ["t.a: patch strategy (x-kubernetes-patch-merge-key: ours name, upstream ip)"]),
], ids=["same", "extra-field", "missing-field", "int-width", "list-type", "patch-strategy", "patch-merge-key"])
def test_walker_reports_each_kind_of_drift(model_json: dict[str, str], upstream: dict[str, Any],
                                           expected: list[str]) -> None:
    # The detector itself must be able to fail: a tiny model against a hand-written schema.
    types = {"string": (str | None, opt("s")), "int32": (Int32 | None, opt("i")),
             "list": (list[str] | None, opt("l", markers=ATOMIC)),
             "keyed": (list[str] | None, opt("k", markers=ATOMIC | patch_merge("name")))}
    model = create_model("Probe", __base__=KubeModel, **{k: types[v] for k, v in model_json.items()})
    walker = Walker()
    walker.struct(model, {}, upstream, "t")
    assert [str(d) for d in walker.drifts] == expected


def test_walker_flags_open_json_for_an_empty_upstream_struct() -> None:
    # Upstream's BasicSchedulingPolicy has no fields, but strict decoding still rejects keys in it.
    defs = {"Empty": {"type": "object"}, "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"}}
    upstream = {"properties": {"basic": {"$ref": "#/$defs/Empty"},
                               "raw": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension"}}}
    model = create_model("Probe", __base__=KubeModel, basic=(dict[str, Any] | None, opt("b")),
                         raw=(dict[str, Any] | None, opt("r")))
    walker = Walker()
    walker.struct(model, defs, upstream, "t")
    assert [str(d) for d in walker.drifts] == ["t.basic: open JSON for a typed struct (Empty)"]
