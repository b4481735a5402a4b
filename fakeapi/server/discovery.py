"""Legacy discovery documents (``/api``, ``/apis``, ``/apis/{g}``, ``/api/v1``, ``/apis/{g}/{v}``).

Every client tested falls back from aggregated discovery to these, so they are all we serve.
"""

from __future__ import annotations

from typing import Any

from fakeapi.config import KUBERNETES_VERSION
from fakeapi.registry.rest import Registry


def api_versions() -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    vs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": vs, "preferredVersion": vs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group(g, vs) for g, vs in registry.kinds.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.kinds.group_versions().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)}


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    kinds = [k for k in registry.kinds if k.group == group and k.version == version]
    if not kinds:
        return None
    resources: list[dict[str, Any]] = []
    for k in kinds:
        entry: dict[str, Any] = {"name": k.plural, "singularName": k.singular, "namespaced": k.namespaced,
                                 "kind": k.kind, "verbs": list(k.verbs)}
        if k.short_names:
            entry["shortNames"] = list(k.short_names)
        if k.categories:
            entry["categories"] = list(k.categories)
        resources.append(entry)
        for sub in sorted(k.subresources, key=lambda s: s.name):
            sub_entry = {"name": f"{k.plural}/{sub.name}", "singularName": "", "namespaced": k.namespaced,
                         "kind": sub.kind or k.kind, "verbs": list(sub.verbs)}
            if sub.api_version:  # a view in another group/version (autoscaling/v1 Scale)
                sub_group, _, sub_version = sub.api_version.rpartition("/")
                sub_entry.update({"group": sub_group, "version": sub_version})
            resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def version_info() -> dict[str, Any]:
    major, minor, patch = KUBERNETES_VERSION
    return {"major": str(major), "minor": str(minor), "emulationMajor": str(major),
            "emulationMinor": str(minor), "minCompatibilityMajor": str(major),
            "minCompatibilityMinor": str(minor - 1), "gitVersion": f"v{major}.{minor}.{patch}",
            "gitCommit": "fakeapi", "gitTreeState": "clean", "buildDate": "2026-11-30T00:00:00Z",
            "goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64"}
