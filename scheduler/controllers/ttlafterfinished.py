"""TTL after finished (``pkg/controller/ttlafterfinished``): finished Jobs with
``ttlSecondsAfterFinished`` are deleted (foreground, UID precondition) that long after their
Complete/Failed condition's transition, timed on the control plane's clock."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.podcontrol import JOBS, Key, owner_key
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.jobs import is_finished
from fakeapi.scheduler.rules.workloads import parse_time
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import Conflict, NotFound


class TTLAfterFinishedController:
    """Deletes finished Jobs once their TTL has passed."""

    def __init__(self, api: ApiClient, factory: InformerFactory, clock: Clock) -> None:
        self._api = api
        self._clock = clock
        self._queue: WorkQueue[Key] = WorkQueue(clock=clock)
        self._jobs = factory.informer(JOBS)
        self._jobs.add_event_handler(self._on_job, lambda old, new: self._on_job(new))

    async def run(self) -> None:
        """Watch finished Jobs until cancelled."""
        await process(self._queue, self._sync, name="ttl-after-finished-controller")

    def _on_job(self, job: dict[str, Any]) -> None:
        if (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and is_finished(job):
            self._queue.add(owner_key(job))

    async def _sync(self, key: Key) -> None:
        job = self._jobs.lister.get(*key)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        finished = is_finished(job)
        if ttl is None or finished is None:
            return
        expiry = (parse_time(finished[1].get("lastTransitionTime")) or self._clock.now()) + int(ttl)
        if expiry > self._clock.now():
            self._queue.add_after(key, expiry - self._clock.now())
            return
        try:
            await self._api.delete(JOBS, key[0], key[1], preconditions={"uid": job["metadata"]["uid"]},
                                   propagation_policy="Foreground")
        except (NotFound, Conflict):
            pass
