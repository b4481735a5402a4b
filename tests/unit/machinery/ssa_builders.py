"""Objects and calls shared by the managedFields and server-side apply tests."""

from __future__ import annotations

import copy

from fakeapi.machinery.apply import server_side_apply
from fakeapi.machinery.managedfields import track_update
from fakeapi.models.listtypes import list_types_for

POD = list_types_for("", "Pod")
CLAIM = list_types_for("resource.k8s.io", "ResourceClaim")


def container(name: str, **fields: object) -> dict:
    return {"name": name, **fields}


def pod(*containers: dict, labels: dict | None = None, **spec: object) -> dict:
    metadata: dict = {"name": "p", "namespace": "default"}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": list(containers), **spec}}


def apply(live: dict | None, config: dict, manager: str = "a", *, force: bool = False, now: str = "T1",
          subresource: str = "", types=POD) -> dict:
    return server_side_apply(live, config, manager=manager, force=force, api_version="v1", types=types, now=now,
                             subresource=subresource)


def update(old: dict | None, new: dict, manager: str = "u", *, now: str = "T1", subresource: str = "") -> dict:
    return track_update(old, new, manager=manager, api_version="v1", types=POD, now=now, subresource=subresource)


def managers(obj: dict) -> list[tuple[str, str, str]]:
    return [(m["manager"], m["operation"], m.get("subresource", ""))
            for m in obj["metadata"].get("managedFields", [])]


def owned(obj: dict, manager: str, operation: str = "Apply") -> dict:
    entries = [m for m in obj["metadata"]["managedFields"]
               if m["manager"] == manager and m["operation"] == operation]
    assert len(entries) == 1, obj["metadata"]["managedFields"]
    return entries[0]["fieldsV1"]


def without_managed_fields(obj: dict) -> dict:
    body = copy.deepcopy(obj)
    body["metadata"].pop("managedFields", None)
    return body


def with_image(obj: dict, name: str, image: str) -> dict:
    changed = copy.deepcopy(obj)
    next(c for c in changed["spec"]["containers"] if c["name"] == name)["image"] = image
    return changed


C_KEY = 'k:{"name":"c"}'
