"""The ResourceClaim controller (kube-controller-manager's ``resourceclaim`` loop).

Work keys are ``("pod"|"podgroup"|"claim", namespace, name)``:

- **pod**: create a ResourceClaim for every ``spec.resourceClaims[]`` template entry that has none
  (reusing an orphan it generated earlier), record the names in
  ``pod.status.resourceClaimStatuses``; for entries that are PodGroup claims (KEP-5729) create
  nothing and copy the name the PodGroup's status holds; for a pod already bound to a node,
  reserve allocated claims for it (or for its group).
- **podgroup**: the same generation for ``PodGroup.spec.resourceClaims[]`` templates, recorded in
  ``podgroup.status.resourceClaimStatuses``.
- **instance** (v1alpha1 ``workloadRef`` shape, name ``<workload>/<podGroup>/<replicaKey>``): the
  Workload has no status, so a claim generated for one pod-group instance is owned by the
  Workload and recognised by two annotations: the entry name and
  :data:`POD_GROUP_INSTANCE_ANNOTATION` (a fakeapi extension; the draft KEP left this open).
- **claim**: drop ``reservedFor`` entries whose consumer is gone, replaced or done; when none is
  left, clear the allocation and then the ``delete-protection`` finalizer; delete generated
  claims whose pod will not run.

Handlers only enqueue; workers read the informer caches and write over HTTP.  Writes that race
with someone else fail with 409 and are retried with backoff.  A claim create whose answer is
lost may have created the claim: before creating again for that entry, the controller looks for
the claim on the server (by owner and annotations, as for orphans), not only in its informer.
Every other write carries a resourceVersion or UID precondition and is re-derived from the
informer on retry, so a lost answer costs a 409 at worst.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable

from fakeapi.scheduler.client import (
    GVR,
    PODGROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    TRANSPORT_ERRORS,
    WORKLOADS_V1ALPHA1,
    ApiClient,
    outcome_unknown,
)
from fakeapi.scheduler.events import WARNING, EventRecorder
from fakeapi.scheduler.informers import Informer, InformerFactory
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.keys import key_for, object_key
from fakeapi.scheduler.rules.podgroups import (
    PODGROUPS_RESOURCE,
    SCHEDULING_GROUP,
    WORKLOADS_RESOURCE,
    PodGroupInstance,
    group_resource_claims,
    matching_group_claim,
    pod_group_instance,
    pod_group_keys,
)
from fakeapi.scheduler.rules.pods import is_assigned, is_pod_done, is_terminating
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.config import FeatureGates
from fakeapi.errors import Conflict, NotFound, StatusError

log = logging.getLogger(__name__)

FAILED_CLAIM_CREATION = "FailedResourceClaimCreation"

POD_CLAIM_INDEX = "resourceclaim-controller/claim"
POD_TEMPLATE_INDEX = "resourceclaim-controller/template"
POD_GROUP_INDEX = "resourceclaim-controller/podgroup"
CLAIM_OWNER_INDEX = "resourceclaim-controller/owner"
CLAIM_CONSUMER_INDEX = "resourceclaim-controller/consumer"
GROUP_TEMPLATE_INDEX = "resourceclaim-controller/template"
POD_WORKLOAD_INDEX = "resourceclaim-controller/workload"

# Marks which v1alpha1 pod-group instance (``<podGroup>/<replicaKey>``) a Workload-owned claim is for.
POD_GROUP_INSTANCE_ANNOTATION = "resource.fakeapi.dev/pod-group-instance"

_MAX_DELETED_UIDS = 500


def _remember(uids: OrderedDict[str, None], uid: str) -> None:
    """Add ``uid`` to a bounded record of UIDs seen gone (UIDs never come back, so the oldest may go)."""
    uids[uid] = None
    if len(uids) > _MAX_DELETED_UIDS:
        uids.popitem(last=False)


# kube-controller-manager runs the resourceclaim controller with 50 workers
# (cmd/kube-controller-manager/app/core.go, defaultResourceClaimControllerWorkers): with two, the
# releases of finished pods' claims queued behind thousands of claim creations when pods outnumber devices.
WORKERS = 50

Key = tuple[str, str, str]
# Owner UID, claim entry name and extra annotations: what identifies a generated claim.
_EntryKey = tuple[str, str, tuple[tuple[str, str], ...]]


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _template_keys(obj: dict) -> list[str]:
    """The templates a pod's or a PodGroup's ``spec.resourceClaims`` name (both have the same shape)."""
    namespace = _meta(obj).get("namespace", "")
    return [key_for(namespace, e["resourceClaimTemplateName"])
            for e in (obj.get("spec") or {}).get("resourceClaims") or [] if e.get("resourceClaimTemplateName")]


def _pod_workload_keys(pod: dict) -> list[str]:
    instance = pod_group_instance(pod)
    return [key_for(instance.namespace, instance.workload)] if instance and instance.is_workload_shape else []


def _instance_annotations(instance: PodGroupInstance) -> dict[str, str]:
    return {POD_GROUP_INSTANCE_ANNOTATION: f"{instance.pod_group}/{instance.replica_key}"}


def _instance_key(instance: PodGroupInstance) -> Key:
    return ("instance", instance.namespace, f"{instance.workload}/{instance.pod_group}/{instance.replica_key}")


def _claim_owner_keys(claim: dict) -> list[str]:
    uid = rc.controller_uid(claim)
    return [uid] if uid else []


def _consumer_key(namespace: str, resource: str | None, name: str | None) -> str:
    return f"{namespace}/{resource}/{name}"


def _claim_consumer_keys(claim: dict) -> list[str]:
    namespace = _meta(claim).get("namespace", "")
    return [_consumer_key(namespace, ref.get("resource"), ref.get("name")) for ref in rc.reserved_for(claim)]


def pod_needs_work(pod: dict, claim_of: Callable[[str, str], dict | None]) -> bool:
    """Whether a sync of ``pod`` may have something to write (upstream's ``podNeedsWork``), its
    claims looked up with ``claim_of(namespace, name)``: a template claim not generated, gone or
    owned by someone else, or a bound pod's allocated claim not reserved for it.  A pod of a pod
    group always gets a sync (its claims may be its group's)."""
    if pod_group_instance(pod) is not None:
        return True
    namespace = _meta(pod)["namespace"]
    bound = is_assigned(pod)
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        try:
            name, check_owner = rc.pod_claim_name(pod, pod_claim)
        except ValueError:  # ClaimNotCreated included
            return True
        if name is None:
            continue  # decided earlier: no claim needed
        claim = claim_of(namespace, name)
        if claim is None or (check_owner and not rc.is_owned_by(claim, pod)):
            if pod_claim.get("resourceClaimTemplateName"):
                return True  # to generate (again)
            continue  # the user's claim to create
        if (bound and rc.is_allocated(claim) and rc.can_be_reserved(claim)
                and not rc.is_reserved_for(claim, rc.pod_consumer_ref(pod), None)):
            return True
    return False


class ResourceClaimController:
    """Generates claims from templates and releases reservations of consumers that are gone."""

    def __init__(self, api: ApiClient, factory: InformerFactory, gates: FeatureGates,
                 recorder: EventRecorder, *, workers: int = WORKERS) -> None:
        self._api = api
        self._gates = gates
        self._recorder = recorder
        self._workers = workers
        self._queue: WorkQueue[Key] = WorkQueue()
        # UIDs of pods seen deleted: their reservations can go without asking the API server.
        self._deleted_uids: OrderedDict[str, None] = OrderedDict()
        # UIDs of claims this controller deleted: a sync from a cache that still shows one (its own
        # writes' events come before the deletion's) does not delete it again.
        self._deleted_claims: OrderedDict[str, None] = OrderedDict()
        # Claims created but maybe not yet in the informer (client-go's mutation cache):
        # prevents a retry from generating a second claim for the same entry.
        self._created: dict[str, dict] = {}
        # Entries whose create failed without an answer: the claim may exist unseen by the informer.
        self._maybe_created: set[_EntryKey] = set()

        self._pods = factory.informer(PODS)
        self._claims = factory.informer(RESOURCE_CLAIMS)
        self._templates = factory.informer(RESOURCE_CLAIM_TEMPLATES)
        self._pods.add_index(POD_CLAIM_INDEX, rc.pod_claim_keys)
        self._pods.add_index(POD_TEMPLATE_INDEX, _template_keys)
        self._claims.add_index(CLAIM_OWNER_INDEX, _claim_owner_keys)
        self._claims.add_index(CLAIM_CONSUMER_INDEX, _claim_consumer_keys)
        self._pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self._claims.add_event_handler(self._on_claim_add, self._on_claim_update, self._on_claim_delete)
        self._templates.add_event_handler(on_add=self._on_template_add)
        self._groups: Informer | None = None
        self._workloads: Informer | None = None
        if self._group_claims_enabled:
            self._groups = factory.informer(PODGROUPS)
            self._workloads = factory.informer(WORKLOADS_V1ALPHA1)
            self._pods.add_index(POD_GROUP_INDEX, pod_group_keys)
            self._pods.add_index(POD_WORKLOAD_INDEX, _pod_workload_keys)
            self._groups.add_index(GROUP_TEMPLATE_INDEX, _template_keys)
            self._groups.add_event_handler(self._on_group_add, self._on_group_update, self._on_group_delete)
            self._workloads.add_event_handler(self._on_workload, lambda old, new: self._on_workload(new),
                                              self._on_workload_delete)

    @property
    def _group_claims_enabled(self) -> bool:
        return self._gates.DRAWorkloadResourceClaims and self._gates.GenericWorkload

    async def run(self) -> None:
        """Process keys with ``workers`` concurrent workers until cancelled."""
        await process(self._queue, self._sync, name="resourceclaim-controller", workers=self._workers,
                      expected=(StatusError, _SyncError, *TRANSPORT_ERRORS))

    # -- event handlers: only decide which keys to enqueue ------------------------------------

    def _on_pod_add(self, pod: dict) -> None:
        self._enqueue_pod(pod, deleted=False)

    def _on_pod_update(self, old: dict, pod: dict) -> None:
        self._enqueue_pod(pod, deleted=False)

    def _on_pod_delete(self, pod: dict) -> None:
        self._enqueue_pod(pod, deleted=True)

    def _enqueue_pod(self, pod: dict, *, deleted: bool) -> None:
        if not (pod.get("spec") or {}).get("resourceClaims"):
            return
        meta = _meta(pod)
        if deleted:
            self._forget_maybe_created(meta["uid"])
            _remember(self._deleted_uids, meta["uid"])
        if deleted or is_pod_done(pod):
            # Release what the pod held; a pod that will not run gets no new claims either.
            for key in rc.pod_claim_keys(pod):
                namespace, _, name = key.partition("/")
                self._queue.add(("claim", namespace, name))
        elif not is_terminating(pod) and pod_needs_work(pod, self._claims.lister.get):
            self._queue.add(("pod", meta["namespace"], meta["name"]))

    def _on_claim_add(self, claim: dict) -> None:
        self._created.pop(object_key(claim), None)
        self._enqueue_claim(claim, deleted=False)

    def _on_claim_update(self, old: dict, claim: dict) -> None:
        self._enqueue_claim(claim, deleted=False)

    def _on_claim_delete(self, claim: dict) -> None:
        self._enqueue_claim(claim, deleted=True)

    def _enqueue_claim(self, claim: dict, *, deleted: bool) -> None:
        meta = _meta(claim)
        if not deleted:
            self._queue.add(("claim", meta["namespace"], meta["name"]))
        for pod in self._pods.lister.by_index(POD_CLAIM_INDEX, object_key(claim)):
            self._enqueue_pod(pod, deleted=False)
        # A deleted generated group claim must be re-created for its PodGroup.
        owner = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if deleted and owner and owner.get("kind") == "PodGroup":
            self._queue.add(("podgroup", meta["namespace"], owner["name"]))

    def _on_template_add(self, template: dict) -> None:
        key = object_key(template)
        for pod in self._pods.lister.by_index(POD_TEMPLATE_INDEX, key):
            self._enqueue_pod(pod, deleted=False)
        if self._groups is not None:
            for group in self._groups.lister.by_index(GROUP_TEMPLATE_INDEX, key):
                self._on_group_add(group)

    def _on_group_add(self, group: dict) -> None:
        meta = _meta(group)
        if not meta.get("deletionTimestamp"):
            self._queue.add(("podgroup", meta["namespace"], meta["name"]))
        # Pods waiting for the group to appear, or for its status to name a generated claim.
        for pod in self._pods.lister.by_index(POD_GROUP_INDEX, PodGroupInstance(meta["namespace"], meta["name"]).key):
            self._enqueue_pod(pod, deleted=False)

    def _on_group_update(self, old: dict, group: dict) -> None:
        self._on_group_add(group)

    def _on_group_delete(self, group: dict) -> None:
        self._forget_maybe_created(_meta(group)["uid"])
        self._enqueue_reserved_claims(group, PODGROUPS_RESOURCE)

    def _on_workload(self, workload: dict) -> None:
        for pod in self._pods.lister.by_index(POD_WORKLOAD_INDEX, object_key(workload)):
            self._enqueue_pod(pod, deleted=False)

    def _on_workload_delete(self, workload: dict) -> None:
        self._forget_maybe_created(_meta(workload)["uid"])
        self._enqueue_reserved_claims(workload, WORKLOADS_RESOURCE)

    def _forget_maybe_created(self, owner_uid: str) -> None:
        """The owner is gone: the garbage collector takes care of whatever it may have got."""
        self._maybe_created = {k for k in self._maybe_created if k[0] != owner_uid}

    def _enqueue_reserved_claims(self, consumer: dict, resource: str) -> None:
        meta = _meta(consumer)
        for claim in self._claims.lister.by_index(CLAIM_CONSUMER_INDEX,
                                                  _consumer_key(meta["namespace"], resource, meta["name"])):
            self._queue.add(("claim", meta["namespace"], _meta(claim)["name"]))

    # -- workers ------------------------------------------------------------------------------

    async def _sync(self, key: Key) -> None:
        kind, namespace, name = key
        if kind == "pod":
            await self._sync_pod(namespace, name)
        elif kind == "podgroup":
            await self._sync_group(namespace, name)
        elif kind == "instance":
            workload, pod_group, replica_key = name.split("/")
            await self._sync_instance(PodGroupInstance(namespace, pod_group, workload, replica_key))
        else:
            await self._sync_claim(namespace, name)

    # -- pods ---------------------------------------------------------------------------------

    async def _sync_pod(self, namespace: str, name: str) -> None:
        pod = self._pods.lister.get(namespace, name)
        if pod is None or is_terminating(pod) or is_pod_done(pod):
            return  # deleting its claim must not make us generate a new one
        new_statuses: dict[str, str] = {}
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
            try:
                generated = await self._handle_pod_claim(pod, pod_claim)
            except (StatusError, _SyncError) as err:
                self._recorder.event(pod, WARNING, FAILED_CLAIM_CREATION,
                                     f"PodResourceClaim {pod_claim.get('name')}: {err}")
                raise
            if generated is not None:
                new_statuses[pod_claim["name"]] = generated
        if new_statuses:
            current = (pod.get("status") or {}).get("resourceClaimStatuses") or []
            statuses = rc.merged_claim_statuses(current, new_statuses)
            body = {"metadata": {"resourceVersion": _meta(pod)["resourceVersion"]},
                    "status": {"resourceClaimStatuses": statuses}}
            await self._api.patch(PODS, namespace, name, body, subresource="status", result=False)
            # The resourceVersion precondition makes the patched pod the listed one with these
            # statuses: nothing else in the answer is read.
            pod = {**pod, "status": {**(pod.get("status") or {}), "resourceClaimStatuses": statuses}}
        if is_assigned(pod):
            await self._reserve_for_bound_pod(pod)

    def _group_of(self, instance: PodGroupInstance | None) -> dict | None:
        """The PodGroup or v1alpha1 Workload holding ``instance``, if known."""
        if instance is None or self._groups is None or self._workloads is None:
            return None
        informer = self._workloads if instance.is_workload_shape else self._groups
        return informer.lister.get(instance.namespace, instance.object_name)

    def _group_claim_entry(self, pod: dict, pod_claim: dict) -> tuple[dict, dict] | None:
        """(group object, entry) when ``pod_claim`` is a claim of the pod's group (KEP-5729)."""
        instance = pod_group_instance(pod)
        group = self._group_of(instance)
        if group is None or instance is None:
            return None
        entry = matching_group_claim(pod_claim, group_resource_claims(group, instance))
        return (group, entry) if entry is not None else None

    def _waits_for_group(self, pod: dict) -> bool:
        """The pod names a group we have not seen: whether a claim is the group's is unknown."""
        instance = pod_group_instance(pod)
        return self._groups is not None and instance is not None and self._group_of(instance) is None

    async def _handle_pod_claim(self, pod: dict, pod_claim: dict) -> str | None:
        """Make sure the claim behind one pod entry exists; return a name to record, if new."""
        group_entry = self._group_claim_entry(pod, pod_claim)
        if group_entry is not None:
            return self._group_claim_name_for_pod(pod, pod_claim, *group_entry)
        if not pod_claim.get("resourceClaimTemplateName") or self._waits_for_group(pod):
            return None
        try:
            name, _ = rc.pod_claim_name(pod, pod_claim)
            if name is None:
                return None  # decided earlier: no claim needed
            claim = self._claims.lister.get(_meta(pod)["namespace"], name)
            if claim is not None and rc.is_owned_by(claim, pod):
                return None
            # Recorded claim deleted or owned by someone else: generate a new one.
        except rc.ClaimNotCreated:
            pass
        claim = await self._generate_claim(pod, pod_claim)
        return _meta(claim)["name"]

    def _group_claim_name_for_pod(self, pod: dict, pod_claim: dict, group: dict, entry: dict) -> str | None:
        """Copy the group's generated claim name into the pod status once the group has one."""
        if not entry.get("resourceClaimTemplateName"):
            return None  # a claim by name needs no status entry
        instance = pod_group_instance(pod)
        assert instance is not None
        if instance.is_workload_shape:
            claim = self._known_generated_claim(group, entry, _instance_annotations(instance))
            group_claim = _meta(claim)["name"] if claim is not None else None
            if group_claim is None:
                self._queue.add(_instance_key(instance))
        else:
            statuses = (group.get("status") or {}).get("resourceClaimStatuses") or []
            group_claim = next((s.get("resourceClaimName") for s in statuses if s.get("name") == entry["name"]),
                               None)
        if not group_claim:
            return None  # the group's own sync creates it, then re-enqueues this pod
        try:
            current, _ = rc.pod_claim_name(pod, pod_claim)
        except rc.ClaimNotCreated:
            current = None
        return group_claim if current != group_claim else None

    def _known_generated_claim(self, owner: dict, entry: dict, annotations: dict[str, str] | None) -> dict | None:
        """A claim generated for ``owner``'s entry, from the informer or our own recent creates."""
        known = self._claims.lister.by_index(CLAIM_OWNER_INDEX, _meta(owner)["uid"])
        known += [c for c in self._created.values() if rc.is_owned_by(c, owner)]
        return rc.find_generated_claim(known, owner, entry["name"], annotations)

    async def _generate_claim(self, owner: dict, entry: dict, instance: PodGroupInstance | None = None) -> dict:
        """Reuse the claim generated earlier for this entry, or create one from the template."""
        annotations = _instance_annotations(instance) if instance is not None else None
        namespace = _meta(owner)["namespace"]
        entry_key = (_meta(owner)["uid"], entry["name"], tuple(sorted((annotations or {}).items())))
        claim = self._known_generated_claim(owner, entry, annotations)
        if claim is None and entry_key in self._maybe_created:
            # An earlier create lost its answer: the informer may not show that claim yet.
            listed = (await self._api.list(RESOURCE_CLAIMS, namespace))["items"]
            claim = rc.find_generated_claim(listed, owner, entry["name"], annotations)
            if claim is not None:
                self._remember_created(claim)
        if claim is not None:
            self._maybe_created.discard(entry_key)
            return claim
        template_name = entry["resourceClaimTemplateName"]
        template = self._templates.lister.get(namespace, template_name)
        if template is None:
            raise _SyncError(f'resource claim template "{template_name}": '
                             f'resourceclaimtemplates.resource.k8s.io "{template_name}" not found')
        if not self._gates.DRAAdminAccess and rc.needs_admin_access(template):
            raise _SyncError("admin access is requested, but the feature is disabled")
        base_name = None
        if instance is not None:
            base_name = "-".join(p for p in (instance.workload, instance.pod_group, instance.replica_key) if p)
        body = rc.new_claim_from_template(template, owner, entry["name"], base_name=base_name,
                                          annotations=annotations)
        try:
            claim = await self._api.create(RESOURCE_CLAIMS, namespace, body)
        except (StatusError, *TRANSPORT_ERRORS) as err:
            if outcome_unknown(err):
                self._maybe_created.add(entry_key)
            raise _SyncError(f"create ResourceClaim {body['metadata']['generateName']}: {err}") from err
        self._maybe_created.discard(entry_key)
        self._remember_created(claim)
        return claim

    def _remember_created(self, claim: dict) -> None:
        """Keep a claim we know exists until the informer shows it."""
        if self._claims.lister.get(_meta(claim)["namespace"], _meta(claim)["name"]) is None:
            self._created[object_key(claim)] = claim

    async def _reserve_for_bound_pod(self, pod: dict) -> None:
        """A pod bound without the scheduler (spec.nodeName preset) still needs reservations."""
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
            try:
                name, check_owner = rc.pod_claim_name(pod, pod_claim)
            except rc.ClaimNotCreated:
                continue
            claim = self._claims.lister.get(_meta(pod)["namespace"], name) if name else None
            if claim is None or not rc.is_allocated(claim) or not rc.can_be_reserved(claim):
                continue
            group_entry = self._group_claim_entry(pod, pod_claim)
            instance = pod_group_instance(pod)
            if group_entry is not None and instance is not None:
                ref = rc.group_consumer_ref(group_entry[0], instance)
            elif check_owner and not rc.is_owned_by(claim, pod):
                continue
            else:
                ref = rc.pod_consumer_ref(pod)
            if rc.is_reserved_for(claim, ref, instance):
                continue
            updated = rc.with_reservations(claim, [*rc.reserved_for(claim), ref])
            await self._api.update(RESOURCE_CLAIMS, _meta(claim)["namespace"], updated, subresource="status")

    # -- pod groups ---------------------------------------------------------------------------

    async def _sync_group(self, namespace: str, name: str) -> None:
        assert self._groups is not None
        group = self._groups.lister.get(namespace, name)
        if group is None or _meta(group).get("deletionTimestamp"):
            return
        statuses = (group.get("status") or {}).get("resourceClaimStatuses") or []
        recorded = {s.get("name"): s.get("resourceClaimName") for s in statuses}
        new_statuses: dict[str, str] = {}
        for entry in (group.get("spec") or {}).get("resourceClaims") or []:
            if not entry.get("resourceClaimTemplateName"):
                continue
            existing = recorded.get(entry["name"])
            if existing:
                claim = self._claims.lister.get(namespace, existing) or self._created.get(key_for(namespace, existing))
                if claim is not None and not rc.is_owned_by(claim, group):
                    raise _SyncError(f"ResourceClaim {existing} recorded for {entry['name']} is not owned "
                                     f"by PodGroup {name}")
                if claim is not None:
                    continue
            try:
                claim = await self._generate_claim(group, entry)
            except (StatusError, _SyncError) as err:
                self._recorder.event(group, WARNING, FAILED_CLAIM_CREATION,
                                     f"PodGroupResourceClaim {entry['name']}: {err}")
                raise
            new_statuses[entry["name"]] = _meta(claim)["name"]
        if new_statuses:
            body = {"metadata": {"resourceVersion": _meta(group)["resourceVersion"]},
                    "status": {"resourceClaimStatuses": rc.merged_claim_statuses(statuses, new_statuses)}}
            await self._api.patch(PODGROUPS, namespace, name, body, subresource="status")

    async def _sync_instance(self, instance: PodGroupInstance) -> None:
        """Generate the template claims of one v1alpha1 pod-group instance, then tell its pods."""
        assert self._workloads is not None
        workload = self._workloads.lister.get(instance.namespace, instance.workload)
        if workload is None or _meta(workload).get("deletionTimestamp"):
            return
        for entry in group_resource_claims(workload, instance):
            if entry.get("resourceClaimTemplateName"):
                try:
                    await self._generate_claim(workload, entry, instance)
                except (StatusError, _SyncError) as err:
                    self._recorder.event(workload, WARNING, FAILED_CLAIM_CREATION,
                                         f"PodGroup {instance.pod_group} claim {entry['name']}: {err}")
                    raise
        for pod in self._pods.lister.by_index(POD_GROUP_INDEX, instance.key):
            self._enqueue_pod(pod, deleted=False)

    # -- claims -------------------------------------------------------------------------------

    async def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self._claims.lister.get(namespace, name)
        if claim is None:
            return
        with contextlib.suppress(NotFound):  # deleted meanwhile (e.g. by GC): nothing left to release
            await self._release_claim(claim)

    async def _release_claim(self, claim: dict) -> None:
        namespace = _meta(claim)["namespace"]
        current = rc.reserved_for(claim)
        valid = [ref for ref in current if await self._consumer_exists(namespace, ref)]
        if len(valid) < len(current):
            # Update, not patch: fail if the claim changed since we looked.
            claim = await self._api.update(RESOURCE_CLAIMS, namespace, rc.with_reservations(claim, valid),
                                           subresource="status")
            if rc.has_delete_protection(claim) and not rc.is_allocated(claim):
                claim = await self._api.update(RESOURCE_CLAIMS, namespace, rc.without_delete_protection(claim))
        elif rc.has_delete_protection(claim) and _meta(claim).get("deletionTimestamp") and not valid:
            if rc.is_allocated(claim):
                claim = await self._api.update(RESOURCE_CLAIMS, namespace, rc.with_reservations(claim, []),
                                               subresource="status")
            claim = await self._api.update(RESOURCE_CLAIMS, namespace, rc.without_delete_protection(claim))
        if not valid:
            await self._delete_if_owner_done(claim)

    async def _consumer_exists(self, namespace: str, ref: dict) -> bool:
        """Whether a ``reservedFor`` entry still names a consumer that may use the claim."""
        if not ref.get("apiGroup") and ref.get("resource") == "pods":
            if ref.get("uid") in self._deleted_uids:
                return False
            pod = self._pods.lister.get(namespace, ref.get("name", ""))
            if pod is None:
                # Maybe our cache is behind (the scheduler just reserved for a new pod): ask.
                pod = await self._get_or_none(PODS, namespace, ref.get("name", ""))
            return pod is not None and _meta(pod).get("uid") == ref.get("uid") and not is_pod_done(pod)
        if self._groups is None or self._workloads is None or ref.get("apiGroup") != SCHEDULING_GROUP:
            return True  # unknown consumer kinds are not ours to judge (nor groups with the gate off)
        if ref.get("resource") == PODGROUPS_RESOURCE:
            informer, gvr = self._groups, PODGROUPS
        elif ref.get("resource") == WORKLOADS_RESOURCE:
            informer, gvr = self._workloads, WORKLOADS_V1ALPHA1
        else:
            return True
        group = informer.lister.get(namespace, ref.get("name", ""))
        if group is None:
            group = await self._get_or_none(gvr, namespace, ref.get("name", ""))
        return group is not None and _meta(group).get("uid") == ref.get("uid")

    async def _get_or_none(self, gvr: GVR, namespace: str, name: str) -> dict | None:
        try:
            return await self._api.get(gvr, namespace, name)
        except NotFound:
            return None

    async def _delete_if_owner_done(self, claim: dict) -> None:
        """A generated claim of a pod that will never run is deleted now rather than by GC later."""
        owner = rc.controlling_pod(claim)
        if owner is None:
            return
        meta = _meta(claim)
        if meta["uid"] in self._deleted_claims:
            return
        pod = self._pods.lister.get(meta["namespace"], owner[0])
        if pod is None or (_meta(pod).get("uid") == owner[1] and not is_pod_done(pod)):
            return  # unknown pod (GC decides) or a pod that still needs the claim
        with contextlib.suppress(NotFound, Conflict):   # gone, or the name holds another claim now
            await self._api.delete(RESOURCE_CLAIMS, meta["namespace"], meta["name"],
                                   preconditions={"uid": meta["uid"]})
        _remember(self._deleted_claims, meta["uid"])


class _SyncError(Exception):
    """A sync failed for a reason worth an Event and a retry (not an API error)."""
