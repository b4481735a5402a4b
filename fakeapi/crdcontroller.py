"""The CustomResourceDefinition controllers of the apiextensions-apiserver, inside the API server
process: naming (``NamesAccepted``), establishing (``Established``, and serving the custom
resource), and the cleanup finalizer that deletes a deleting CRD's objects before it goes.

Upstream: ``apiextensions-apiserver/pkg/controller/status/naming_controller.go``,
``pkg/controller/establish/establishing_controller.go``, ``pkg/controller/finalizer/
crd_finalizer.go``.  Like the garbage collector it is fed synchronously by commits and does its
work in one asyncio task, through the registry's reads and writes only, so every change it makes
is an ordinary, watchable API write.  Installing a custom resource is adding its kinds to the
registry's kind table; the kinds leave the table when the CRD object is gone (its objects first).
"""

from __future__ import annotations

import logging
from typing import Any

from fakeapi.errors import StatusError
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.models.apiextensions_v1 import CLEANUP_FINALIZER
from fakeapi.registry.crds import resource_types
from fakeapi.registry.rest import Registry
from fakeapi.registry.worker import Worker
from fakeapi.registry.writes import WriteOptions
from fakeapi.store.eventlog import DELETED, Event, StorageKey
from fakeapi.validation.apiextensions import condition, is_true, set_condition

log = logging.getLogger("fakeapi.crd")
GROUP, PLURAL = "apiextensions.k8s.io", "customresourcedefinitions"
MANAGER = "apiextensions-apiserver"
NAME_FIELDS = (("plural", "PluralConflict"), ("singular", "SingularConflict"))


