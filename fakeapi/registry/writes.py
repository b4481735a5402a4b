"""The generic write pipeline every kind shares (upstream's ``genericregistry.Store``).

create / update / patch / delete run: decode → server-managed metadata (:mod:`.meta`) → the
kind's strategy (default, drop disabled fields, admit, validate) → managedFields → commit.
Handlers call in with plain dicts; the store is only touched at the end, so a rejected write
changes nothing.  Nothing here names a kind: what differs between kinds is a strategy hook
(status on create, grace periods, delete admission, finalization) or a subresource handler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fakeapi.auth.users import UserInfo
from fakeapi.config import FeatureGates
from fakeapi.errors import (
    STALE_OBJECT,
    BadRequest,
    Conflict,
    Forbidden,
    UnsupportedMediaType,
    already_exists,
    conflict,
    invalid_object,
    not_found,
    not_supported,
    required,
    status_details,
)
from fakeapi.machinery import managedfields
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.listtypes import ListTypes
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.servicenet import ServiceNetwork
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.machinery.tokens import TokenIssuer
from fakeapi.models import MODELS
from fakeapi.models.listtypes import list_types_for
from fakeapi.models.meta import FINALIZER_FOREGROUND, FINALIZER_ORPHAN, ObjectMeta
from fakeapi.models.schema import STRATEGIC, decode, drop_emptied, fill_value_structs
from fakeapi.registry import meta as m
from fakeapi.registry import patching
from fakeapi.registry.policies import Policies
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import KindTable, ResourceType, Subresource
from fakeapi.store.eventlog import ADDED, DELETED, MODIFIED
from fakeapi.store.objects import ObjectStore
from fakeapi.validation.strategy import AdmissionContext, validate_create, validate_update

PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


@dataclass(frozen=True)
class WriteOptions:
    """Options common to writes (query parameters of create/update/patch/delete)."""

    manager: str = ""
    dry_run: bool = False
    field_validation: str = "Strict"
    force: bool = False
    subresource: str = ""
    # Who sent the write, when the kind's strategy ``wants_user`` (see AdmissionContext.user).
    user: UserInfo | None = None
    # False when a subresource's handler ran the admission policies on its own view (scale).
    policies: bool = True
    # Run the whole write but store nothing, so that validating webhooks judge the object as it
    # would be stored; :meth:`Writer.commit_prepared` stores it then (unlike ``dry_run``, which the
    # admission policies see, the request stays what it is).
    prepare_only: bool = False
    # Stop after defaults and the built-in admission, with managedFields computed, before
    # validation: the object mutating webhooks get (upstream's order), never stored.
    for_mutation: bool = False
    # The options' fields as the request sent them (fieldManager, fieldValidation), which
    # admission shows as ``request.options`` (a dry run adds its own).
    sent: tuple[tuple[str, str], ...] = ()


def sent_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A delete's DeleteOptions as admission shows them: the fields the request set."""
    return {key: value for key, value in options.items() if key not in ("kind", "apiVersion")}


def _check_rv(rt: ResourceType, name: str, body: dict[str, Any], stored: dict[str, Any]) -> None:
    """Optimistic concurrency: a resourceVersion in the body must be the stored one."""
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv and rv != stored["metadata"]["resourceVersion"]:
        raise conflict(rt.plural, rt.group, name, STALE_OBJECT)


def _check_identity(rt: ResourceType, meta: Any, name: str, namespace: str) -> None:
    """The object a write ends with must be the one its URL names (upstream's ``checkName`` and
    ``EnsureObjectNamespaceMatchesRequestNamespace``): another name or namespace is a 400."""
    if not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    if meta.get("name") and meta["name"] != name:
        raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    if rt.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
        raise BadRequest(m.NAMESPACE_MISMATCH)


def _drop_emptied(rt: ResourceType, patch_type: str, patch: dict[str, Any], new: dict[str, Any]) -> None:
    """Leave out the optional maps and lists the patch left empty, as the apiserver's re-encoding
    of the patched object does; a custom resource is kept as written, but for its metadata."""
    strategic = patch_type == STRATEGIC
    if rt.model is not None:
        drop_emptied(rt.model, patch, new, strategic=strategic)
    elif isinstance(patch.get("metadata"), dict) and isinstance(new.get("metadata"), dict):
        drop_emptied(ObjectMeta, patch["metadata"], new["metadata"], strategic=strategic)


