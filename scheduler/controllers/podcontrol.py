"""What every pod-owning controller shares: resources, expectations, pod creation and adoption.

- :class:`Expectations` (``ControllerExpectations``): per owner, the creates and deletes issued but
  not yet seen through the informer.  A controller only changes its pod count once they are all
  observed (or five minutes passed), so a lagging cache never makes it create twice.
- :class:`PodControl` (``RealPodControl``): create pods from a template in slow-start batches
  (1, 2, 4, …; the first failing batch stops the rest) and delete pods, with upstream's events.
- :func:`claim_objects` (``ControllerRefManager``): adopt matching orphans, release owned objects
  that no longer match, never touch what another controller owns.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fakeapi.scheduler.client import GVR, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import Informer, Lister
from fakeapi.scheduler.rules.workloads import controller_of, controller_ref

from fakeapi.errors import Conflict, NotFound, StatusError
from fakeapi.machinery.selectors import NOTHING, SelectorError, label_selector_from_dict

log = logging.getLogger(__name__)

DEPLOYMENTS = GVR("apps", "v1", "deployments", True)
REPLICASETS = GVR("apps", "v1", "replicasets", True)
STATEFULSETS = GVR("apps", "v1", "statefulsets", True)
DAEMONSETS = GVR("apps", "v1", "daemonsets", True)
CONTROLLER_REVISIONS = GVR("apps", "v1", "controllerrevisions", True)
JOBS = GVR("batch", "v1", "jobs", True)
CRONJOBS = GVR("batch", "v1", "cronjobs", True)
PDBS = GVR("policy", "v1", "poddisruptionbudgets", True)

CONTROLLER_INDEX = "workloads/controller-uid"
ORPHAN_INDEX = "workloads/orphans"
EXPECTATIONS_TIMEOUT = 300.0
BURST_REPLICAS = 500
Key = tuple[str, str]


def owner_key(obj: dict[str, Any]) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


def controller_uids(obj: dict[str, Any]) -> list[str]:
    """The UID of the object's controller, as an index value."""
    ref = controller_of(obj)
    return [ref["uid"]] if ref and ref.get("uid") else []


def _orphan_namespace(obj: dict[str, Any]) -> list[str]:
    return [] if controller_of(obj) is not None else [(obj.get("metadata") or {}).get("namespace") or ""]


def index_by_controller(informer: Informer) -> None:
    """Index ``informer`` by controller UID, and its orphans by namespace (shared by every
    controller that asks), so a sync reads its own objects and adoption candidates, not all."""
    if not informer.has_index(CONTROLLER_INDEX):  # else another controller added both
        informer.add_index(CONTROLLER_INDEX, controller_uids)
        informer.add_index(ORPHAN_INDEX, _orphan_namespace)


def controlled_by(informer: Informer, uid: str) -> list[dict[str, Any]]:
    """The cached objects whose controller has ``uid`` (after :func:`index_by_controller`)."""
    return informer.lister.by_index(CONTROLLER_INDEX, uid)


