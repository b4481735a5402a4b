"""The ``PodGroupInitiallyScheduled`` condition the scheduler writes after a pod-group cycle.

Upstream's ``updatePodGroupCondition`` (``schedule_one_podgroup.go``): the group succeeded →
``True/Scheduled``; it was rejected (waiting on preemption included) → ``False/Unschedulable``
with the group's message; an error → ``False/SchedulerError``.  The condition is terminal once
True (it never goes back), an unchanged condition is not written again, and the write is a
strategic-merge patch of ``/status``.  A v1alpha1 Workload has no status, so only v1beta1
PodGroups get one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from fakeapi.scheduler.client import PODGROUPS, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.rules.podgroups import PodGroupInstance
from fakeapi.scheduler.writes import write_until_known

from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

CONDITION_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def scheduled_condition(status: str, reason: str, message: str, generation: int | None) -> dict[str, Any]:
    """A ``PodGroupInitiallyScheduled`` metav1.Condition."""
    condition: dict[str, Any] = {"type": CONDITION_SCHEDULED, "status": status, "reason": reason,
                                 "message": message, "lastTransitionTime": now_rfc3339()}
    if generation is not None:
        condition["observedGeneration"] = generation
    return condition


def condition_update_needed(conditions: Iterable[dict[str, Any]], status: str, reason: str, message: str) -> bool:
    """False when the condition already says this, or is True (terminal: it never regresses)."""
    current = next((c for c in conditions if c.get("type") == CONDITION_SCHEDULED), None)
    if current is None:
        return True
    if current.get("status") == "True":
        return False
    return (current.get("status"), current.get("reason"), current.get("message")) != (status, reason, message)


class PodGroupStatusWriter:
    """Writes the condition in the background; remembers which groups it already marked True."""

    def __init__(self, api: ApiClient) -> None:
        self._api = api
        # PodGroup UID per instance whose True condition is sent (the informer may lag behind).
        self._scheduled_written: dict[PodGroupInstance, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()

    def set(self, instance: PodGroupInstance, group: dict[str, Any], status: str, reason: str,
            message: str) -> None:
        """Write the condition unless the group has none (v1alpha1) or already says so."""
        uid = group["metadata"].get("uid", "")
        if instance.is_workload_shape or self._scheduled_written.get(instance) == uid:
            return
        conditions = (group.get("status") or {}).get("conditions") or ()
        if not condition_update_needed(conditions, status, reason, message):
            return
        if status == "True":
            self._scheduled_written[instance] = uid
        task = asyncio.get_running_loop().create_task(
            self._patch(instance, group["metadata"], status, reason, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _patch(self, instance: PodGroupInstance, meta: dict[str, Any], status: str, reason: str,
                     message: str) -> None:
        """Write the condition; a lost answer re-reads the group and writes again if it is not there."""
        uid = meta.get("uid", "")
        patch = {"metadata": {"uid": uid},
                 "status": {"conditions": [scheduled_condition(status, reason, message, meta.get("generation"))]}}

        async def write() -> dict[str, Any]:
            return await self._api.patch(PODGROUPS, instance.namespace, instance.pod_group, patch,
                                         patch_type="strategic", subresource="status")

        async def landed() -> dict[str, Any] | None:
            group = await self._api.get(PODGROUPS, instance.namespace, instance.pod_group)
            if group["metadata"].get("uid") != uid:
                raise NotFound(f'podgroups.scheduling.k8s.io "{instance.pod_group}" not found')
            conditions = (group.get("status") or {}).get("conditions") or ()
            return None if condition_update_needed(conditions, status, reason, message) else group

        try:
            await write_until_known(write, landed, what=f"set {CONDITION_SCHEDULED} of PodGroup {instance.key}")
        except NotFound:
            pass   # deleted meanwhile
        except (StatusError, *TRANSPORT_ERRORS) as exc:
            self._scheduled_written.pop(instance, None)
            log.warning("cannot update %s of PodGroup %s: %s", CONDITION_SCHEDULED, instance.key, exc)
