"""ControllerRevisions for StatefulSets and DaemonSets (``pkg/controller/history``).

A revision snapshots a pod template as the strategic-merge patch upstream stores
(``{"spec": {"template": {..., "$patch": "replace"}}}``), is named ``<owner>-<hash>`` and labelled
with the hash; an existing revision with equal data is reused (its number raised when it is not
the newest), a different one under the same name is a collision (``status.collisionCount``).
"""

from __future__ import annotations

import copy
from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.controllers.podcontrol import CONTROLLER_REVISIONS
from fakeapi.scheduler.rules.workloads import controller_ref, template_hash

from fakeapi.errors import AlreadyExists, NotFound

HASH_LABEL = "controller.kubernetes.io/hash"
REVISION_LABEL = "controller-revision-hash"


def revision_data(template: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {**copy.deepcopy(template), "$patch": "replace"}}}


def template_of(revision: dict[str, Any]) -> dict[str, Any]:
    """The pod template a revision holds."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


async def ensure_revision(api: ApiClient, owner: dict[str, Any], revisions: list[dict[str, Any]],
                          collision_count: int | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The revision of the owner's current template (created or reused) and the revisions after."""
    template = (owner.get("spec") or {}).get("template") or {}
    data = revision_data(template)
    newest = max((int(r.get("revision") or 0) for r in revisions), default=0)
    for rev in revisions:
        if rev.get("data") == data:
            if int(rev.get("revision") or 0) < newest:
                meta = rev["metadata"]
                rev = await api.patch(CONTROLLER_REVISIONS, meta["namespace"], meta["name"], {"revision": newest + 1})
            return rev, [r if r["metadata"]["name"] != rev["metadata"]["name"] else rev for r in revisions]
    digest = template_hash(template, collision_count)
    meta = owner["metadata"]
    labels = {**((template.get("metadata") or {}).get("labels") or {}), HASH_LABEL: digest}
    body = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"{meta['name'][:223]}-{digest}", "namespace": meta["namespace"], "labels": labels,
                         "ownerReferences": [controller_ref(owner)]},
            "data": data, "revision": newest + 1}
    try:
        created = await api.create(CONTROLLER_REVISIONS, meta["namespace"], body)
    except AlreadyExists:
        existing = await api.get(CONTROLLER_REVISIONS, meta["namespace"], body["metadata"]["name"])
        if existing.get("data") != data:
            raise CollisionError from None
        created = existing
    return created, [*revisions, created]


class CollisionError(Exception):
    """A revision of another template holds the name: bump ``collisionCount`` and retry."""


async def truncate_history(api: ApiClient, revisions: list[dict[str, Any]], keep: set[str], limit: int) -> None:
    """Delete the oldest revisions beyond ``limit`` that no pod or status still names."""
    removable = sorted((r for r in revisions if r["metadata"]["name"] not in keep),
                       key=lambda r: int(r.get("revision") or 0))
    for rev in removable[:max(len(removable) - limit, 0)]:
        try:
            await api.delete(CONTROLLER_REVISIONS, rev["metadata"]["namespace"], rev["metadata"]["name"])
        except NotFound:
            pass