def accept_names(requested: dict[str, Any], accepted: dict[str, Any],
                 others: list[dict[str, Any]]) -> tuple[dict[str, Any], str, str]:
    """Upstream's ``calculateNamesAndConditions``: the names to accept given the accepted names of
    the other CRDs of the group; returns (accepted names, reason, message), reason "NoConflicts"
    when every requested name is free.  Conflicting names keep their previously accepted value."""
    used = {n for o in others for n in (o.get("plural"), o.get("singular"), *(o.get("shortNames") or [])) if n}
    kinds = {n for o in others for n in (o.get("kind"), o.get("listKind")) if n}
    out = dict(requested)
    reason = message = ""
    for key, conflict in (*NAME_FIELDS, ("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        value = requested.get(key)
        taken = kinds if key in ("kind", "listKind") else used
        if value and value in taken:
            out[key] = accepted.get(key, "")
            if not reason:
                reason, message = conflict, f'"{value}" is already in use'
    clashing = [s for s in requested.get("shortNames") or [] if s in used]
    if clashing:
        out["shortNames"] = accepted.get("shortNames") or []
        if not reason:
            reason = "ShortNamesConflict"
            message = ", ".join(f'"{s}"' for s in clashing) + " is already in use"
    return out, reason or "NoConflicts", message or "no conflicts found"


class CRDController:
    """Names, establishes, serves and finalizes the CRDs of one registry."""

    def __init__(self, registry: Registry) -> None:
        self.kinds = registry.kinds
        self.reads = registry.reads
        self.writes = registry.writes
        crds = registry.kinds.by_plural(GROUP, PLURAL)
        assert crds is not None
        self.crds = crds
        # CRD name -> (group, plural) served, and the (spec, accepted names) it was built from.
        self._served: dict[str, tuple[tuple[str, str], str]] = {}
        self._storage: dict[StorageKey, str] = {}
        self._worker: Worker[str] = Worker("fakeapi-crd", self.sync, log)
        self._enqueue = self._worker.enqueue
        self.reads.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.storage == self.crds.storage_key:
            self._enqueue(event.key[1])
            if event.type == DELETED or event.prev is None:
                group = (event.obj.get("spec") or {}).get("group")
                for other in self.reads.items(self.crds):  # a freed or taken name concerns the group
                    if (other.get("spec") or {}).get("group") == group:
                        self._enqueue(other["metadata"]["name"])
        elif event.type == DELETED and event.storage in self._storage:
            self._enqueue(self._storage[event.storage])  # a terminating CRD's objects are going

    # -- the worker --------------------------------------------------------------------------------

    def start(self) -> None:
        self._worker.start()

    async def stop(self) -> None:
        await self._worker.stop()

    def sync(self, name: str) -> None:
        """Bring one CRD's conditions and served kinds up to date."""
        crd = self.reads.find(self.crds, "", name)
        if crd is None:
            self._uninstall(name)
            return
        if crd["metadata"].get("deletionTimestamp"):
            self._finalize(crd)
            return
        crd = self._update_names(crd)
        if is_true(crd, "Established"):
            self._install(crd)

    def _update_names(self, crd: dict[str, Any]) -> dict[str, Any]:
        name, group = crd["metadata"]["name"], crd["spec"]["group"]
        others = [(o.get("status") or {}).get("acceptedNames") or {} for o in self.reads.items(self.crds)
                  if o["metadata"]["name"] != name and (o.get("spec") or {}).get("group") == group]
        status = crd.get("status") or {}
        accepted, reason, message = accept_names(crd["spec"]["names"], status.get("acceptedNames") or {}, others)
        new = deep_copy(crd)
        new.setdefault("status", {})["acceptedNames"] = accepted
        if reason == "NoConflicts":
            set_condition(new, "NamesAccepted", "True", reason, message)
            if not is_true(new, "Established"):
                set_condition(new, "Established", "True", "InitialNamesAccepted",
                              "the initial names have been accepted")
        else:
            set_condition(new, "NamesAccepted", "False", reason, message)
            if condition(new, "Established") is None:
                set_condition(new, "Established", "False", "NotAccepted", "not all names are accepted")
        return self._write_status(crd, new)

    def _write_status(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        if new == old:
            return old
        updated, _ = self.writes.update(self.crds, "", old["metadata"]["name"], new,
                                        WriteOptions(manager=MANAGER, field_validation="Ignore", subresource="status"))
        return updated

    # -- serving ---------------------------------------------------------------------------------

    def _install(self, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        accepted = crd["status"]["acceptedNames"]
        key = (crd["spec"]["group"], accepted["plural"])
        built_from = repr((crd["spec"], accepted))
        if self._served.get(name) == (key, built_from):
            return
        kinds = resource_types(crd)
        self.kinds.install(*key, kinds)
        self._served[name] = (key, built_from)
        if kinds:
            self._storage[kinds[0].storage_key] = name

    def _uninstall(self, name: str) -> None:
        served = self._served.pop(name, None)
        if served is not None:
            group, plural = served[0]
            self.kinds.uninstall(group, plural)
            self._storage.pop((group, plural), None)

    # -- deletion (the cleanup finalizer) -----------------------------------------------------

    def _finalize(self, crd: dict[str, Any]) -> None:
        if CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        name = crd["metadata"]["name"]
        served = self._served.get(name)
        if served is None or not is_true(crd, "Established"):
            done = ("False", "NeverEstablished", "resource was never established")
        else:
            new = deep_copy(crd)
            set_condition(new, "Terminating", "True", "InstanceDeletionInProgress",
                          "CustomResource deletion is in progress")
            crd = self._write_status(crd, new)
            if self._delete_instances(*served[0]):
                return  # the DELETED events of the instances bring the CRD back here
            done = ("False", "InstanceDeletionCompleted", "removed all instances")
        new = deep_copy(crd)
        set_condition(new, "Terminating", *done)
        crd = self._write_status(crd, new)
        new = deep_copy(crd)
        new["metadata"]["finalizers"] = [f for f in new["metadata"]["finalizers"] if f != CLEANUP_FINALIZER]
        self.writes.update(self.crds, "", name, new, WriteOptions(manager=MANAGER, field_validation="Ignore"))

    def _delete_instances(self, group: str, plural: str) -> int:
        """Delete every object of the resource (finalizers honoured); returns how many remain."""
        rt = self.kinds.by_plural(group, plural)
        if rt is None:
            return 0
        remaining = self.reads.items(rt)
        for obj in remaining:
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                self.writes.delete(rt, meta.get("namespace", ""), meta["name"], {"propagationPolicy": "Background"})
            except StatusError as exc:
                log.debug("crd: deleting %s/%s: %s", plural, meta["name"], exc)
        return len(self.reads.items(rt))
