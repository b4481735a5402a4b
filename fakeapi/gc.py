"""Garbage collection by ownerReferences and namespace finalization (kube-controller-manager's
``garbagecollector`` and ``namespace`` controllers), running inside the API server process.

It keeps two indexes fed synchronously by commits (uid → object, owner uid → dependents) and
does the work in one asyncio task.  It depends on the registry's public read path and write
pipeline only (nothing in the registry or store knows it), so every deletion it makes is an
ordinary, watchable API write.

- Background: once an owner is gone, dependents whose owners are all gone are deleted; a
  dependent with another live owner only loses the dangling reference.
- Foreground: the owner keeps the ``foregroundDeletion`` finalizer until no dependent with
  ``blockOwnerDeletion: true`` remains; its dependents are deleted first.
- Orphan: the ``orphan`` finalizer makes the collector strip the owner's references from its
  dependents, then lets the owner go.
- A deleting namespace has its contents deleted, then its ``kubernetes`` finalizer removed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from fakeapi.errors import StatusError
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.models.meta import FINALIZER_FOREGROUND, FINALIZER_ORPHAN
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry
from fakeapi.registry.subresources import finalize_namespace
from fakeapi.registry.worker import Worker
from fakeapi.registry.writes import WriteOptions
from fakeapi.store.eventlog import ADDED, DELETED, Event, ObjectKey, StorageKey

log = logging.getLogger("fakeapi.gc")
MANAGER = "generic-garbage-collector"
Ref = tuple[StorageKey, ObjectKey]
WorkItem = tuple[str, str]  # ("uid", uid) | ("namespace", name)


def _uid(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("uid", "")


_NO_OWNERS: frozenset[str] = frozenset()


def _owner_uids(obj: dict[str, Any] | None) -> frozenset[str]:
    # Most objects have no owners: every commit asks up to three times, so no set is built then.
    refs = (obj.get("metadata") or {}).get("ownerReferences") if obj else None
    return frozenset(r.get("uid", "") for r in refs) if refs else _NO_OWNERS


class GarbageCollector:
    """Owner-reference GC and namespace cleanup over one registry."""

    def __init__(self, registry: Registry) -> None:
        self.kinds = registry.kinds
        self.reads = registry.reads
        self.writes = registry.writes
        self._objects: dict[str, Ref] = {}
        self._dependents: dict[str, set[Ref]] = {}
        self._worker: Worker[WorkItem] = Worker("fakeapi-gc", self._work, log)
        self._enqueue = self._worker.enqueue
        self.reads.subscribe(self._on_event)

    # -- indexes, fed at commit time -------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        obj, ref, prev = event.obj, (event.storage, event.key), event.prev
        meta = obj.get("metadata") or {}
        uid = meta.get("uid", "")
        if event.type == ADDED and not meta.get("ownerReferences"):
            # Most commits: a new object without owners (created, so not deleting) is only indexed.
            self._objects[uid] = ref
            return
        if event.type == DELETED:
            for owner in _owner_uids(prev):
                self._dependents.get(owner, set()).discard(ref)
            self._objects.pop(uid, None)
            self._enqueue(("uid", uid))  # its dependents may now be orphans
            for owner in _owner_uids(obj):
                self._dependents.get(owner, set()).discard(ref)
                self._enqueue(("uid", owner))  # a foreground owner may be unblocked
        else:
            refs = meta.get("ownerReferences")
            # An update that keeps the ownerReferences of an object indexed already (most writes)
            # leaves both indexes as they are: every event since it was indexed was seen here.
            if (prev is None or refs != (prev.get("metadata") or {}).get("ownerReferences")
                    or self._objects.get(uid) != ref):
                for owner in _owner_uids(prev) - _owner_uids(obj):
                    self._dependents.get(owner, set()).discard(ref)
                self._objects[uid] = ref
                for owner in _owner_uids(obj):
                    self._dependents.setdefault(owner, set()).add(ref)
            if refs and any(self._target(obj, r) is None for r in refs):
                self._enqueue(("uid", uid))
            if meta.get("deletionTimestamp") and {FINALIZER_ORPHAN, FINALIZER_FOREGROUND} & set(
                    meta.get("finalizers") or []):
                self._enqueue(("uid", uid))
        if event.storage == self.kinds.namespaces.storage_key:
            if event.type != DELETED and (obj.get("metadata") or {}).get("deletionTimestamp"):
                self._enqueue(("namespace", event.key[1]))
        elif event.type == DELETED and event.key[0]:
            ns = self.reads.find(self.kinds.namespaces, "", event.key[0])
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                self._enqueue(("namespace", event.key[0]))

    # -- the worker ------------------------------------------------------------------------------

    def start(self) -> None:
        self._worker.start()

    async def stop(self) -> None:
        await self._worker.stop()

    def _work(self, item: WorkItem) -> None:
        if item[0] == "namespace":
            self._finalize_namespace(item[1])
        else:
            self._process(item[1])

    def _get(self, ref: Ref) -> dict[str, Any] | None:
        storage, (namespace, name) = ref
        return self.reads.find(self.kinds.for_storage(storage), namespace, name)

    def _live_owner(self, uid: str) -> dict[str, Any] | None:
        ref = self._objects.get(uid)
        return self._get(ref) if ref else None

    def _target(self, dependent: dict[str, Any], owner_ref: dict[str, Any]) -> Ref | None:
        """The object an ownerReference of ``dependent`` names, found as upstream's collector finds
        it (by kind, name and, for a namespaced kind, the dependent's own namespace, then checking
        the uid); None if there is none, so an owner in another namespace counts as absent."""
        ref = self._objects.get(_ref_uid(owner_ref))
        if ref is None:
            return None
        storage, (namespace, name) = ref
        rt = self.kinds.for_storage(storage)
        expected = (_namespace_of(dependent) if rt.namespaced else "", owner_ref.get("name"), owner_ref.get("kind"),
                    str(owner_ref.get("apiVersion") or "").rpartition("/")[0])
        return ref if (namespace, name, rt.kind, rt.group) == expected else None

    def _report_invalid_namespace(self, dependent: dict[str, Any], owner_ref: dict[str, Any]) -> None:
        """The warning upstream's graph builder records on a dependent whose owner lives in another
        namespace (``OwnerRefInvalidNamespace``)."""
        events = self.kinds.by_plural("", "events")
        rt, (namespace, name) = self._resource(dependent)
        if events is None or not rt.namespaced:
            return
        now = now_rfc3339()
        coordinates = (f"[{owner_ref.get('apiVersion')}/{owner_ref.get('kind')}, namespace: {namespace}, "
                       f"name: {owner_ref.get('name')}, uid: {_ref_uid(owner_ref)}]")
        event = {"metadata": {"name": f"{name}.{time.time_ns():x}", "namespace": namespace},
                 "involvedObject": {"apiVersion": rt.api_version, "kind": rt.kind, "namespace": namespace,
                                    "name": name, "uid": _uid(dependent)},
                 "reason": "OwnerRefInvalidNamespace", "type": "Warning",
                 "message": f'ownerRef {coordinates} does not exist in namespace "{namespace}"',
                 "source": {"component": "garbage-collector-controller"}, "firstTimestamp": now,
                 "lastTimestamp": now, "count": 1, "reportingComponent": "garbage-collector-controller"}
        try:
            self.writes.create(events, namespace, event, WriteOptions(manager=MANAGER))
        except StatusError as exc:  # a terminating namespace takes no new events: the warning is lost
            log.debug("gc: cannot record OwnerRefInvalidNamespace on %s/%s: %s", namespace, name, exc)

    def _process(self, uid: str) -> None:
        obj = self._live_owner(uid)
        if obj is not None:
            self._attempt_dependent(uid, obj)
            if (obj.get("metadata") or {}).get("deletionTimestamp"):
                self._process_deleting_owner(uid, obj)
        for ref in list(self._dependents.get(uid, ())):
            dependent = self._get(ref)
            if dependent is not None:
                self._attempt_dependent(_uid(dependent), dependent)

    def _attempt_dependent(self, uid: str, obj: dict[str, Any]) -> None:
        """Delete ``obj`` if all its owners are gone; drop dangling references otherwise."""
        refs = (obj.get("metadata") or {}).get("ownerReferences") or []
        if not refs or obj["metadata"].get("deletionTimestamp"):
            return
        live, dangling, foreground = [], [], False
        for r in refs:
            target = self._target(obj, r)
            owner = self._get(target) if target else None
            if owner is None:
                dangling.append(r)
                if target is None and _ref_uid(r) in self._objects:
                    self._report_invalid_namespace(obj, r)
                continue
            owner_meta = owner.get("metadata") or {}
            if owner_meta.get("deletionTimestamp") and FINALIZER_FOREGROUND in (owner_meta.get("finalizers") or []):
                foreground = True
                dangling.append(r)
            else:
                live.append(r)
        if not dangling:
            return
        if live:
            self._update(obj, lambda o: _set_owner_refs(o, live))
            return
        self._delete(obj, "Foreground" if foreground else "Background")

    def _process_deleting_owner(self, uid: str, owner: dict[str, Any]) -> None:
        finalizers = owner["metadata"].get("finalizers") or []
        owner_key = self._objects.get(uid)
        dependents = [d for d in (self._get(r) for r in list(self._dependents.get(uid, ()))) if d is not None
                      and any(_ref_uid(r) == uid and self._target(d, r) == owner_key
                              for r in d["metadata"].get("ownerReferences") or [])]
        if FINALIZER_ORPHAN in finalizers:
            for d in dependents:
                self._update(d, lambda o: _set_owner_refs(o, [r for r in o["metadata"].get("ownerReferences") or []
                                                              if _ref_uid(r) != uid]))
            self._update(owner, lambda o: _drop_finalizer(o, FINALIZER_ORPHAN))
        elif FINALIZER_FOREGROUND in finalizers:
            blocking = [d for d in dependents if any(_ref_uid(r) == uid and r.get("blockOwnerDeletion")
                                                     for r in d["metadata"].get("ownerReferences") or [])]
            for d in dependents:
                if not d["metadata"].get("deletionTimestamp"):
                    self._delete(d, "Foreground")
            if not blocking:
                self._update(owner, lambda o: _drop_finalizer(o, FINALIZER_FOREGROUND))

    def _finalize_namespace(self, name: str) -> None:
        namespaces = self.kinds.namespaces
        ns = self.reads.find(namespaces, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining = 0
        seen: set[StorageKey] = set()
        for rt in self.kinds:
            if not rt.namespaced or rt.storage_key in seen:
                continue
            seen.add(rt.storage_key)
            for obj in self.reads.items(rt, name):
                remaining += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    self._delete(obj, "Background")
        if remaining == 0:
            finalize_namespace(self.writes, namespaces, "", name, {"spec": {"finalizers": []}},
                               WriteOptions(manager=MANAGER))

    # -- writes through the registry ---------------------------------------------------------------

    def _resource(self, obj: dict[str, Any]) -> tuple[ResourceType, ObjectKey]:
        ref = self._objects[_uid(obj)]
        return self.kinds.for_storage(ref[0]), ref[1]

    def _delete(self, obj: dict[str, Any], policy: str) -> None:
        rt, (ns, name) = self._resource(obj)
        self.writes.delete(rt, ns, name, {"propagationPolicy": policy, "preconditions": {"uid": _uid(obj)}})

    def _update(self, obj: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> None:
        rt, (ns, name) = self._resource(obj)
        new = deep_copy(obj)
        mutate(new)
        self.writes.update(rt, ns, name, new, WriteOptions(manager=MANAGER, field_validation="Ignore"))


def _ref_uid(ref: dict[str, Any]) -> str:
    return ref.get("uid", "")


def _namespace_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def _set_owner_refs(obj: dict[str, Any], refs: list[dict[str, Any]]) -> None:
    if refs:
        obj["metadata"]["ownerReferences"] = refs
    else:
        obj["metadata"].pop("ownerReferences", None)


def _drop_finalizer(obj: dict[str, Any], finalizer: str) -> None:
    obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
