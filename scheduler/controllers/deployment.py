"""The Deployment controller (``pkg/controller/deployment``).

Per Deployment: claim its ReplicaSets, find the one whose template equals the Deployment's
(ignoring ``pod-template-hash``) or create it (``<deployment>-<hash>``, hash label on selector and
template, revision annotations, hash collisions bump ``status.collisionCount``), then

- paused: only scale, Progressing ``Unknown``/``DeploymentPaused``;
- a scaling event (an active set's ``desired-replicas`` differs from ``spec.replicas``): scale
  the active sets proportionally;
- RollingUpdate: grow the new set within ``maxSurge``, shrink old ones within
  ``maxUnavailable`` (unhealthy replicas first, then oldest sets first);
- Recreate: old sets to 0, wait until their pods are gone, then the new set to ``replicas``.

Status sums the sets; conditions ``Available`` and ``Progressing`` use upstream's reasons and
messages, the progress deadline is measured with the control plane's clock, and surplus old
sets beyond ``revisionHistoryLimit`` are deleted once the rollout completes.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    DEPLOYMENTS,
    REPLICASETS,
    Key,
    claim_objects,
    owner_key,
)
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules import deployments as du
from fakeapi.scheduler.rules.workloads import (
    POD_TEMPLATE_HASH,
    condition,
    controller_of,
    controller_ref,
    is_pod_active,
    parse_time,
    selects,
    set_condition,
    template_hash,
    without_hash,
)
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, NotFound

log = logging.getLogger(__name__)

class DeploymentController:
    """Rolls Deployments out through ReplicaSets."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self._deployments = factory.informer(DEPLOYMENTS)
        self._sets = factory.informer(REPLICASETS)
        self._pods = factory.informer(PODS)
        self._deployments.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new))
        self._sets.add_event_handler(self._on_set, lambda old, new: self._on_set(new), self._on_set)
        self._pods.add_event_handler(on_delete=self._on_pod_delete)

    async def run(self) -> None:
        """Sync Deployments until cancelled."""
        await process(self._queue, self._sync, name="deployment-controller", workers=2)

    def _enqueue(self, deployment: dict[str, Any]) -> None:
        self._queue.add(owner_key(deployment))

    def _on_set(self, rs: dict[str, Any]) -> None:
        ref = controller_of(rs)
        namespace = rs["metadata"]["namespace"]
        if ref is not None and ref.get("kind") == "Deployment":
            self._queue.add((namespace, ref["name"]))
            return
        for deployment in self._deployments.lister.list(namespace):
            if selects((deployment.get("spec") or {}).get("selector"), rs):
                self._enqueue(deployment)

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        # Recreate waits for the last old pod to go.
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self._sets.lister.get(pod["metadata"]["namespace"], ref["name"])
        if rs is not None:
            self._on_set(rs)

    # -- sync -------------------------------------------------------------------------------------
    async def _sync(self, key: Key) -> None:
        namespace, name = key
        deployment = self._deployments.lister.get(namespace, name)
        if deployment is None:
            return
        d = copy.deepcopy(deployment)
        spec = d.get("spec") or {}
        selector = spec.get("selector") or {}
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            self._recorder.event(d, WARNING, "SelectingAll",
                                 "This deployment is selecting all pods. A non-empty selector is required.")
            await self._patch_status(d, {**(d.get("status") or {}),
                                         "observedGeneration": d["metadata"].get("generation", 1)})
            return
        candidates = self._sets.lister.list(namespace)
        sets = await claim_objects(self._api, REPLICASETS, d, selector, candidates)
        if d["metadata"].get("deletionTimestamp"):
            await self._sync_status(d, sets, self._find_new(d, sets))
            return
        await self._check_paused(d)
        if spec.get("paused"):
            await self._scale_only(d, sets)
            return
        if self._is_scaling_event(d, sets):
            await self._scale_only(d, sets)
            return
        if ((spec.get("strategy") or {}).get("type")) == "Recreate":
            await self._recreate(d, sets)
        else:
            await self._rolling(d, sets)

    def _find_new(self, d: dict[str, Any], sets: list[dict[str, Any]]) -> dict[str, Any] | None:
        """``FindNewReplicaSet``: the oldest set whose template equals the Deployment's."""
        wanted = without_hash((d.get("spec") or {}).get("template"))
        matching = [rs for rs in sets if without_hash((rs.get("spec") or {}).get("template")) == wanted]
        matching.sort(key=lambda r: (parse_time(r["metadata"].get("creationTimestamp")) or 0, r["metadata"]["name"]))
        return matching[0] if matching else None

    def _is_scaling_event(self, d: dict[str, Any], sets: list[dict[str, Any]]) -> bool:
        desired = str(du.replicas(d))
        for rs in sets:
            if du.size(rs) == 0:
                continue
            annotation = (rs["metadata"].get("annotations") or {}).get(du.DESIRED_REPLICAS)
            if annotation is not None and annotation != desired:
                return True
        return False

    async def _check_paused(self, d: dict[str, Any]) -> None:
        """``checkPausedConditions``: Progressing Unknown DeploymentPaused / DeploymentResumed."""
        if (d.get("spec") or {}).get("progressDeadlineSeconds") is None:
            return
        progressing = condition(d, "Progressing")
        paused = bool((d.get("spec") or {}).get("paused"))
        if paused and (progressing is None or progressing.get("reason") != "DeploymentPaused"):
            reason, message = "DeploymentPaused", "Deployment is paused"
        elif not paused and progressing is not None and progressing.get("reason") == "DeploymentPaused":
            reason, message = "DeploymentResumed", "Deployment is resumed"
        else:
            return
        status = dict(d.get("status") or {})
        status["conditions"] = set_condition(status.get("conditions") or [], "Progressing", "Unknown", reason,
                                             message, self._clock.rfc3339(), lastUpdateTime=self._clock.rfc3339())
        d["status"] = status
        await self._patch_status(d, status)

    # -- the new ReplicaSet -----------------------------------------------------------------------
    async def _new_rs(self, d: dict[str, Any], sets: list[dict[str, Any]], create: bool) -> dict[str, Any] | None:
        """``getNewReplicaSet``: the existing new set with its revision brought up to date, or a new one."""
        existing = self._find_new(d, sets)
        olds = [rs for rs in sets if rs is not existing]
        new_revision = max((du.revision(rs) for rs in olds), default=0) + 1
        if existing is not None:
            annotations = du.rs_annotations(d, existing, new_revision)
            min_ready = (d.get("spec") or {}).get("minReadySeconds")
            if annotations != (existing["metadata"].get("annotations") or {}) or \
                    (existing.get("spec") or {}).get("minReadySeconds") != min_ready:
                meta = existing["metadata"]
                existing = await self._api.patch(REPLICASETS, meta["namespace"], meta["name"], {
                    "metadata": {"annotations": annotations}, "spec": {"minReadySeconds": min_ready}})
            await self._set_revision(d, existing)
            return existing
        if not create:
            return None
        return await self._create_new(d, sets, new_revision)

    async def _create_new(self, d: dict[str, Any], sets: list[dict[str, Any]], new_revision: int) -> dict[str, Any]:
        spec = d.get("spec") or {}
        status = d.get("status") or {}
        collisions = status.get("collisionCount")
        template = copy.deepcopy(spec.get("template") or {})
        digest = template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = digest
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = digest
        name = f"{d['metadata']['name']}-{digest}"
        annotations = du.rs_annotations(d, None, new_revision) | du.replica_annotations(d)
        size = du.new_rs_replicas(d, sets, None)
        body = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": name, "namespace": d["metadata"]["namespace"],
                             "labels": template["metadata"]["labels"], "annotations": annotations,
                             "ownerReferences": [controller_ref(d)]},
                "spec": {"replicas": size, "minReadySeconds": spec.get("minReadySeconds", 0),
                         "selector": selector, "template": template}}
        try:
            created = await self._api.create(REPLICASETS, d["metadata"]["namespace"], body)
        except AlreadyExists:
            clash = await self._api.get(REPLICASETS, d["metadata"]["namespace"], name)
            if (controller_of(clash) or {}).get("uid") == d["metadata"]["uid"] and \
                    without_hash(clash.get("spec", {}).get("template")) == without_hash(spec.get("template")):
                return clash
            # A hash collision: count it and retry with the next hash.
            await self._patch_status(d, {**status, "collisionCount": (collisions or 0) + 1})
            raise
        self._recorder.event(d, NORMAL, "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {size}")
        if spec.get("progressDeadlineSeconds") is not None:
            conditions = set_condition((d.get("status") or {}).get("conditions") or [], "Progressing", "True",
                                       "NewReplicaSetCreated", f'Created new replica set "{name}"',
                                       self._clock.rfc3339(), lastUpdateTime=self._clock.rfc3339())
            d["status"] = {**(d.get("status") or {}), "conditions": conditions}
        await self._set_revision(d, created)
        return created

    async def _set_revision(self, d: dict[str, Any], rs: dict[str, Any]) -> None:
        revision = (rs["metadata"].get("annotations") or {}).get(du.REVISION)
        if revision and (d["metadata"].get("annotations") or {}).get(du.REVISION) != revision:
            meta = d["metadata"]
            updated = await self._api.patch(DEPLOYMENTS, meta["namespace"], meta["name"],
                                            {"metadata": {"annotations": {du.REVISION: revision}}})
            d["metadata"] = updated["metadata"]

    async def _scale(self, d: dict[str, Any], rs: dict[str, Any], new_size: int) -> dict[str, Any]:
        """Scale one set and stamp the replica annotations (``scaleReplicaSet``)."""
        current = du.size(rs)
        annotations = du.replica_annotations(d)
        if current == new_size and all((rs["metadata"].get("annotations") or {}).get(k) == v
                                       for k, v in annotations.items()):
            return rs
        meta = rs["metadata"]
        updated = await self._api.patch(REPLICASETS, meta["namespace"], meta["name"], {
            "metadata": {"annotations": annotations}, "spec": {"replicas": new_size}})
        if current != new_size:
            verb = "up" if new_size > current else "down"
            self._recorder.event(d, NORMAL, "ScalingReplicaSet",
                                 f"Scaled {verb} replica set {meta['name']} from {current} to {new_size}")
        return updated

    # -- strategies -------------------------------------------------------------------------------
    async def _scale_only(self, d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        """``sync``: scale the sets (proportionally when several are active), no rollout."""
        new_rs = await self._new_rs(d, sets, create=False)
        active = [rs for rs in sets if du.size(rs) > 0]
        if not active and new_rs is not None:
            active = [new_rs]
        elif not active and sets:
            active = [max(sets, key=du.revision)]
        if len(active) == 1:
            target = new_rs if new_rs is not None and active[0]["metadata"]["name"] == new_rs["metadata"]["name"] \
                else active[0]
            updated = [await self._scale(d, target, du.replicas(d))]
        else:
            sizes = du.proportions(d, active)
            updated = [await self._scale(d, rs, sizes[rs["metadata"]["name"]]) for rs in active]
        by_name = {rs["metadata"]["name"]: rs for rs in updated}
        sets = [by_name.get(rs["metadata"]["name"], rs) for rs in sets]
        if new_rs is not None:
            new_rs = by_name.get(new_rs["metadata"]["name"], new_rs)
        await self._cleanup_if_complete(d, sets, new_rs)
        await self._sync_status(d, sets, new_rs)

    async def _rolling(self, d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        new_rs = await self._new_rs(d, sets, create=True)
        assert new_rs is not None
        sets = [rs for rs in sets if rs["metadata"]["name"] != new_rs["metadata"]["name"]] + [new_rs]
        olds = [rs for rs in sets if rs["metadata"]["name"] != new_rs["metadata"]["name"]]
        target = du.new_rs_replicas(d, sets, new_rs)
        if du.size(new_rs) > du.replicas(d):
            target = du.replicas(d)
        if target != du.size(new_rs) or not self._annotated(d, new_rs):
            scaled = await self._scale(d, new_rs, target)
            if du.size(scaled) != du.size(new_rs):
                await self._sync_status(d, [*olds, scaled], scaled)
                return
            new_rs = scaled
        budget = du.max_scaled_down(d, [*olds, new_rs], new_rs)
        if budget > 0 and any(du.size(rs) for rs in olds):
            changes = du.scale_down_old([rs for rs in olds if du.size(rs)], budget, unhealthy_only=True)
            done = {rs["metadata"]["name"]: size for rs, size in changes}
            budget -= sum(du.size(rs) - size for rs, size in changes)
            remaining = [rs for rs in olds if du.size(rs)]
            _, unavailable = du.fenceposts(d)
            available = sum(du.status_of(rs, "availableReplicas") for rs in [*olds, new_rs])
            allowed = available - (du.replicas(d) - unavailable)
            if allowed > 0:
                adjusted = [{**rs, "spec": {**rs["spec"], "replicas": done.get(rs["metadata"]["name"], du.size(rs))},
                             "status": {**(rs.get("status") or {}),
                                        "availableReplicas": min(du.status_of(rs, "availableReplicas"),
                                                                 done.get(rs["metadata"]["name"], du.size(rs)))}}
                            for rs in remaining]
                for rs, size in du.scale_down_old(adjusted, allowed, unhealthy_only=False):
                    done[rs["metadata"]["name"]] = size
            if done:
                olds = [await self._scale(d, rs, done[rs["metadata"]["name"]]) if rs["metadata"]["name"] in done
                        else rs for rs in olds]
                await self._sync_status(d, [*olds, new_rs], new_rs)
                return
        await self._cleanup_if_complete(d, [*olds, new_rs], new_rs)
        await self._sync_status(d, [*olds, new_rs], new_rs)

    def _annotated(self, d: dict[str, Any], rs: dict[str, Any]) -> bool:
        return all((rs["metadata"].get("annotations") or {}).get(k) == v for k, v in du.replica_annotations(d).items())

    async def _recreate(self, d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        new_rs = await self._new_rs(d, sets, create=False)
        olds = [rs for rs in sets if new_rs is None or rs["metadata"]["name"] != new_rs["metadata"]["name"]]
        scaled = False
        for rs in olds:
            if du.size(rs):
                await self._scale(d, rs, 0)
                scaled = True
        if scaled:
            await self._sync_status(d, sets, new_rs)
            return
        old_uids = {rs["metadata"]["uid"] for rs in olds}
        running = [p for p in self._pods.lister.list(d["metadata"]["namespace"])
                   if (controller_of(p) or {}).get("uid") in old_uids and is_pod_active(p)]
        if running:
            await self._sync_status(d, sets, new_rs)
            return
        if new_rs is None:
            new_rs = await self._new_rs(d, sets, create=True)
            assert new_rs is not None
        new_rs = await self._scale(d, new_rs, du.replicas(d))
        sets = [*olds, new_rs]
        await self._cleanup_if_complete(d, sets, new_rs)
        await self._sync_status(d, sets, new_rs)

    async def _cleanup_if_complete(self, d: dict[str, Any], sets: list[dict[str, Any]],
                                   new_rs: dict[str, Any] | None) -> None:
        """``cleanupDeployment``: old sets beyond ``revisionHistoryLimit`` go once they are empty."""
        if not du.is_complete(d, self._status(d, sets, new_rs)):
            return
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        olds = sorted((rs for rs in sets if new_rs is None or rs["metadata"]["name"] != new_rs["metadata"]["name"]),
                      key=du.revision)
        for rs in olds[:max(len(olds) - int(limit), 0)]:
            status = rs.get("status") or {}
            if du.size(rs) or status.get("replicas") or \
                    status.get("observedGeneration", 0) < rs["metadata"].get("generation", 1):
                continue
            try:
                await self._api.delete(REPLICASETS, rs["metadata"]["namespace"], rs["metadata"]["name"],
                                       preconditions={"uid": rs["metadata"]["uid"]})
            except NotFound:
                pass

    # -- status -----------------------------------------------------------------------------------
    def _status(self, d: dict[str, Any], sets: list[dict[str, Any]], new_rs: dict[str, Any] | None) -> dict[str, Any]:
        available = sum(du.status_of(rs, "availableReplicas") for rs in sets)
        return {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": sum(du.status_of(rs, "replicas") for rs in sets),
            "updatedReplicas": du.status_of(new_rs, "replicas") if new_rs is not None else 0,
            "readyReplicas": sum(du.status_of(rs, "readyReplicas") for rs in sets),
            "availableReplicas": available,
            "unavailableReplicas": max(sum(du.size(rs) for rs in sets) - available, 0),
            "terminatingReplicas": sum(du.status_of(rs, "terminatingReplicas") for rs in sets),
        }

    async def _sync_status(self, d: dict[str, Any], sets: list[dict[str, Any]],
                           new_rs: dict[str, Any] | None) -> None:
        """``syncRolloutStatus``: counts, Available, Progressing (with the deadline), ReplicaFailure."""
        current = d.get("status") or {}
        status = self._status(d, sets, new_rs)
        if current.get("collisionCount") is not None:
            status["collisionCount"] = current["collisionCount"]
        now = self._clock.rfc3339()
        conditions = list(current.get("conditions") or [])
        _, unavailable = du.fenceposts(d)
        if status["availableReplicas"] >= du.replicas(d) - unavailable:
            conditions = set_condition(conditions, "Available", "True", "MinimumReplicasAvailable",
                                       "Deployment has minimum availability.", now, lastUpdateTime=now)
        else:
            conditions = set_condition(conditions, "Available", "False", "MinimumReplicasUnavailable",
                                       "Deployment does not have minimum availability.", now, lastUpdateTime=now)
        deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
        if deadline is None:
            conditions = [c for c in conditions if c.get("type") != "Progressing"]
        elif not (d.get("spec") or {}).get("paused"):
            conditions = self._progressing(d, current, status, conditions, new_rs, int(deadline))
        failures = [c for rs in sets for c in (rs.get("status") or {}).get("conditions") or []
                    if c.get("type") == "ReplicaFailure"]
        conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"] + failures[:1]
        status["conditions"] = conditions
        if any(current.get(k) != v for k, v in status.items()):
            await self._patch_status(d, status)

    def _progressing(self, d: dict[str, Any], current: dict[str, Any], status: dict[str, Any],
                     conditions: list[dict[str, Any]], new_rs: dict[str, Any] | None,
                     deadline: int) -> list[dict[str, Any]]:
        now = self._clock.rfc3339()
        subject = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs is not None \
            else f'Deployment "{d["metadata"]["name"]}"'
        old = condition({"status": {"conditions": conditions}}, "Progressing")
        if du.is_complete(d, status):
            return set_condition(conditions, "Progressing", "True", "NewReplicaSetAvailable",
                                 f"{subject} has successfully progressed.", now,
                                 lastUpdateTime=now if (old or {}).get("reason") != "NewReplicaSetAvailable"
                                 else old.get("lastUpdateTime", now))
        progressed = (status["updatedReplicas"] > current.get("updatedReplicas", 0)
                      or status["readyReplicas"] > current.get("readyReplicas", 0)
                      or status["availableReplicas"] > current.get("availableReplicas", 0)
                      or status["replicas"] - status["updatedReplicas"]
                      < current.get("replicas", 0) - current.get("updatedReplicas", 0)
                      or old is None or old.get("status") == "Unknown"
                      or (old.get("reason") == "NewReplicaSetAvailable"))
        if progressed:
            conditions = set_condition(conditions, "Progressing", "True", "ReplicaSetUpdated",
                                       f"{subject} is progressing.", now, lastUpdateTime=now)
            self._queue_after(d, deadline)
            return conditions
        last_update = parse_time((old or {}).get("lastUpdateTime")) or self._clock.now()
        if old is not None and old.get("reason") != "ProgressDeadlineExceeded" \
                and last_update + deadline <= self._clock.now():
            return set_condition(conditions, "Progressing", "False", "ProgressDeadlineExceeded",
                                 f"{subject} has timed out progressing.", now, lastUpdateTime=now)
        if old is not None and old.get("reason") != "ProgressDeadlineExceeded":
            self._queue_after(d, last_update + deadline - self._clock.now())
        return conditions

    def _queue_after(self, d: dict[str, Any], seconds: float) -> None:
        key = owner_key(d)
        self._queue.add_after(key, seconds)

    async def _patch_status(self, d: dict[str, Any], status: dict[str, Any]) -> None:
        meta = d["metadata"]
        try:
            await self._api.patch(DEPLOYMENTS, meta["namespace"], meta["name"], {"status": status},
                                  subresource="status")
        except NotFound:
            pass