def _list_types(rt: ResourceType) -> ListTypes:
    return rt.list_types if rt.list_types is not None else list_types_for(rt.group, rt.kind)


def _raise_invalid(rt: ResourceType, obj: dict[str, Any], errors: list[Any]) -> None:
    if errors:
        raise invalid_object(rt.kind, rt.group, m.display_name(obj), errors)


class Writer:
    """Writes of one store through the kinds' strategies."""

    def __init__(self, store: ObjectStore, reads: Reader, kinds: KindTable, gates: FeatureGates, *,
                 network: ServiceNetwork | None = None, tokens: TokenIssuer | None = None) -> None:
        self._store = store
        self.reads = reads
        self.kinds = kinds
        self.gates = gates
        self.network = network or ServiceNetwork.parse()
        # Subresources that issue ServiceAccount tokens sign with this.
        self.tokens = tokens or TokenIssuer()
        # (namespace, operation, subresource) -> (the namespace's labels, the context made with
        # them): a context is immutable, so writes share it while that labels object is the
        # stored one (a namespace write stores new labels; keeping them here keeps the identity
        # test sound).
        self._contexts: Memo[tuple[str, str, str], tuple[Any, AdmissionContext]] = Memo(1024)
        self.policies = Policies(store, reads, kinds)

    # -- admission -----------------------------------------------------------------------------

    def _admission(self, rt: ResourceType, namespace: str, operation: str,
                   subresource: str = "", ns: dict[str, Any] | None = None) -> AdmissionContext:
        """The admission context of a write in ``namespace`` (``ns``: its object, when the caller
        has just read it)."""
        labels: Any = None
        if rt.namespaced and namespace:
            if ns is None:
                ns = self.reads.find(self.kinds.namespaces, "", namespace)
            labels = ((ns or {}).get("metadata") or {}).get("labels")
        else:
            namespace = ""
        key = (namespace, operation, subresource)
        cached = self._contexts.get(key)
        if cached is not None and cached[0] is labels:
            return cached[1]
        ctx = AdmissionContext(gates=self.gates, operation=operation, subresource=subresource,
                               namespace_labels=labels or {}, lookup=self._lookup, list_all=self._list_all,
                               service_network=self.network)
        self._contexts.keep(key, (labels, ctx))
        return ctx

    def _lookup(self, group: str, plural: str, ns: str, name: str) -> dict[str, Any] | None:
        target = self.kinds.by_plural(group, plural)
        return None if target is None else self.reads.find(target, ns, name)

    def _list_all(self, group: str, plural: str) -> list[dict[str, Any]]:
        target = self.kinds.by_plural(group, plural)
        return [] if target is None else self.reads.items(target)

    def _check_namespace_open(self, rt: ResourceType, namespace: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        """NamespaceLifecycle: namespaced objects are created only in existing, live namespaces.
        Returns the namespace (None for a cluster-scoped kind)."""
        if not rt.namespaced:
            return None
        ns = self.reads.get(self.kinds.namespaces, "", namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            name = m.display_name(obj)
            raise Forbidden(f'{rt.group_resource} "{name}" is forbidden: unable to create new content in '
                            f"namespace {namespace} because it is being terminated",
                            details={**status_details(rt.plural, rt.group, name),
                                     "causes": [{"reason": "NamespaceTerminating",
                                                 "message": f"namespace {namespace} is being terminated",
                                                 "field": "metadata.namespace"}]})
        return ns

    def _decode(self, rt: ResourceType, obj: dict[str, Any], field_validation: str, *,
                patch: str = "") -> tuple[dict[str, Any], list[str]]:
        """Check types and unknown fields against the kind's model, or its strategy's schema
        (returns a private copy); ``patch``: the body is a "merge" or "strategic" patch."""
        if rt.model is None:
            return rt.strategy.decode(obj, field_validation, patch=bool(patch))
        return decode(rt.model, obj, field_validation, patch=patch)

    def decode_subresource(self, rt: ResourceType, sub: Subresource, namespace: str, name: str,
                           body: dict[str, Any], opts: WriteOptions, *, creating: bool
                           ) -> tuple[dict[str, Any], list[str]]:
        """A subresource's request body decoded like any other, against the model of the kind it
        carries (a Binding; the parent's own kind for ``namespaces/finalize``), so a handler only
        sees well-typed bodies.  A namespace in it must be the request's, a name the URL's
        (creates say "name in URL does not match name in Binding object", as upstream's binding
        and eviction storage do)."""
        if not sub.kind:
            body, warnings = self._decode(rt, body, opts.field_validation)
        else:
            group, _, version = (sub.api_version or rt.api_version).rpartition("/")
            model = MODELS.get((group, version, sub.kind))
            body, warnings = (deep_copy(body), []) if model is None else decode(model, body, opts.field_validation)
        meta = body.get("metadata") or {}
        if creating and meta.get("name") and meta["name"] != name:
            raise BadRequest(f"name in URL does not match name in {sub.kind or rt.kind} object")
        _check_identity(rt, meta, name, namespace)
        return body, warnings

    @staticmethod
    def _fill_zero_values(rt: ResourceType, obj: dict[str, Any]) -> None:
        """What Go's encoder writes even when empty: value structs the object lacks become ``{}``
        (``spec: {}``), status counts without ``omitempty`` 0."""
        if rt.model is not None:
            fill_value_structs(rt.model, obj)
        if rt.strategy.zero_counts and isinstance(status := obj.get("status"), dict):
            for key in rt.strategy.zero_counts:
                status.setdefault(key, 0)

    def _commit(self, rt: ResourceType, event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` under the next revision.  A kind kept in another kind's shape
        (``write_view``: events.k8s.io Events are core Events) is converted there and back."""
        if rt.write_view is None:
            return self._store.commit(rt.storage_key, event_type, obj)
        stored = self._store.commit(rt.storage_key, event_type, rt.write_view(obj))
        return stored if rt.read_view is None else rt.read_view(stored)

    def validating_policies(self, rt: ResourceType, operation: str, obj: dict[str, Any] | None,
                            old: dict[str, Any] | None, subresource: str, user: UserInfo | None,
                            dry_run: bool, options: Mapping[str, Any] | None = None) -> list[str]:
        """ValidatingAdmissionPolicy, after the write's own validation: the warnings of its Warn
        actions; raises the Status of a denial.  A subresource whose handler writes the parent
        (scale) runs it on its own view.  Callers ask ``policies.active()`` first: a cluster
        without bindings pays that look alone."""
        return self.policies.admit(rt, rt.admission_attributes(operation, subresource, obj, old), obj, old, user=user,
                                   dry_run=dry_run, options=options)

    # -- create --------------------------------------------------------------------------------

    def create(self, rt: ResourceType, namespace: str, body: dict[str, Any],
               opts: WriteOptions, managed: list[Any] | None = None) -> tuple[dict[str, Any], list[str]]:
        """Create an object; returns (object, warnings).  ``managed``: its managedFields as
        computed already (a webhook-mutated object keeps those of the request, as upstream)."""
        obj, warnings = self._decode(rt, body, opts.field_validation)
        return self._create(rt, namespace, obj, opts, warnings, managed), warnings

    def _create(self, rt: ResourceType, namespace: str, obj: dict[str, Any], opts: WriteOptions,
                warnings: list[str], managed: list[Any] | None = None) -> dict[str, Any]:
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        if meta.get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        m.bind_namespace(rt, meta, namespace)
        ns = self._check_namespace_open(rt, namespace, obj)
        m.set_identity(rt, obj)
        for key in m.SERVER_META:
            meta.pop(key, None)
        # The uid exists before the strategy runs, as upstream fills it in before PrepareForCreate
        # (a Job's generated selector names it).
        meta["uid"] = m.new_uid()
        if rt.has_status and not rt.strategy.keeps_status_on_create:
            obj.pop("status", None)  # the kind's status defaults then come from its strategy
        ctx = self._admission(rt, namespace, "CREATE", ns=ns)
        if opts.user is not None:  # (contexts are shared between requests; the user is this one's)
            ctx = replace(ctx, user=opts.user)
        self._fill_zero_values(rt, obj)
        rt.strategy.default(obj, ctx)
        rt.strategy.drop_disabled_fields(obj, None, ctx)
        rt.strategy.admit(obj, None, ctx)
        now = now_rfc3339()
        if opts.for_mutation:
            return self._managed(rt, None, obj, opts, managed, now)
        _raise_invalid(rt, obj, validate_create(rt.strategy, obj, ctx, namespaced=rt.namespaced))
        meta["creationTimestamp"] = now
        if rt.tracks_generation:
            meta["generation"] = 1
        return self._commit_new(rt, self._managed(rt, None, obj, opts, managed, now), opts, warnings)

    def _commit_new(self, rt: ResourceType, obj: dict[str, Any], opts: WriteOptions,
                    warnings: list[str]) -> dict[str, Any]:
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        if not meta.get("name"):
            # Validation checked the prefix; the alphanumeric suffix keeps any valid prefix valid.
            prefix = meta["generateName"]
            for _ in range(m.GENERATE_NAME_ATTEMPTS):
                candidate = m.generate_name(prefix)
                if self.reads.find(rt, namespace, candidate) is None:
                    meta["name"] = candidate
                    break
            else:
                raise already_exists(rt.plural, rt.group, m.generate_name(prefix))
        if self.reads.find(rt, namespace, meta["name"]) is not None:
            raise already_exists(rt.plural, rt.group, meta["name"])
        if opts.policies and self.policies.active():
            warnings += self.validating_policies(rt, "CREATE", obj, None, opts.subresource, opts.user, opts.dry_run,
                                                 dict(opts.sent))
        if opts.dry_run or opts.prepare_only:
            return obj  # never stored, so no resourceVersion (upstream omits it too)
        return self._commit(rt, ADDED, obj)

    # -- update --------------------------------------------------------------------------------

    def update(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any],
               opts: WriteOptions, managed: list[Any] | None = None) -> tuple[dict[str, Any], list[str]]:
        """PUT of the main resource or the status subresource; returns (object, warnings).
        ``managed``: as for :meth:`create`."""
        old = self.reads.get(rt, namespace, name)
        new, warnings = self._decode(rt, body, opts.field_validation)
        _check_identity(rt, new.get("metadata"), name, namespace)
        _check_rv(rt, name, new, old)
        return self._update(rt, old, new, opts, warnings, managed), warnings

    def _update(self, rt: ResourceType, old: dict[str, Any], new: dict[str, Any],
                opts: WriteOptions, warnings: list[str], managed: list[Any] | None = None) -> dict[str, Any]:
        """The shared tail of PUT, PATCH and apply: carry server fields, hooks, commit."""
        old_meta = old["metadata"]
        uid = (new.setdefault("metadata", {})).get("uid")
        if uid and uid != old_meta["uid"]:
            raise Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                           f"{old_meta['uid']}")
        m.set_identity(rt, new)
        m.carry_over(rt, new["metadata"], old_meta)
        ctx = self._admission(rt, old_meta.get("namespace", ""), "UPDATE", opts.subresource)
        if opts.subresource == "status":
            new = m.status_only(new, old)
            self._fill_zero_values(rt, new)
            rt.strategy.prepare_update(new, old, ctx)
            rt.strategy.drop_disabled_fields(new, old, ctx)
        else:
            sub = rt.subresource(opts.subresource) if opts.subresource else None
            if sub is not None and sub.scope:
                new = m.scoped(new, old, sub.scope)
            elif rt.has_status:
                m.keep_status(new, old)
            rt.strategy.prepare_update(new, old, ctx)
            self._fill_zero_values(rt, new)
            rt.strategy.default(new, ctx)
            rt.strategy.drop_disabled_fields(new, old, ctx)
            rt.strategy.admit(new, old, ctx)
        if opts.for_mutation:
            return self._managed(rt, old, new, opts, managed, now_rfc3339())
        _raise_invalid(rt, new, validate_update(rt.strategy, new, old, ctx, namespaced=rt.namespaced))
        if rt.tracks_generation:
            generation = old_meta.get("generation", 1)
            new["metadata"]["generation"] = generation + 1 if m.spec_changed(new, old) else generation
        new = self._managed(rt, old, new, opts, managed, now_rfc3339())
        if opts.policies and self.policies.active():
            warnings += self.validating_policies(rt, "UPDATE", new, old, opts.subresource, opts.user, opts.dry_run,
                                                 dict(opts.sent))
        # A write that changes nothing, managedFields included, is a no-op (no event, same
        # resourceVersion); a change of managedFields alone is stored, as upstream: an apply that
        # makes its manager a co-owner, a client rewriting the entries (kubectl's CSA upgrade).
        return self.commit_update(rt, old, new, opts.dry_run or opts.prepare_only)

    @staticmethod
    def _managed(rt: ResourceType, old: dict[str, Any] | None, obj: dict[str, Any], opts: WriteOptions,
                 managed: list[Any] | None, now: str) -> dict[str, Any]:
        """``obj`` with its managedFields: ``managed`` as given (an apply's, or those a webhook's
        mutation keeps), else the write's own tracked from ``old``."""
        if managed is not None:
            obj["metadata"]["managedFields"] = managed
            return obj
        return managedfields.track_update(old, obj, manager=opts.manager, api_version=rt.api_version,
                                          types=_list_types(rt), now=now, subresource=opts.subresource)

    def commit_prepared(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        """Store what a ``prepare_only`` create (``old`` None) or update made, unless the store
        moved on meanwhile: the name taken (409 AlreadyExists) or ``old`` replaced (409 Conflict)."""
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        current = self.reads.find(rt, namespace, meta["name"])
        if old is None:
            if current is not None:
                raise already_exists(rt.plural, rt.group, meta["name"])
            self._check_namespace_open(rt, namespace, obj)
            return self._commit(rt, ADDED, obj)
        if current is not old:
            raise conflict(rt.plural, rt.group, meta["name"], STALE_OBJECT)
        return self.commit_update(rt, old, obj, False)

    def commit_update(self, rt: ResourceType, old: dict[str, Any], new: dict[str, Any],
                      dry_run: bool) -> dict[str, Any]:
        """Store ``new`` in place of ``old``: nothing if unchanged, and a deleting object that
        nothing holds back any more (no finalizers, the kind's own finalization done, no grace
        period left: upstream's ShouldDeleteDuringUpdate) goes."""
        if new == old:
            return old
        if dry_run:
            return new
        meta = new["metadata"]
        if (meta.get("deletionTimestamp") and not meta.get("finalizers")
                and not old["metadata"].get("deletionGracePeriodSeconds") and rt.strategy.finalized(new)):
            return self._commit(rt, DELETED, new)
        return self._commit(rt, MODIFIED, new)

    # -- patch ---------------------------------------------------------------------------------

    def patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch: Any,
              opts: WriteOptions) -> tuple[dict[str, Any], bool, list[str]]:
        """Apply a patch; returns (object, created, warnings).  Server-side apply may create."""
        if patch_type == "strategic" and not rt.strategic_merge:
            raise UnsupportedMediaType("the body of the request was in an unknown format - accepted media types "
                                       "include: application/json-patch+json, application/merge-patch+json, "
                                       "application/apply-patch+yaml")
        if patch_type == "apply":
            return self._apply(rt, namespace, name, patch, opts)
        old = self.reads.get(rt, namespace, name)
        warnings: list[str] = []
        if patch_type != "json" and isinstance(patch, dict):
            # The stored object is valid, so only the patch can bring unknown fields or wrong
            # types: checking it instead of the whole result keeps small patches cheap.
            patch, warnings = self._decode(rt, patch, opts.field_validation, patch=patch_type)
        # A status write keeps only the patched status, and copies it (meta.status_only): the
        # merge need not copy the whole stored object first.
        new = patching.patched(old, patch_type, patch, _list_types(rt), share=opts.subresource == "status")
        if patch_type == "json":
            new, warnings = self._decode(rt, new, opts.field_validation)
        elif isinstance(patch, dict):
            _drop_emptied(rt, patch_type, patch, new)
        _check_identity(rt, new.get("metadata"), name, namespace)
        _check_rv(rt, name, new, old)
        return self._update(rt, old, new, opts, warnings), False, warnings

    def _apply(self, rt: ResourceType, namespace: str, name: str, patch: Any,
               opts: WriteOptions) -> tuple[dict[str, Any], bool, list[str]]:
        if not opts.manager:
            raise invalid_object("PatchOptions", "meta.k8s.io", "", [
                required("fieldManager", "is required for apply patch")])
        if not isinstance(patch, dict):
            raise BadRequest("apply patches must be a YAML or JSON object")
        config, warnings = self._decode(rt, patch, opts.field_validation)
        applied = patching.applied_fields(rt, config, opts.subresource)
        _check_identity(rt, applied.get("metadata") or {}, name, namespace)
        live = self.reads.find(rt, namespace, name)
        merged = patching.server_side_apply(rt, name, live, applied, manager=opts.manager, force=opts.force,
                                            subresource=opts.subresource, types=_list_types(rt))
        managed = (merged.get("metadata") or {}).pop("managedFields", None)
        if live is None:
            if opts.subresource:
                raise not_found(rt.plural, rt.group, name)
            merged.setdefault("metadata", {})["name"] = name
            return self._create(rt, namespace, merged, opts, warnings, managed), True, warnings
        _check_rv(rt, name, applied, live)
        return self._update(rt, live, merged, opts, warnings, managed), False, warnings

    # -- delete --------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str, name: str, options: dict[str, Any],
               dry_run: bool = False, user: UserInfo | None = None, *, policies: bool = True,
               warnings: list[str] | None = None) -> tuple[dict[str, Any], bool]:
        """Delete per DeleteOptions; returns (object, gone) — gone False while something holds it.
        ``user``: who asked, for admission policies (``policies``: False for a subresource's own
        delete, which upstream's storage makes without admission); ``warnings`` collects theirs.
        :meth:`check_delete` and :meth:`commit_delete` are its two halves, for a caller that
        runs admission of its own between them (webhooks)."""
        old, policy = self.check_delete(rt, namespace, name, options)
        if policies and self.policies.active():
            found = self.validating_policies(rt, "DELETE", None, old, "", user, dry_run, sent_options(options))
            if warnings is not None:
                warnings += found
        return self.commit_delete(rt, old, policy, options, dry_run)

    def check_delete(self, rt: ResourceType, namespace: str, name: str,
                     options: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """What comes before a delete's admission, as upstream's ``BeforeDelete``: the stored
        object (404), its preconditions (409), the propagation policy (422) and the kind's own
        delete rules; returns the object and the propagation policy."""
        old = self.reads.get(rt, namespace, name)
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
        if policy is not None and policy not in PROPAGATION_POLICIES:
            raise invalid_object("DeleteOptions", "meta.k8s.io", "", [
                not_supported("propagationPolicy", policy, [*PROPAGATION_POLICIES, "nil"])])
        rt.strategy.admit_delete(old)
        return old, policy

    def commit_delete(self, rt: ResourceType, old: dict[str, Any], policy: str | None, options: dict[str, Any],
                      dry_run: bool) -> tuple[dict[str, Any], bool]:
        """The delete of ``old`` (as :meth:`check_delete` returned it, and still the stored
        object): gone at once, or marked deleting while finalizers or a grace period hold it."""
        new = deep_copy(old)
        new_meta = new["metadata"]
        finalizers = list(new_meta.get("finalizers") or [])
        for wanted, finalizer in (("Orphan", FINALIZER_ORPHAN), ("Foreground", FINALIZER_FOREGROUND)):
            if policy == wanted and finalizer not in finalizers:
                finalizers.append(finalizer)
        grace = rt.strategy.grace_period(old, options)
        if not finalizers and grace == 0 and rt.strategy.finalized(new):
            if dry_run:
                return old, True
            return self._commit(rt, DELETED, new), True
        # Something holds the object back: mark it deleting and leave the rest to them.
        if finalizers:
            new_meta["finalizers"] = finalizers
        if not new_meta.get("deletionTimestamp"):
            new_meta["deletionTimestamp"] = now_rfc3339()
            new_meta["deletionGracePeriodSeconds"] = grace
        elif grace < new_meta.get("deletionGracePeriodSeconds", grace):
            new_meta["deletionGracePeriodSeconds"] = grace
        rt.strategy.prepare_delete(new)
        if new == old or dry_run:
            return new, False
        return self._commit(rt, MODIFIED, new), False
