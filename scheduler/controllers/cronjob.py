"""The CronJob controller (``pkg/controller/cronjob/cronjob_controllerv2.go``).

Per CronJob, on the control plane's clock: drop finished or vanished Jobs from
``status.active`` (``SawCompletedJob``), keep ``successfulJobsHistoryLimit`` /
``failedJobsHistoryLimit`` finished Jobs, then — unless suspended — find the most recent
schedule time since the last one (or creation), skip it when it is older than
``startingDeadlineSeconds`` (``MissSchedule``), apply the ``concurrencyPolicy`` (Forbid:
``JobAlreadyActive``; Replace: delete the running Jobs) and create
``<cronjob>-<minutes since the epoch>`` from the template with the
``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation.  It wakes up again 100 ms after
the next schedule time.  The zone is ``spec.timeZone``, else UTC (the controller manager's zone).
"""

from __future__ import annotations

import copy
import logging
import zoneinfo
from datetime import UTC, datetime, timedelta, tzinfo
from email.utils import format_datetime
from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import (
    CRONJOBS,
    JOBS,
    Key,
    controlled_by,
    index_by_controller,
    owner_key,
)
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.jobs import is_finished
from fakeapi.scheduler.rules.workloads import controller_of, controller_ref, format_time, parse_time
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import AlreadyExists, NotFound
from fakeapi.machinery.cron import ScheduleError, parse_schedule

log = logging.getLogger(__name__)

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1



def job_name(cronjob: str, scheduled: datetime) -> str:
    """``getJobName``: ``<cronjob>-<scheduled Unix time in minutes>``."""
    return f"{cronjob}-{int(scheduled.timestamp()) // 60}"


def _ref(job: dict[str, Any]) -> dict[str, Any]:
    meta = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "namespace": meta["namespace"],
            "uid": meta["uid"], "resourceVersion": meta.get("resourceVersion", "")}


