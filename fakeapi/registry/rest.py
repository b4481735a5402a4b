"""The generic write pipeline every kind shares (upstream's ``genericregistry.Store``).

create / update / patch / delete run: decode → server-managed metadata → kind hooks
(default, drop disabled fields, admit, validate) → managedFields → commit.  Handlers call in
with plain dicts; the store is only touched at the end, so a rejected write changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fakeapi.config import FeatureGates
from fakeapi.errors import (
    STALE_OBJECT,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    already_exists,
    conflict,
    invalid_object,
    not_found,
    not_supported,
    required,
    status_details,
)
from fakeapi.machinery import apply as ssa
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
)
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.models.listtypes import list_types_for
from fakeapi.registry import meta as m
from fakeapi.registry.resource import ResourceType
from fakeapi.store.objects import ADDED, DELETED, MODIFIED, ObjectStore
from fakeapi.validation.strategy import AdmissionContext

FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"

# The NamespaceLifecycle admission plugin refuses to delete these.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply-cbor",
}


@dataclass(frozen=True)
class WriteOptions:
    """Options common to writes (query parameters of create/update/patch/delete)."""

    manager: str = ""
    dry_run: bool = False
    field_validation: str = "Strict"
    force: bool = False
    subresource: str = ""


class Registry:
    """Kinds by URL coordinates plus the generic write pipeline over one ObjectStore."""

    def __init__(self, store: ObjectStore, kinds: Iterable[ResourceType], gates: FeatureGates) -> None:
        self.store = store
        self.gates = gates
        self.kinds = tuple(kinds)
        self._by_gvr = {(k.group, k.version, k.plural): k for k in self.kinds}
        # The first declared version of a storage key is the one GC and namespace cleanup use.
        self._by_storage: dict[tuple[str, str], ResourceType] = {}
        for k in self.kinds:
            self._by_storage.setdefault(k.storage_key, k)
        self.namespaces = self._by_gvr[("", "v1", "namespaces")]

    # -- lookup --------------------------------------------------------------------------------

    def resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def for_storage(self, storage: tuple[str, str]) -> ResourceType:
        return self._by_storage[storage]

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first (declaration order)."""
        out: dict[str, list[str]] = {}
        for k in self.kinds:
            versions = out.setdefault(k.group, [])
            if k.version not in versions:
                versions.append(k.version)
        return out

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(rt.storage_key, (namespace if rt.namespaced else "", name))
        if obj is None:
            raise not_found(rt.plural, rt.group, name)
        return obj

    def _admission(self, rt: ResourceType, namespace: str, operation: str,
                   subresource: str = "") -> AdmissionContext:
        labels: dict[str, str] = {}
        if rt.namespaced and namespace:
            ns = self.store.get(self.namespaces.storage_key, ("", namespace))
            labels = ((ns or {}).get("metadata") or {}).get("labels") or {}

        def lookup(group: str, plural: str, ns: str, name: str) -> dict[str, Any] | None:
            target = next((k for k in self.kinds if k.group == group and k.plural == plural), None)
            if target is None:
                return None
            return self.store.get(target.storage_key, (ns if target.namespaced else "", name))

        return AdmissionContext(gates=self.gates, operation=operation, subresource=subresource,
                                namespace_labels=labels, lookup=lookup)

    def _check_namespace(self, rt: ResourceType, namespace: str, name: str) -> None:
        if not rt.namespaced:
            return
        ns = self.store.get(self.namespaces.storage_key, ("", namespace))
        if ns is None:
            raise not_found("namespaces", "", namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            raise Forbidden(f'{rt.group_resource} "{name}" is forbidden: unable to create new content in '
                            f"namespace {namespace} because it is being terminated",
                            details={**status_details(rt.plural, rt.group, name),
                                     "causes": [{"reason": "NamespaceTerminating",
                                                 "message": f"namespace {namespace} is being terminated",
                                                 "field": "metadata.namespace"}]})

    def _validate(self, rt: ResourceType, obj: dict[str, Any], errors: list[Any]) -> None:
        if errors:
            name = (obj.get("metadata") or {}).get("name") or (obj.get("metadata") or {}).get("generateName", "")
            raise invalid_object(rt.kind, rt.group, name, errors)

    def _decode(self, rt: ResourceType, obj: dict[str, Any], field_validation: str, *,
                patch: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Check types and unknown fields against the kind's model (returns a private copy)."""
        if rt.model is None:
            return deep_copy(obj), []
        from fakeapi.models.schema import decode

        return decode(rt.model, obj, field_validation, patch=patch)

    def _set_identity(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        # apiVersion and kind first, as every real server prints them.
        rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        obj.clear()
        obj.update({"apiVersion": rt.api_version, "kind": rt.kind, **rest})

    # -- create --------------------------------------------------------------------------------

    def create(self, rt: ResourceType, namespace: str, body: dict[str, Any],
               opts: WriteOptions) -> tuple[dict[str, Any], list[str]]:
        """Create an object; returns (object, warnings)."""
        obj, warnings = self._decode(rt, body, opts.field_validation)
        return self._create(rt, namespace, obj, opts), warnings

    def _create(self, rt: ResourceType, namespace: str, obj: dict[str, Any], opts: WriteOptions,
                managed: list[Any] | None = None) -> dict[str, Any]:
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        if meta.get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        self._bind_namespace(rt, obj, namespace)
        self._check_namespace(rt, namespace, meta.get("name") or meta.get("generateName", ""))
        self._set_identity(rt, obj)
        for key in m.SERVER_META:
            meta.pop(key, None)
        self._prepare_create_status(rt, obj)
        ctx = self._admission(rt, namespace, "CREATE")
        rt.strategy.default(obj, ctx)
        rt.strategy.drop_disabled_fields(obj, None, ctx)
        rt.strategy.admit(obj, None, ctx)
        self._validate(rt, obj, m.validate_basic_meta(obj) + rt.strategy.validate(obj, ctx))
        now = now_rfc3339()
        meta["uid"] = m.new_uid()
        meta["creationTimestamp"] = now
        if rt.tracks_generation:
            meta["generation"] = 1
        if managed is not None:
            meta["managedFields"] = managed
        else:
            obj = ssa.track_update(None, obj, manager=opts.manager, api_version=rt.api_version,
                                   types=list_types_for(rt.group, rt.kind), now=now,
                                   subresource=opts.subresource)
        return self._commit_new(rt, obj, opts)

    def _bind_namespace(self, rt: ResourceType, obj: dict[str, Any], namespace: str) -> None:
        meta = obj["metadata"]
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != namespace:
                raise BadRequest("the namespace of the provided object does not match the namespace "
                                 "sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)

    def _prepare_create_status(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        # Upstream strategies reset status on create (nodes alone may set it); the kind's
        # defaults (pod phase and QoS class, namespace phase) then come from its strategy.
        if rt.has_status and rt.kind != "Node":
            obj.pop("status", None)

    def _commit_new(self, rt: ResourceType, obj: dict[str, Any], opts: WriteOptions) -> dict[str, Any]:
        meta = obj["metadata"]
        storage = rt.storage_key
        if not meta.get("name"):
            prefix = meta["generateName"]
            for _ in range(m.GENERATE_NAME_ATTEMPTS):
                candidate = m.generate_name(prefix)
                if self.store.get(storage, (meta.get("namespace", ""), candidate)) is None:
                    meta["name"] = candidate
                    break
            else:
                raise already_exists(rt.plural, rt.group, m.generate_name(prefix))
            self._validate(rt, obj, rt.strategy.validate(obj, self._admission(rt, meta.get("namespace", ""),
                                                                              "CREATE")))
        if self.store.get(storage, (meta.get("namespace", ""), meta["name"])) is not None:
            raise already_exists(rt.plural, rt.group, meta["name"])
        if opts.dry_run:
            return obj  # never stored, so no resourceVersion (upstream omits it too)
        return self.store.commit(storage, ADDED, obj)

    # -- update --------------------------------------------------------------------------------

    def update(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any],
               opts: WriteOptions) -> tuple[dict[str, Any], list[str]]:
        """PUT of the main resource or a subresource; returns (object, warnings)."""
        old = self.get(rt, namespace, name)
        new, warnings = self._decode(rt, body, opts.field_validation)
        new_meta = new.get("metadata")
        if not isinstance(new_meta, dict):
            raise BadRequest("metadata must be an object")
        if new_meta.get("name") and new_meta["name"] != name:
            raise BadRequest(f"the name of the object ({new_meta['name']}) does not match the name on "
                             f"the URL ({name})")
        rv = new_meta.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.plural, rt.group, name, STALE_OBJECT)
        if rt.namespaced and new_meta.get("namespace") and new_meta["namespace"] != namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace sent on "
                             "the request")
        return self._finish_update(rt, old, new, opts), warnings

    def _finish_update(self, rt: ResourceType, old: dict[str, Any], new: dict[str, Any],
                       opts: WriteOptions, managed: list[Any] | None = None) -> dict[str, Any]:
        """The shared tail of PUT, PATCH and apply: carry server fields, hooks, commit."""
        old_meta = old["metadata"]
        new_meta = new.setdefault("metadata", {})
        uid = new_meta.get("uid")
        if uid and uid != old_meta["uid"]:
            raise Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                           f"{old_meta['uid']}")
        self._set_identity(rt, new)
        new_meta["name"] = old_meta["name"]
        if rt.namespaced:
            new_meta["namespace"] = old_meta["namespace"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                new_meta[key] = old_meta[key]
            else:
                new_meta.pop(key, None)
        new_meta["resourceVersion"] = old_meta["resourceVersion"]
        ctx = self._admission(rt, old_meta.get("namespace", ""), "UPDATE", opts.subresource)
        if opts.subresource == "status":
            new = _status_only(new, old)
            new_meta = new["metadata"]
            rt.strategy.drop_disabled_fields(new, old, ctx)
            errors = rt.strategy.validate_status_update(new, old, ctx)
        else:
            if rt.has_status:
                _keep_status(new, old)
            rt.strategy.default(new, ctx)
            rt.strategy.drop_disabled_fields(new, old, ctx)
            rt.strategy.admit(new, old, ctx)
            errors = (m.validate_basic_meta(new) + m.validate_finalizer_changes(new, old)
                      + rt.strategy.validate_update(new, old, ctx))
        self._validate(rt, new, errors)
        if rt.tracks_generation:
            generation = old_meta.get("generation", 1)
            new_meta["generation"] = generation + 1 if m.spec_changed(new, old) else generation
        if m.meta_equal_for_noop(new, old):
            return old  # a no-op write: no event, resourceVersion unchanged
        if managed is not None:
            new_meta["managedFields"] = managed
        else:
            new = ssa.track_update(old, new, manager=opts.manager, api_version=rt.api_version,
                                   types=list_types_for(rt.group, rt.kind), now=now_rfc3339(),
                                   subresource=opts.subresource)
            new_meta = new["metadata"]
        if opts.dry_run:
            return new
        if new_meta.get("deletionTimestamp") and not new_meta.get("finalizers") and rt.kind != "Namespace":
            return self.store.commit(rt.storage_key, DELETED, new)
        return self.store.commit(rt.storage_key, MODIFIED, new)

    # -- patch ---------------------------------------------------------------------------------

    def patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch: Any,
              opts: WriteOptions) -> tuple[dict[str, Any], bool, list[str]]:
        """Apply a patch; returns (object, created, warnings).  Server-side apply may create."""
        if patch_type == "apply":
            return self._apply(rt, namespace, name, patch, opts)
        old = self.get(rt, namespace, name)
        warnings: list[str] = []
        if patch_type != "json" and isinstance(patch, dict):
            # The stored object is valid, so only the patch can bring unknown fields or wrong
            # types: checking it instead of the whole result keeps small patches cheap.
            patch, warnings = self._decode(rt, patch, opts.field_validation, patch=True)
        try:
            if patch_type == "json":
                patched = apply_json_patch(old, patch)
            elif patch_type == "merge":
                patched = apply_merge_patch(old, patch)
            elif patch_type == "strategic":
                patched = apply_strategic_merge_patch(old, patch, list_types_for(rt.group, rt.kind))
            else:
                raise BadRequest(f"unsupported patch type {patch_type}")
        except PatchError as exc:
            # Upstream: a patch that applies but fails (e.g. a json-patch "test") is 422 with the
            # patcher's own message; a malformed patch document is 400.
            raise (Invalid if exc.code == 422 else BadRequest)(str(exc)) from exc
        if not isinstance(patched, dict):
            raise BadRequest("the patch must produce an object")
        if patch_type == "json":
            new, warnings = self._decode(rt, patched, opts.field_validation)
        else:
            new = patched
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.plural, rt.group, name, STALE_OBJECT)
        return self._finish_update(rt, old, new, opts), False, warnings

    def _apply(self, rt: ResourceType, namespace: str, name: str, patch: Any,
               opts: WriteOptions) -> tuple[dict[str, Any], bool, list[str]]:
        if not opts.manager:
            raise invalid_object("PatchOptions", "meta.k8s.io", "", [
                required("fieldManager", "is required for apply patch")])
        if not isinstance(patch, dict):
            raise BadRequest("apply patches must be a YAML or JSON object")
        applied, warnings = self._decode(rt, patch, opts.field_validation)
        # Fields the endpoint resets are not applied (nor owned): status on the main resource,
        # everything but status on /status.
        if opts.subresource == "status":
            applied = {k: v for k, v in applied.items() if k in ("apiVersion", "kind", "metadata", "status")}
            applied["metadata"] = {k: v for k, v in (applied.get("metadata") or {}).items()
                                   if k in ("name", "namespace", "resourceVersion", "uid")}
        elif rt.has_status:
            applied.pop("status", None)
        meta = applied.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the URL "
                             f"({name})")
        types = list_types_for(rt.group, rt.kind)
        live = self.store.get(rt.storage_key, (namespace if rt.namespaced else "", name))
        def apply(force: bool) -> dict[str, Any]:
            return ssa.server_side_apply(live, applied, manager=opts.manager, force=force,
                                         api_version=rt.api_version, types=types, now=now_rfc3339(),
                                         subresource=opts.subresource)

        try:
            try:
                merged = apply(opts.force)
            except ssa.ApplyConflict as exc:
                if live is None or not ssa.covered_by_last_applied(exc, live, types):
                    raise
                merged = apply(True)  # taking over from client-side apply, as the apiserver allows
        except PatchError as exc:  # an applied configuration whose lists cannot be keyed, ...
            raise (Invalid if exc.code == 422 else BadRequest)(str(exc)) from exc
        except ssa.ApplyConflict as exc:
            raise Conflict(str(exc), details={**status_details(rt.plural, rt.group, name),
                                              "causes": exc.causes}) from exc
        managed = (merged.get("metadata") or {}).pop("managedFields", None)
        if live is None:
            if opts.subresource:
                raise not_found(rt.plural, rt.group, name)
            merged.setdefault("metadata", {})["name"] = name
            return self._create(rt, namespace, merged, opts, managed), True, warnings
        rv = meta.get("resourceVersion")
        if rv and rv != live["metadata"]["resourceVersion"]:
            raise conflict(rt.plural, rt.group, name, STALE_OBJECT)
        return self._finish_update(rt, live, merged, opts, managed), False, warnings

    # -- delete --------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str, name: str, options: dict[str, Any],
               dry_run: bool = False) -> tuple[dict[str, Any], bool]:
        """Delete per DeleteOptions; returns (object, gone) — gone False while finalizers linger."""
        old = self.get(rt, namespace, name)
        meta = old["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta["uid"]:
            raise Conflict(f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                           f"{meta['uid']}", details=status_details(rt.plural, rt.group, name))
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise Conflict(f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                           f"ResourceVersion in object meta: {meta['resourceVersion']}",
                           details=status_details(rt.plural, rt.group, name))
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise invalid_object("DeleteOptions", "meta.k8s.io", "", [
                not_supported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])])
        new = deep_copy(old)
        new_meta = new["metadata"]
        finalizers = list(new_meta.get("finalizers") or [])
        if policy == "Orphan" and FINALIZER_ORPHAN not in finalizers:
            finalizers.append(FINALIZER_ORPHAN)
        if policy == "Foreground" and FINALIZER_FOREGROUND not in finalizers:
            finalizers.append(FINALIZER_FOREGROUND)
        grace = _grace_period(rt, old, options)
        if rt.kind == "Namespace" and rt.group == "":
            if name in IMMORTAL_NAMESPACES:
                raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                                details=status_details("namespaces", "", name))
            return self._delete_namespace(rt, new, dry_run)
        if finalizers or grace > 0:
            if finalizers:
                new_meta["finalizers"] = finalizers
            if not new_meta.get("deletionTimestamp"):
                new_meta["deletionTimestamp"] = now_rfc3339()
                new_meta["deletionGracePeriodSeconds"] = grace
            elif grace < new_meta.get("deletionGracePeriodSeconds", grace):
                new_meta["deletionGracePeriodSeconds"] = grace
            if new == old or dry_run:
                return (old if new == old else new), False
            return self.store.commit(rt.storage_key, MODIFIED, new), False
        if dry_run:
            return old, True
        return self.store.commit(rt.storage_key, DELETED, new), True

    def _delete_namespace(self, rt: ResourceType, ns: dict[str, Any], dry_run: bool) -> tuple[dict[str, Any], bool]:
        meta = ns["metadata"]
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = now_rfc3339()
            meta["deletionGracePeriodSeconds"] = 0
        ns.setdefault("status", {})["phase"] = "Terminating"
        if dry_run:
            return ns, False
        old = self.store.get(rt.storage_key, ("", meta["name"]))
        if old == ns:
            return old, False
        return self.store.commit(rt.storage_key, MODIFIED, ns), False

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any]:
        """``namespaces/{name}/finalize``: set spec.finalizers; an emptied, deleting namespace goes."""
        rt = self.namespaces
        old = self.get(rt, "", name)
        new = deep_copy(old)
        new.setdefault("spec", {})["finalizers"] = finalizers
        if new == old:
            return old
        if new["metadata"].get("deletionTimestamp") and not finalizers and not new["metadata"].get("finalizers"):
            return self.store.commit(rt.storage_key, DELETED, new)
        return self.store.commit(rt.storage_key, MODIFIED, new)

    # -- pods/binding --------------------------------------------------------------------------

    def bind(self, rt: ResourceType, namespace: str, name: str, binding: dict[str, Any],
             dry_run: bool = False) -> None:
        pod = self.get(rt, namespace, name)
        target = binding.get("target") or {}
        node = target.get("name")
        if not node:
            raise invalid_object("Binding", "", name, [required("target.name")])
        bmeta = binding.get("metadata") or {}
        if bmeta.get("uid") and bmeta["uid"] != pod["metadata"]["uid"]:
            raise Conflict(f"Precondition failed: UID in precondition: {bmeta['uid']}, UID in object meta: "
                           f"{pod['metadata']['uid']}")
        if pod["metadata"].get("deletionTimestamp"):
            raise conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host")
        current = (pod.get("spec") or {}).get("nodeName")
        if current:
            raise conflict("pods/binding", "", name,
                           f'pod {name} is already assigned to node "{current}"')
        new = deep_copy(pod)
        new["spec"]["nodeName"] = node
        conditions = [c for c in new.setdefault("status", {}).get("conditions") or []
                      if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": now_rfc3339()})
        new["status"]["conditions"] = conditions
        if not dry_run:
            self.store.commit(rt.storage_key, MODIFIED, new)

    # -- lists ---------------------------------------------------------------------------------

    def objects(self, rt: ResourceType, namespace: str | None) -> list[dict[str, Any]]:
        return self.store.items(rt.storage_key, namespace if rt.namespaced else None)


def _keep_status(new: dict[str, Any], old: dict[str, Any]) -> None:
    if "status" in old:
        new["status"] = old["status"]
    else:
        new.pop("status", None)


def _status_only(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """A status write changes status only (``ResetObjectMetaForStatus`` keeps old metadata)."""
    out = {k: v for k, v in old.items() if k != "status"}
    out["metadata"] = dict(old["metadata"])
    if "status" in new:
        out["status"] = new["status"]
    return deep_copy(out)


def _grace_period(rt: ResourceType, obj: dict[str, Any], options: dict[str, Any]) -> int:
    """Only bound, running pods linger for the kubelet; everything else goes at once."""
    if rt.kind != "Pod" or rt.group != "":
        return 0
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return 0
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    return max(int(grace), 0)


__all__ = ["PATCH_TYPES", "Registry", "WriteOptions"]
