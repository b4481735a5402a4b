"""Record core/v1 Events about objects, the way ``kubectl describe`` shows them.

``event()`` is synchronous and never blocks the caller (a control loop or informer handler):
it only updates an in-memory record and queues its key. One background task writes the
records in order.  Repeats of the same (object, type, reason, message) are aggregated into
one Event whose ``count`` and ``lastTimestamp`` grow, like client-go's event correlator.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from fakeapi.scheduler.client import EVENTS, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.workqueue import ShutDown, WorkQueue

from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import now_rfc3339

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

# Records remembered for aggregation; the oldest are forgotten first.
_MAX_RECORDS = 4096

_EventKey = tuple[str, str, str, str, str, str]


@dataclass
class _Record:
    involved: dict
    type: str
    reason: str
    message: str
    count: int
    first: str
    last: str
    name: str | None = None  # set once the Event exists on the server
    written_count: int = 0


def involved_object(obj: dict) -> dict:
    """The ObjectReference an Event points at."""
    meta = obj.get("metadata") or {}
    ref = {"kind": obj.get("kind", ""), "apiVersion": obj.get("apiVersion", ""), "name": meta.get("name", ""),
           "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


class EventRecorder:
    """Fire-and-forget Event writer for one component (``source.component``)."""

    def __init__(self, api: ApiClient, component: str) -> None:
        self._api = api
        self._component = component
        self._records: OrderedDict[_EventKey, _Record] = OrderedDict()
        self._queue: WorkQueue[_EventKey] = WorkQueue()
        self._worker: asyncio.Task[None] | None = None

    def event(self, obj: dict, type_: str, reason: str, message: str) -> None:
        """Record that ``reason``/``message`` happened to ``obj``; written asynchronously."""
        if self._queue.shutting_down:
            return
        involved = involved_object(obj)
        key = (involved.get("namespace", ""), involved["name"], involved["uid"], type_, reason, message)
        now = now_rfc3339()
        record = self._records.get(key)
        if record is None:
            record = _Record(involved, type_, reason, message, 0, now, now)
            self._records[key] = record
            if len(self._records) > _MAX_RECORDS:
                self._records.popitem(last=False)
        self._records.move_to_end(key)
        record.count += 1
        record.last = now
        record.involved = involved
        self._queue.add(key)
        if self._worker is None:
            loop = asyncio.get_running_loop()
            self._worker = loop.create_task(self._run(), name=f"events-{self._component}")

    async def close(self) -> None:
        """Stop writing; Events still queued are dropped."""
        self._queue.shut_down()
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None

    async def _run(self) -> None:
        while True:
            try:
                key = await self._queue.get()
            except ShutDown:
                return
            try:
                record = self._records.get(key)
                if record is not None and record.count != record.written_count:
                    await self._write(record)
            except (StatusError, *TRANSPORT_ERRORS) as err:
                # Events are best effort, as upstream: losing one must not disturb the caller.
                log.warning("could not write event %s for %s: %s", key[4], key[1], err)
            except Exception:
                log.exception("event writer failed")
            finally:
                self._queue.done(key)

    async def _write(self, record: _Record) -> None:
        count = record.count
        namespace = record.involved.get("namespace") or "default"
        if record.name is not None:
            try:
                await self._api.patch(EVENTS, namespace, record.name,
                                      {"count": count, "lastTimestamp": record.last})
                record.written_count = count
                return
            except NotFound:
                record.name = None  # someone deleted it; write a fresh one
        name = f"{record.involved['name']}.{secrets.token_hex(8)}"
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": record.involved,
            "type": record.type, "reason": record.reason, "message": record.message,
            "source": {"component": self._component},
            "reportingComponent": self._component, "reportingInstance": self._component,
            "firstTimestamp": record.first, "lastTimestamp": record.last, "count": count,
        }
        await self._api.create(EVENTS, namespace, body)
        record.name = name
        record.written_count = count
