"""The Job controller (``pkg/controller/job/job_controller.go``) with KEP-5547.

Per Job, in this order:

1. **Workload and PodGroup** (gate ``WorkloadWithJob``): a Job with no controller owner and no
   ``schedulingGroup`` in its template gets, while it has never started, a Workload
   ``<job>-<hash>`` (controllerRef and controller owner: the Job; one template ``<job>-pgt-0``
   compiled from ``spec.scheduling``, basic when omitted) and a PodGroup (controller owner: the
   Job; non-controller owner: the Workload).  Its pods name the PodGroup in
   ``spec.schedulingGroup``; a gang's ``minCount`` follows ``parallelism``.
2. **Counting** finished pods through ``status.uncountedTerminatedPods`` and the
   ``batch.kubernetes.io/job-tracking`` finalizer, so no pod is counted twice or lost.
3. **Terminal checks**: podFailurePolicy FailJob, ``backoffLimit``, ``activeDeadlineSeconds``,
   successPolicy, completions; the interim ``FailureTarget``/``SuccessCriteriaMet`` first, the
   final ``Failed``/``Complete`` (same reason and message) once no pod is left running.
4. **Suspend/resume**, then **pods**: NonIndexed or Indexed (lowest missing indexes first, the
   completion index annotation/label, hostname and ``JOB_COMPLETION_INDEX``), replacements
   after the failure backoff (10 s doubling, 10 min cap, on the control plane's clock).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fakeapi.scheduler.client import PODGROUPS, PODS, WORKLOADS_V1BETA1, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    JOBS,
    Expectations,
    Key,
    PodControl,
    claim_candidates,
    claim_objects,
    controlled_by,
    controlling_owner,
    index_by_controller,
    owner_key,
    slow_start,
)
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules import jobs as jr
from fakeapi.scheduler.rules.pods import is_assigned, is_pod_terminal, is_ready
from fakeapi.scheduler.rules.workloads import (
    condition,
    controller_of,
    controller_ref,
    format_intervals,
    has_true_condition,
    is_pod_active,
    is_pod_terminating,
    parse_intervals,
    parse_time,
    pod_from_template,
    set_condition,
)
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.config import FeatureGates
from fakeapi.errors import AlreadyExists, NotFound

log = logging.getLogger(__name__)

MAX_PODS_PER_SYNC = 500


def _finished_pod(pod: dict[str, Any], job: dict[str, Any]) -> str | None:
    """"Succeeded"/"Failed" for a pod that counts as finished, else None."""
    if is_pod_terminal(pod):
        return pod["status"]["phase"]
    replacement = (job.get("spec") or {}).get("podReplacementPolicy")
    if pod["metadata"].get("deletionTimestamp") and replacement != "Failed":
        return "Failed"  # a deleted, unfinished pod counts as failed unless only failed pods are replaced
    return None


class JobController:
    """Runs Jobs' pods to completion (or failure)."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock,
                 gates: FeatureGates) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._control = PodControl(api, recorder)
        self._expectations = Expectations(clock)
        self._workload_gate = gates.WorkloadWithJob and gates.GenericWorkload
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        # Job UID -> (failures since the last success, when the last one was counted).
        self._failures: dict[str, tuple[int, float]] = {}
        self._jobs = factory.informer(JOBS)
        self._pods = factory.informer(PODS)
        index_by_controller(self._pods)
        self._jobs.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), self._on_job_delete)
        self._pods.add_event_handler(self._on_pod_add, lambda old, new: self._on_pod(new), self._on_pod_delete)
        if self._workload_gate:
            self._workloads = factory.informer(WORKLOADS_V1BETA1)
            self._groups = factory.informer(PODGROUPS)
            index_by_controller(self._workloads)
            index_by_controller(self._groups)

    async def run(self) -> None:
        """Sync Jobs until cancelled."""
        await process(self._queue, self._sync, name="job-controller", workers=2)

    # -- handlers ---------------------------------------------------------------------------------
    def _enqueue(self, job: dict[str, Any]) -> None:
        self._queue.add(owner_key(job))

    def _on_job_delete(self, job: dict[str, Any]) -> None:
        self._expectations.forget(owner_key(job))
        self._failures.pop(job["metadata"]["uid"], None)
        for pod in controlled_by(self._pods, job["metadata"]["uid"]):
            self._queue.add(("", f"orphan/{pod['metadata']['namespace']}/{pod['metadata']['name']}"))

    def _owner(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        return controlling_owner(self._jobs.lister, pod, "Job")

    def _on_pod_add(self, pod: dict[str, Any]) -> None:
        job = self._owner(pod)
        if job is not None:
            self._expectations.creation_observed(owner_key(job))
        self._on_pod(pod)

    def _on_pod(self, pod: dict[str, Any]) -> None:
        job = self._owner(pod)
        if job is not None:
            self._enqueue(job)
        elif jr.TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or []):
            self._queue.add(("", f"orphan/{pod['metadata']['namespace']}/{pod['metadata']['name']}"))

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        job = self._owner(pod)
        if job is not None:
            self._expectations.deletion_observed(owner_key(job), pod["metadata"]["uid"])
            self._enqueue(job)

    def _after(self, job: dict[str, Any], seconds: float) -> None:
        key = owner_key(job)
        self._queue.add_after(key, seconds)

    # -- sync -------------------------------------------------------------------------------------
    async def _sync(self, key: Key) -> None:
        namespace, name = key
        if not namespace and name.startswith("orphan/"):
            await self._release_orphan(*name.split("/")[1:])
            return
        cached = self._jobs.lister.get(namespace, name)
        if cached is None:
            return
        job = copy.deepcopy(cached)
        spec = job.get("spec") or {}
        if spec.get("managedBy") not in (None, jr.JOB_CONTROLLER):
            return  # another controller runs this Job
        pods = await claim_objects(self._api, PODS, job, spec.get("selector"), self._candidates(job),
                                   adopt_patch=self._adoption_patch)
        if jr.is_finished(job):
            await self._remove_finalizers(job, [p for p in pods if self._has_finalizer(p)])
            return
        group = await self._ensure_pod_group(job, pods)
        job, pods = await self._track(job, pods)
        await self._reconcile(job, pods, group)

    def _candidates(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        return [p for p in claim_candidates(self._pods, job) if controller_of(p) is not None or is_pod_active(p)]

    @staticmethod
    def _adoption_patch(pod: dict[str, Any]) -> dict[str, Any]:
        """An adopted pod gets the tracking finalizer too (the list is replaced whole)."""
        finalizers = pod["metadata"].get("finalizers") or []
        return {"finalizers": [*finalizers, jr.TRACKING_FINALIZER]} if jr.TRACKING_FINALIZER not in finalizers else {}

    @staticmethod
    def _has_finalizer(pod: dict[str, Any]) -> bool:
        return jr.TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or [])

    async def _release_orphan(self, namespace: str, name: str) -> None:
        pod = self._pods.lister.get(namespace, name)
        if pod is None or not self._has_finalizer(pod) or self._owner(pod) is not None:
            return
        await self._remove_finalizers(None, [pod])

    async def _remove_finalizers(self, job: dict[str, Any] | None, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            meta = pod["metadata"]
            finalizers = [f for f in meta.get("finalizers") or [] if f != jr.TRACKING_FINALIZER]
            try:
                await self._api.patch(PODS, meta["namespace"], meta["name"], {
                    "metadata": {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"],
                                 "finalizers": finalizers or None}})
            except NotFound:
                continue

    # -- KEP-5547 ---------------------------------------------------------------------------------
    async def _ensure_pod_group(self, job: dict[str, Any], pods: list[dict[str, Any]]) -> str | None:
        """The PodGroup the Job's pods join (created for a new Job), or None when not managed."""
        if not self._workload_gate or jr.management_mode(job, True) != "both":
            return None
        uid = job["metadata"]["uid"]
        workloads = [w for w in controlled_by(self._workloads, uid)
                     if ((w.get("spec") or {}).get("controllerRef") or {}).get("name") == job["metadata"]["name"]]
        if len(workloads) > 1:
            return None  # ambiguous: upstream falls back to plain scheduling
        new = jr.is_new_job(job, pods)
        if workloads:
            workload = workloads[0]
        elif new:
            workload = await self._create_workload(job)
        else:
            return None
        template = ((workload.get("spec") or {}).get("podGroupTemplates") or [{}])[0]
        workload_name = workload["metadata"]["name"]
        groups = [g for g in controlled_by(self._groups, uid)
                  if ((g.get("spec") or {}).get("workloadRef") or {}).get("workloadName") == workload_name]
        if groups:
            group = groups[0]
        elif new or workloads:
            group = await self._create_pod_group(job, workload, template)
        else:
            return None
        await self._sync_min_count(job, workload, group)
        return str(group["metadata"]["name"])

    async def _create_workload(self, job: dict[str, Any]) -> dict[str, Any]:
        meta = job["metadata"]
        name = jr.workload_name(job)
        body = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                "metadata": {"name": name, "namespace": meta["namespace"], "ownerReferences": [controller_ref(job)]},
                "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta["name"]},
                         "podGroupTemplates": [jr.pod_group_template(job)]}}
        try:
            created = await self._api.create(WORKLOADS_V1BETA1, meta["namespace"], body)
        except AlreadyExists:
            return await self._api.get(WORKLOADS_V1BETA1, meta["namespace"], name)
        except Exception as exc:
            self._recorder.event(job, WARNING, "FailedWorkloadCreate", f"Error creating Workload {name}: {exc}")
            raise
        self._recorder.event(job, NORMAL, "WorkloadCreated", f"Created Workload {name} for Job {meta['name']}")
        return created

    async def _create_pod_group(self, job: dict[str, Any], workload: dict[str, Any],
                                template: dict[str, Any]) -> dict[str, Any]:
        meta = job["metadata"]
        name = jr.pod_group_name(workload["metadata"]["name"], template.get("name", jr.template_name(job)))
        spec = {"workloadRef": {"workloadName": workload["metadata"]["name"], "templateName": template.get("name")},
                **{k: v for k, v in template.items() if k != "name"}}
        owner = {"apiVersion": workload["apiVersion"], "kind": "Workload", "name": workload["metadata"]["name"],
                 "uid": workload["metadata"]["uid"]}
        body = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": meta["namespace"],
                             "ownerReferences": [controller_ref(job), owner]}, "spec": spec}
        try:
            created = await self._api.create(PODGROUPS, meta["namespace"], body)
        except AlreadyExists:
            return await self._api.get(PODGROUPS, meta["namespace"], name)
        self._recorder.event(job, NORMAL, "PodGroupCreated", f"Created PodGroup {name} for Job {meta['name']}")
        return created

    async def _sync_min_count(self, job: dict[str, Any], workload: dict[str, Any], group: dict[str, Any]) -> None:
        """``syncGangMinCount``: a gang's minCount follows the Job (elastic parallelism)."""
        wanted = (jr.scheduling_policy(job).get("gang") or {}).get("minCount")
        if wanted is None:
            return
        templates = copy.deepcopy((workload.get("spec") or {}).get("podGroupTemplates") or [])
        if templates and ((templates[0].get("schedulingPolicy") or {}).get("gang") or {}).get("minCount") != wanted:
            templates[0]["schedulingPolicy"]["gang"]["minCount"] = wanted
            meta = workload["metadata"]
            await self._api.patch(WORKLOADS_V1BETA1, meta["namespace"], meta["name"],
                                  {"spec": {"podGroupTemplates": templates}})
        current = (((group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")
        if current is not None and current != wanted:
            meta = group["metadata"]
            await self._api.patch(PODGROUPS, meta["namespace"], meta["name"],
                                  {"spec": {"schedulingPolicy": {"gang": {"minCount": wanted}}}})

    # -- counting ---------------------------------------------------------------------------------
    async def _track(self, job: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[dict[str, Any],
                                                                                     list[dict[str, Any]]]:
        """Count finished pods exactly once: uncounted list, finalizer removal, then the counters."""
        status = job.setdefault("status", {})
        uncounted = status.get("uncountedTerminatedPods") or {}
        succeeded_uids, failed_uids = set(uncounted.get("succeeded") or []), set(uncounted.get("failed") or [])
        completed = parse_intervals(status.get("completedIndexes"))
        # Once the Job is finishing, the pods it deletes are not failures of the Job.
        finishing = has_true_condition(job, "FailureTarget") or has_true_condition(job, "SuccessCriteriaMet")
        fresh = False
        failure_target: tuple[str, str] | None = None
        for pod in pods:
            if not self._has_finalizer(pod):
                continue
            outcome = _finished_pod(pod, job)
            uid = pod["metadata"]["uid"]
            if outcome is None or uid in succeeded_uids or uid in failed_uids:
                continue
            if outcome == "Failed" and finishing and (pod.get("status") or {}).get("phase") != "Failed":
                continue
            if outcome == "Failed":
                matched = jr.match_pod_failure_policy(job, pod)
                if matched is not None and matched[0] == "Ignore":
                    continue  # not counted; the finalizer still goes below
                if matched is not None and matched[0] == "FailJob" and failure_target is None:
                    failure_target = ("PodFailurePolicy", matched[1])
                failed_uids.add(uid)
            else:
                succeeded_uids.add(uid)
                index = jr.pod_index(pod)
                if jr.is_indexed(job) and index is not None:
                    completed.add(index)
            fresh = True
        if fresh:
            status["uncountedTerminatedPods"] = {"succeeded": sorted(succeeded_uids), "failed": sorted(failed_uids)}
            if jr.is_indexed(job):
                status["completedIndexes"] = format_intervals(completed)
            if failure_target is not None and not has_true_condition(job, "FailureTarget"):
                status["conditions"] = set_condition(status.get("conditions") or [], "FailureTarget", "True",
                                                     *failure_target, self._clock.rfc3339())
            job = await self._write_status(job)
        done = [p for p in pods if self._has_finalizer(p) and _finished_pod(p, job) is not None]
        await self._remove_finalizers(job, done)
        if succeeded_uids or failed_uids:
            job = copy.deepcopy(job)
            status = job.setdefault("status", {})
            if jr.is_indexed(job):
                status["succeeded"] = len(parse_intervals(status.get("completedIndexes")))
            else:
                status["succeeded"] = int(status.get("succeeded") or 0) + len(succeeded_uids)
            status["failed"] = int(status.get("failed") or 0) + len(failed_uids)
            status["uncountedTerminatedPods"] = {}
            uid = job["metadata"]["uid"]
            job["status"] = status
            if succeeded_uids:
                self._failures.pop(uid, None)
            if failed_uids:
                count, _ = self._failures.get(uid, (0, 0.0))
                self._failures[uid] = (count + len(failed_uids), self._clock.now())
            job = await self._write_status(job)
        finished_uids = {p["metadata"]["uid"] for p in done}
        pods = [{**p, "metadata": {**p["metadata"], "finalizers": [
            f for f in p["metadata"].get("finalizers") or [] if f != jr.TRACKING_FINALIZER]}}
            if p["metadata"]["uid"] in finished_uids else p for p in pods]
        return job, pods

    # -- the rest of syncJob ----------------------------------------------------------------------
    async def _reconcile(self, job: dict[str, Any], pods: list[dict[str, Any]], group: str | None) -> None:
        spec, status = job.get("spec") or {}, job.get("status") or {}
        now = self._clock.now()
        active = [p for p in pods if is_pod_active(p)]
        terminating = [p for p in pods if is_pod_terminating(p)]
        outcome = self._terminal(job, active, now)
        if outcome is not None:
            kind, reason, message = outcome
            interim = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
            for pod in active:
                await self._control.delete(job, pod)
            conditions = status.get("conditions") or []
            if not has_true_condition(job, interim):
                conditions = set_condition(conditions, interim, "True", reason, message, self._clock.rfc3339())
            remaining = [p for p in pods if _finished_pod(p, job) is None or self._has_finalizer(p)]
            # Failed/Complete wait until no pod runs, the ones deleted just now included.
            if not remaining and not terminating and not active:
                conditions = set_condition(conditions, kind, "True", reason, message, self._clock.rfc3339())
                if kind == "Complete":
                    status["completionTime"] = self._clock.rfc3339()
                    self._recorder.event(job, NORMAL, "Completed", "Job completed")
                else:
                    self._recorder.event(job, WARNING, reason, message)
            status.update(conditions=conditions, active=0, ready=0, terminating=len(terminating) + len(active))
            job["status"] = status
            await self._write_status(job)
            return
        if spec.get("suspend"):
            await self._suspend(job, active, terminating)
            return
        if has_true_condition(job, "Suspended") or not status.get("startTime"):
            if has_true_condition(job, "Suspended"):
                status["conditions"] = set_condition(status.get("conditions") or [], "Suspended", "False",
                                                     "JobResumed", "Job resumed", self._clock.rfc3339())
                self._recorder.event(job, NORMAL, "Resumed", "Job resumed")
            status["startTime"] = self._clock.rfc3339()
            job["status"] = status
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            self._after(job, (parse_time(status["startTime"]) or now) + deadline - now)
        active = await self._manage(job, active, terminating, group)
        status.update(active=len([p for p in active if not p["metadata"].get("deletionTimestamp")]),
                      ready=sum(1 for p in active if is_ready(p)), terminating=len(terminating))
        job["status"] = status
        await self._write_status(job)

    def _terminal(self, job: dict[str, Any], active: list[dict[str, Any]],
                  now: float) -> tuple[str, str, str] | None:
        """("Complete" | "Failed", reason, message) when the Job is done, else None."""
        spec, status = job.get("spec") or {}, job.get("status") or {}
        for interim, kind in (("FailureTarget", "Failed"), ("SuccessCriteriaMet", "Complete")):
            existing = condition(job, interim)
            if existing is not None and existing.get("status") == "True":
                return kind, existing.get("reason", ""), existing.get("message", "")
        failed, succeeded = int(status.get("failed") or 0), int(status.get("succeeded") or 0)
        if failed > int(spec.get("backoffLimit", 6)):
            return "Failed", *jr.BACKOFF_LIMIT_EXCEEDED
        start = parse_time(status.get("startTime"))
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and start is not None and not spec.get("suspend") and start + deadline <= now:
            return "Failed", *jr.DEADLINE_EXCEEDED
        if jr.is_indexed(job):
            matched = jr.success_policy_match(job, parse_intervals(status.get("completedIndexes")))
            if matched is not None:
                return "Complete", "SuccessPolicy", f"Matched rules at index {matched}"
        completions = spec.get("completions")
        if (completions is not None and succeeded >= completions) or \
                (completions is None and succeeded >= 1 and not active):
            return "Complete", *jr.COMPLETIONS_REACHED
        return None

    async def _suspend(self, job: dict[str, Any], active: list[dict[str, Any]],
                       terminating: list[dict[str, Any]]) -> None:
        status = job.setdefault("status", {})
        for pod in active:
            await self._control.delete(job, pod)
        if not has_true_condition(job, "Suspended"):
            status["conditions"] = set_condition(status.get("conditions") or [], "Suspended", "True",
                                                 "JobSuspended", "Job suspended", self._clock.rfc3339())
            self._recorder.event(job, NORMAL, "Suspended", "Job suspended")
        status.update(active=0, ready=0, terminating=len(terminating) + len(active))
        await self._write_status(job)

    async def _manage(self, job: dict[str, Any], active: list[dict[str, Any]], terminating: list[dict[str, Any]],
                      group: str | None) -> list[dict[str, Any]]:
        """Delete surplus pods, create missing ones (after the failure backoff); the active pods after."""
        key = owner_key(job)
        if not self._expectations.satisfied(key):
            return active
        spec, status = job.get("spec") or {}, job.get("status") or {}
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        succeeded = int(status.get("succeeded") or 0)
        if completions is None:
            wanted = parallelism if succeeded == 0 else min(len(active), parallelism)
        else:
            wanted = max(min(int(completions) - succeeded, parallelism), 0)
        counted_active = len(active) + (len(terminating) if spec.get("podReplacementPolicy") == "Failed" else 0)
        if len(active) > wanted:
            surplus = sorted(active, key=lambda p: (is_assigned(p), is_ready(p)))
            victims = surplus[:len(active) - wanted]
            self._expectations.expect(key, deletes={p["metadata"]["uid"] for p in victims})
            for pod in victims:
                await self._control.delete(job, pod)
            return [p for p in active if p not in victims]
        room = min(wanted - counted_active, MAX_PODS_PER_SYNC)
        if room <= 0:
            return active
        failures, last = self._failures.get(job["metadata"]["uid"], (0, 0.0))
        wait = last + jr.backoff_delay(failures) - self._clock.now()
        if wait > 0:
            self._after(job, wait)
            return active
        if jr.is_indexed(job):
            running = [i for p in active if (i := jr.pod_index(p)) is not None]
            indexes: list[int | None] = list(jr.pending_indexes(int(completions or 0),
                                                                parse_intervals(status.get("completedIndexes")),
                                                                running, room))
        else:
            indexes = [None] * room
        if not indexes:
            return active
        self._expectations.expect(key, adds=len(indexes))

        async def create(i: int) -> None:
            try:
                await self._control.create(job, self._pod(job, indexes[i], group))
            except Exception:
                self._expectations.creation_observed(key)
                raise
        done, error = await slow_start(len(indexes), create)
        for _ in range(len(indexes) - done - (1 if error else 0)):
            self._expectations.creation_observed(key)
        if error is not None:
            raise error
        return active

    def _pod(self, job: dict[str, Any], index: int | None, group: str | None) -> dict[str, Any]:
        template = (job.get("spec") or {}).get("template") or {}
        pod = pod_from_template(template, job, generate_name=jr.job_pod_name_prefix(job["metadata"]["name"], index))
        meta, spec = pod["metadata"], pod["spec"]
        meta["finalizers"] = [*(meta.get("finalizers") or []), jr.TRACKING_FINALIZER]
        if index is not None:
            meta.setdefault("annotations", {})[jr.COMPLETION_INDEX] = str(index)
            meta.setdefault("labels", {})[jr.COMPLETION_INDEX] = str(index)
            spec["hostname"] = f"{job['metadata']['name']}-{index}"
            env = {"name": jr.COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.labels['{jr.COMPLETION_INDEX}']"}}}
            for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
                others = [e for e in container.get("env") or [] if e.get("name") != jr.COMPLETION_INDEX_ENV]
                container["env"] = [*others, env]
        if group is not None:
            spec["schedulingGroup"] = {"podGroupName": group}
        return pod

    async def _write_status(self, job: dict[str, Any]) -> dict[str, Any]:
        """Write ``status`` if it changed, guarded by the Job's resourceVersion (a stale view fails with 409)."""
        cached = self._jobs.lister.get(job["metadata"]["namespace"], job["metadata"]["name"])
        if cached is not None and cached.get("status") == job.get("status"):
            return job
        return await self._api.update(JOBS, job["metadata"]["namespace"], job, subresource="status")