def claim_candidates(informer: Informer, owner: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``owner`` may claim: the objects it controls and the orphans of its namespace."""
    meta = owner["metadata"]
    return controlled_by(informer, meta["uid"]) + informer.lister.by_index(ORPHAN_INDEX, meta["namespace"])


def controlling_owner(owners: Lister, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The cached ``kind`` controlling ``obj`` (same name and UID), or None."""
    ref = controller_of(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    owner = owners.get(obj["metadata"].get("namespace"), ref["name"])
    return owner if owner is not None and owner["metadata"]["uid"] == ref.get("uid") else None


@dataclass
class _Expected:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)
    since: float = 0.0


class Expectations:
    """Creates and deletes in flight, per owner key."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._by_key: dict[Key, _Expected] = {}

    def satisfied(self, key: Key) -> bool:
        """Nothing in flight (or the expectation is older than five minutes)."""
        expected = self._by_key.get(key)
        if expected is None:
            return True
        if expected.adds <= 0 and not expected.deletes:
            return True
        return self._clock.now() - expected.since > EXPECTATIONS_TIMEOUT

    def expect(self, key: Key, adds: int = 0, deletes: set[str] | None = None) -> None:
        self._by_key[key] = _Expected(adds, set(deletes or ()), self._clock.now())

    def creation_observed(self, key: Key) -> None:
        expected = self._by_key.get(key)
        if expected is not None:
            expected.adds -= 1

    def deletion_observed(self, key: Key, uid: str) -> None:
        expected = self._by_key.get(key)
        if expected is not None:
            expected.deletes.discard(uid)

    def forget(self, key: Key) -> None:
        self._by_key.pop(key, None)


class PodControl:
    """Creates and deletes pods for an owner, reporting upstream's events on it."""

    def __init__(self, api: ApiClient, recorder: EventRecorder) -> None:
        self._api = api
        self._recorder = recorder

    async def create(self, owner: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any] | None:
        """Create one pod; None (and a FailedCreate event) when the server refuses."""
        namespace = owner["metadata"]["namespace"]
        try:
            created = await self._api.create(PODS, namespace, pod)
        except StatusError as exc:
            self._recorder.event(owner, WARNING, "FailedCreate", f"Error creating: {exc}")
            raise
        self._recorder.event(owner, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
        return created

    async def delete(self, owner: dict[str, Any], pod: dict[str, Any]) -> None:
        """Delete one pod (gone already is fine)."""
        meta = pod["metadata"]
        try:
            await self._api.delete(PODS, meta["namespace"], meta["name"], preconditions={"uid": meta["uid"]})
        except NotFound:
            return
        except StatusError as exc:
            self._recorder.event(owner, WARNING, "FailedDelete", f"Error deleting: {exc}")
            raise
        self._recorder.event(owner, NORMAL, "SuccessfulDelete", f"Deleted pod: {meta['name']}")


async def slow_start(count: int, create: Callable[[int], Awaitable[Any]]) -> tuple[int, StatusError | None]:
    """``slowStartBatch``: call ``create(i)`` for i < count in batches 1, 2, 4, …; stop after the
    first batch with an error.  Returns (successes, first error)."""
    done, batch = 0, 1
    while done < count:
        size = min(batch, count - done)
        results = await asyncio.gather(*(create(done + i) for i in range(size)), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        done += size - len(errors)
        if errors:
            first = errors[0]
            if not isinstance(first, StatusError):
                raise first
            return done, first
        batch *= 2
    return done, None


async def claim_objects(api: ApiClient, gvr: GVR, owner: dict[str, Any], selector: dict[str, Any] | None,
                        candidates: list[dict[str, Any]], *,
                        adopt_patch: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The objects ``owner`` controls after adopting matching orphans and releasing non-matching ones.

    ``adopt_patch`` adds metadata to an adopted object (a Job's tracking finalizer)."""
    uid = owner["metadata"]["uid"]
    deleting = bool(owner["metadata"].get("deletionTimestamp"))
    try:
        parsed = label_selector_from_dict(selector) if selector and (
            selector.get("matchLabels") or selector.get("matchExpressions")) else NOTHING
    except SelectorError:
        parsed = NOTHING  # validation keeps these out; adopt nothing rather than fail
    claimed: list[dict[str, Any]] = []
    for obj in candidates:
        ref = controller_of(obj)
        meta = obj["metadata"]
        if ref is not None and ref.get("uid") != uid:
            continue
        matches = parsed.matches(meta.get("labels") or {})
        if ref is not None:
            if matches or deleting:
                claimed.append(obj)
                continue
            refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid]
            await _patch_quietly(api, gvr, obj, {"metadata": {"uid": meta["uid"], "ownerReferences": refs or None}})
            continue
        if not matches or deleting or meta.get("deletionTimestamp"):
            continue
        refs = [*(meta.get("ownerReferences") or []), controller_ref(owner)]
        patch: dict[str, Any] = {"metadata": {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"],
                                              "ownerReferences": refs, **(adopt_patch(obj) if adopt_patch else {})}}
        adopted = await _patch_quietly(api, gvr, obj, patch)
        if adopted is not None:
            claimed.append(adopted)
    return claimed


async def _patch_quietly(api: ApiClient, gvr: GVR, obj: dict[str, Any], patch: dict[str, Any]) -> dict | None:
    meta = obj["metadata"]
    try:
        return await api.patch(gvr, meta.get("namespace"), meta["name"], patch)
    except (NotFound, Conflict):
        return None  # gone or changed meanwhile: the informer event brings the next sync