class CronJobController:
    """Creates Jobs on schedule."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._recorder = recorder
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self._cronjobs = factory.informer(CRONJOBS)
        self._jobs = factory.informer(JOBS)
        index_by_controller(self._jobs)
        self._cronjobs.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new))
        self._jobs.add_event_handler(self._on_job, lambda old, new: self._on_job(new), self._on_job)

    async def run(self) -> None:
        """Sync CronJobs until cancelled."""
        await process(self._queue, self._sync, name="cronjob-controller")

    def _enqueue(self, cronjob: dict[str, Any]) -> None:
        self._queue.add(owner_key(cronjob))

    def _on_job(self, job: dict[str, Any]) -> None:
        ref = controller_of(job)
        if ref is not None and ref.get("kind") == "CronJob":
            self._queue.add((job["metadata"]["namespace"], ref["name"]))

    async def _sync(self, key: Key) -> None:
        cached = self._cronjobs.lister.get(*key)
        if cached is None:
            return
        cj = copy.deepcopy(cached)
        status = cj.setdefault("status", {})
        children = controlled_by(self._jobs, cj["metadata"]["uid"])
        self._reconcile_active(cj, children)
        await self._cleanup(cj, children)
        spec = cj.get("spec") or {}
        if cj["metadata"].get("deletionTimestamp") or spec.get("suspend"):
            await self._write_status(cj, cached)
            return
        try:
            schedule = parse_schedule(spec.get("schedule", ""))
            zone: tzinfo = zoneinfo.ZoneInfo(spec["timeZone"]) if spec.get("timeZone") else UTC
        except ScheduleError as exc:
            self._recorder.event(cj, WARNING, "UnparseableSchedule", f"unparseable schedule: {exc}")
            return
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            self._recorder.event(cj, WARNING, "UnknownTimeZone", f"invalid timeZone: {spec.get('timeZone')}: {exc}")
            return
        now = datetime.fromtimestamp(self._clock.now(), zone)
        since = parse_time(status.get("lastScheduleTime") or cj["metadata"].get("creationTimestamp")) or now.timestamp()
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            since = max(since, now.timestamp() - int(deadline))
        scheduled, missed = schedule.most_recent(datetime.fromtimestamp(since, zone), now)
        if missed > 100:
            self._recorder.event(cj, WARNING, "TooManyMissedTimes",
                                 "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                                 "check clock skew")
        if scheduled is not None:
            await self._start(cj, scheduled, now)
        await self._write_status(cj, cached)
        # From the clock's time now, not the sync's start: a manual clock may have moved while this
        # sync awaited its writes, and a timer set from the old time would run a whole period late.
        delay = schedule.next_after(now).timestamp() - self._clock.now()
        self._queue.add_after(key, delay + NEXT_SCHEDULE_DELTA if delay > 0 else 0.0)

    def _reconcile_active(self, cj: dict[str, Any], children: list[dict[str, Any]]) -> None:
        status = cj["status"]
        by_uid = {j["metadata"]["uid"]: j for j in children}
        active = []
        for ref in status.get("active") or []:
            job = by_uid.get(ref.get("uid"))
            if job is None:
                self._recorder.event(cj, NORMAL, "MissingJob", f"Active job went missing: {ref.get('name')}")
                continue
            finished = is_finished(job)
            if finished is None:
                active.append(ref)
                continue
            self._recorder.event(cj, NORMAL, "SawCompletedJob",
                                 f"Saw completed job: {job['metadata']['name']}, condition: {finished[0]}")
            if finished[0] == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                if done and (parse_time(done) or 0) > (parse_time(status.get("lastSuccessfulTime")) or 0):
                    status["lastSuccessfulTime"] = done
        status["active"] = active or None

    async def _cleanup(self, cj: dict[str, Any], children: list[dict[str, Any]]) -> None:
        """``cleanupFinishedJobs``: the oldest finished Jobs beyond the history limits go."""
        spec = cj.get("spec") or {}
        for outcome, limit_key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(limit_key)
            if limit is None:
                continue
            finished = [j for j in children if (is_finished(j) or ("",))[0] == outcome
                        and not j["metadata"].get("deletionTimestamp")]
            finished.sort(key=lambda j: parse_time((j.get("status") or {}).get("startTime")
                                                   or j["metadata"].get("creationTimestamp")) or 0)
            for job in finished[:max(len(finished) - int(limit), 0)]:
                await self._delete_job(cj, job)

    async def _delete_job(self, cj: dict[str, Any], job: dict[str, Any]) -> None:
        try:
            await self._api.delete(JOBS, job["metadata"]["namespace"], job["metadata"]["name"],
                                   propagation_policy="Background")
        except NotFound:
            return
        self._recorder.event(cj, NORMAL, "SuccessfulDelete", f"Deleted job {job['metadata']['name']}")

    async def _start(self, cj: dict[str, Any], scheduled: datetime, now: datetime) -> None:
        spec, status = cj.get("spec") or {}, cj["status"]
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + timedelta(seconds=int(deadline)) < now:
            self._recorder.event(cj, WARNING, "MissSchedule", "Missed scheduled time to start a job: "
                                 f"{format_datetime(scheduled.astimezone(UTC))}")
            return
        name = job_name(cj["metadata"]["name"], scheduled)
        active = status.get("active") or []
        if any(r.get("name") == name for r in active) or \
                parse_time(status.get("lastScheduleTime")) == scheduled.timestamp():
            return
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            self._recorder.event(cj, NORMAL, "JobAlreadyActive", "Not starting job because prior execution is "
                                                                 "running and concurrency policy is Forbid")
            return
        if policy == "Replace":
            for ref in active:
                job = self._jobs.lister.get(ref.get("namespace"), ref.get("name", ""))
                if job is not None:
                    await self._delete_job(cj, job)
            active = []
        template = spec.get("jobTemplate") or {}
        meta = template.get("metadata") or {}
        body = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "namespace": cj["metadata"]["namespace"],
                             "labels": dict(meta.get("labels") or {}),
                             "annotations": {**(meta.get("annotations") or {}),
                                             SCHEDULED_TIMESTAMP: scheduled.isoformat().replace("+00:00", "Z")},
                             "ownerReferences": [controller_ref(cj)]},
                "spec": copy.deepcopy(template.get("spec") or {})}
        try:
            job = await self._api.create(JOBS, cj["metadata"]["namespace"], body)
        except AlreadyExists:
            job = await self._api.get(JOBS, cj["metadata"]["namespace"], name)
        else:
            self._recorder.event(cj, NORMAL, "SuccessfulCreate", f"Created job {name}")
        status["active"] = [*active, _ref(job)]
        status["lastScheduleTime"] = format_time(scheduled.timestamp())

    async def _write_status(self, cj: dict[str, Any], cached: dict[str, Any]) -> None:
        if cj.get("status") == cached.get("status"):
            return
        try:
            await self._api.update(CRONJOBS, cj["metadata"]["namespace"], cj, subresource="status")
        except NotFound:
            pass
