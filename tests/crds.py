"""CustomResourceDefinition builders shared by the CRD tests (integration, kubectl, client, operator)."""

from __future__ import annotations

from typing import Any

GROUP = "stable.example.com"
CRONTABS = f"/apis/{GROUP}/v1/namespaces/default/crontabs"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

CRONTAB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A periodic job.",
    "properties": {
        "spec": {"type": "object", "description": "What to run and when.", "properties": {
            "cronSpec": {"type": "string", "pattern": "^[0-9*/ ,-]+$", "description": "When to run."},
            "image": {"type": "string", "default": "busybox", "description": "The image to run."},
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {
                          "name": {"type": "string"}, "port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        }, "x-kubernetes-validations": [
            {"rule": "!has(self.replicas) || self.replicas <= 5 || self.image != 'busybox'",
             "message": "busybox runs at most 5 replicas"},
            {"rule": "!has(oldSelf.color) || self.color == oldSelf.color", "message": "color is immutable"}]},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "selector": {"type": "string"}, "phase": {"type": "string"}}},
    },
}


def crontab_crd(*, scope: str = "Namespaced", versions: list[dict[str, Any]] | None = None,
                plural: str = "crontabs", kind: str = "CronTab", group: str = GROUP,
                schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CronTab CRD of upstream's documentation, with status, scale, columns and selectable fields."""
    version = {
        "name": "v1", "served": True, "storage": True,
        "schema": {"openAPIV3Schema": schema or CRONTAB_SCHEMA},
        "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                 "statusReplicasPath": ".status.replicas",
                                                 "labelSelectorPath": ".status.selector"}},
        "additionalPrinterColumns": [
            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
        "selectableFields": [{"jsonPath": ".spec.color"}],
    }
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "shortNames": ["ct"],
                               "categories": ["all"]},
                     "versions": versions or [version]}}


def crontab(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": name},
            "spec": {"cronSpec": "* * * * */5", **spec}}


def established(crd: dict[str, Any] | None) -> bool:
    conditions = ((crd or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
