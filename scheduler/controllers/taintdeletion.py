"""How the taint managers delete a pod (``addConditionAndDeletePod`` upstream, shared by the
taint-eviction and device-taint-eviction controllers): read it, record the Event, mark it with a
``DisruptionTarget`` condition, delete it with its own grace period.  The status patch and the
delete both carry the pod's UID as precondition, so a pod recreated under the same name is
never touched."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.events import EventRecorder

from fakeapi.errors import Conflict, NotFound


def disruption_condition(reason: str, message: str) -> dict[str, str]:
    """A ``DisruptionTarget`` condition (status True) without its transition time."""
    return {"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message}


async def mark_and_delete(api: ApiClient, recorder: EventRecorder, clock: Clock, namespace: str, name: str,
                          uid: str, condition: dict[str, str], event: tuple[str, str]) -> None:
    """Evict pod ``namespace/name``, the instance with ``uid``: the Event ``event`` (reason,
    message), ``condition`` merged into its status, then the deletion.  Nothing happens to a pod
    that is gone, replaced or already being deleted."""
    try:
        pod = await api.get(PODS, namespace, name)
    except NotFound:
        return
    meta = pod["metadata"]
    if meta.get("uid") != uid or meta.get("deletionTimestamp"):
        return
    recorder.event(pod, "Normal", *event)
    conditions = (pod.get("status") or {}).get("conditions") or ()
    try:
        if not any(all(c.get(k) == v for k, v in condition.items()) for c in conditions):
            patch: dict[str, Any] = {"metadata": {"uid": uid},  # merged by type, as preemption's
                                     "status": {"conditions": [{**condition, "lastTransitionTime": clock.rfc3339()}]}}
            await api.patch(PODS, namespace, name, patch, patch_type="strategic", subresource="status", result=False)
        await api.delete(PODS, namespace, name, preconditions={"uid": uid})
    except (NotFound, Conflict):
        pass  # gone or replaced meanwhile
