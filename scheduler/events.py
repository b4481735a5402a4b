"""Record core/v1 Events about objects, the way ``kubectl describe`` shows them.

``event()`` is synchronous and never blocks the caller (a control loop or informer handler):
it only updates an in-memory record and queues its key. One background task writes the
records in order.  Repeats of the same (object, type, reason, message) are aggregated into
one Event whose ``count`` and ``lastTimestamp`` grow, like client-go's event correlator.

A recorder that is not a ``series`` one (below) also correlates as client-go's ``EventCorrelator``:

- **aggregation**: once ten Events about one object with one type and reason but different
  messages came within ten minutes of each other, each further one (with a message not among the
  last nine) goes into one Event whose message is ``(combined from similar events): <latest>``
  and whose count grows;
- **spam filter**: each object gets 25 Events from a recorder at once and one more every five
  minutes (a token bucket); a repeat beyond that is counted but not written until a token comes.

A ``series`` recorder writes as client-go's events.k8s.io broadcaster (``tools/events``, which
kube-scheduler uses): events.k8s.io/v1 Events (``eventTime``, ``action``, ``note``,
``regarding``, ``reportingController`` and ``reportingInstance`` ``<component>-<hostname>``).
Repeats about one object at one resourceVersion with one type, action, reason and related object
are one series, whatever their notes (the Event keeps the first): the Event is written once, its
series (count 2) once as a merge patch of ``series``, then the growing
count only every :data:`SERIES_REFRESH_SECONDS` at the next repeat, and when the series finishes
(:data:`SERIES_FINISH_SECONDS` without a repeat: the final count is written and the next repeat
starts a new Event).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from time import monotonic
from typing import TypeVar

from fakeapi.scheduler.client import EVENTS, EVENTS_V1, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.workqueue import ShutDown, WorkQueue

from fakeapi.errors import NotFound, StatusError
from fakeapi.machinery.timestamps import format_micro_rfc3339, now_rfc3339

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

# Records remembered for aggregation; the oldest are forgotten first.
_MAX_RECORDS = 4096

# client-go tools/events event_broadcaster.go: refreshTime (30 min) and finishTime (6 min).
SERIES_REFRESH_SECONDS = 30 * 60.0
SERIES_FINISH_SECONDS = 6 * 60.0

_EventKey = tuple[str, ...]
K = TypeVar("K")
V = TypeVar("V")

# client-go tools/record events_cache.go: the aggregator's limits and the spam filter's bucket.
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600.0
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
# events.k8s.io/v1 validation's limits: reportingInstance (and action, reason) and note.
REPORTING_INSTANCE_LIMIT = 128
NOTE_LIMIT = 1024
COMBINED = "(combined from similar events): "
# The key of an object's aggregated Event: its message, which changes with every write, is none.
_AGGREGATED = "\0aggregated"


def truncated_note(message: str) -> str:
    """``message`` cut to fit an events.k8s.io/v1 note, ending " ..." when cut (kube-scheduler's
    ``truncateMessage``)."""
    return message if len(message) <= NOTE_LIMIT else message[:NOTE_LIMIT - 4] + " ..."


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
    due: int = 0  # the count the next write carries
    written_at: float = 0.0  # loop time of the last write (series recorders)
    last_seen: float = 0.0  # loop time of the last repeat (series recorders)
    finish: asyncio.TimerHandle | None = None
    # Series recorders (events.k8s.io/v1): what was done, the secondary object, and the first and
    # last occurrence as MicroTimes (eventTime, series.lastObservedTime).
    action: str = ""
    related: dict | None = None
    # Core recorders: the host of the Event's source (tools/record's EventSource.Host).
    host: str = ""
    first_micro: str = ""
    last_micro: str = ""


def _keep_recent(cache: OrderedDict[K, V], key: K, value: V) -> None:
    """``cache[key] = value`` as its most recent entry; beyond :data:`_MAX_RECORDS` entries the
    least recent is forgotten (an object's records, its messages, its spam tokens)."""
    cache[key] = value
    cache.move_to_end(key)
    if len(cache) > _MAX_RECORDS:
        cache.popitem(last=False)


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

    def __init__(self, api: ApiClient, component: str, *, series: bool = False) -> None:
        self._api = api
        self._component = component
        self._series = series
        # tools/events' reportingInstance: the controller and the host it runs on.
        self._instance = f"{component}-{socket.gethostname()}"[:REPORTING_INSTANCE_LIMIT]
        self._records: OrderedDict[_EventKey, _Record] = OrderedDict()
        # Finished series whose final count is still to be written.
        self._finishing: dict[_EventKey, _Record] = {}
        # Made with the worker by the first Event: most recorders of a short-lived control plane write none.
        self._queue: WorkQueue[_EventKey] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        # Per (object, type, reason): the different messages lately seen, and when the last came.
        self._similar: OrderedDict[tuple[str, ...], tuple[set[str], float]] = OrderedDict()
        # Per object: the spam filter's tokens and when they were counted.
        self._tokens: OrderedDict[tuple[str, ...], tuple[float, float]] = OrderedDict()

    def event(self, obj: dict, type_: str, reason: str, message: str, *, action: str = "",
              related: dict | None = None, host: str = "") -> None:
        """Record that ``reason``/``message`` happened to ``obj``; written asynchronously.  A series
        recorder's Events also say what was done (``action``) and may name a ``related`` object;
        a core one's may name the ``host`` its component runs on (the kubelet's node)."""
        if self._closed:
            return
        involved = involved_object(obj)
        loop = asyncio.get_running_loop()
        similar = (involved.get("namespace", ""), involved["name"], involved["uid"], type_, reason)
        seen_at = monotonic()
        reference = None if related is None else involved_object(related)
        if self._series:
            # tools/events' getKey: the type, action, reason and objects (their resourceVersions
            # too), not the note: a repeat with another note joins the series, whose Event keeps
            # the first note.
            key: _EventKey = (*similar, action, involved["resourceVersion"],
                              *((reference["uid"], reference["resourceVersion"]) if reference else ()))
        else:
            key = (*similar, message)
            if self._aggregated(similar, message, seen_at):
                key, message = (*similar, _AGGREGATED), COMBINED + message
        now = now_rfc3339()
        record = self._records.get(key)
        if record is None:
            record = _Record(involved, type_, reason, message, 0, now, now)
        _keep_recent(self._records, key, record)
        record.count += 1
        record.last = now
        record.involved = involved
        if self._series:
            record.action = action
            record.related = reference
            record.last_micro = format_micro_rfc3339(datetime.now(UTC))
            record.first_micro = record.first_micro or record.last_micro
        else:
            record.message = message
            record.host = host
        queue = self._queue
        if queue is None:
            queue = self._queue = WorkQueue()
            self._worker = loop.create_task(self._run(queue), name=f"events-{self._component}")
        if self._series:
            due = self._series_due(record, key, loop)
        else:
            due = self._token((*similar[:3], involved["kind"], involved["apiVersion"]), seen_at)
        if due:
            record.due = record.count
            queue.add(key)

    def _aggregated(self, similar: tuple[str, ...], message: str, now: float) -> bool:
        """``EventAggregate``: whether this Event joins its object's aggregated Event."""
        seen = self._similar.get(similar)
        messages = seen[0] if seen is not None and now - seen[1] <= AGGREGATE_INTERVAL_SECONDS else set()
        messages.add(message)
        _keep_recent(self._similar, similar, (messages, now))
        if len(messages) < AGGREGATE_MAX_EVENTS:
            return False
        messages.discard(message)  # the set stays below the limit (upstream drops any one)
        return True

    def _token(self, source_object: tuple[str, ...], now: float) -> bool:
        """``EventSourceObjectSpamFilter``: take a token of the object's bucket, if one is left."""
        tokens, counted = self._tokens.get(source_object, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - counted) / SPAM_REFILL_SECONDS)
        allowed = tokens >= 1
        _keep_recent(self._tokens, source_object, (tokens - 1 if allowed else tokens, now))
        return allowed

    def _series_due(self, record: _Record, key: _EventKey, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a series recorder writes this repeat now: the Event, the series' start
        (count 2) and a refresh due; otherwise the count waits for the refresh or the finish."""
        record.last_seen = loop.time()
        if record.finish is None:
            record.finish = loop.call_later(SERIES_FINISH_SECONDS, self._finish_series, key, record)
        return record.count <= 2 or (record.written_count > 0
                                     and record.last_seen - record.written_at >= SERIES_REFRESH_SECONDS)

    def _finish_series(self, key: _EventKey, record: _Record) -> None:
        """No repeat for :data:`SERIES_FINISH_SECONDS`: write the final count, start afresh next time."""
        loop = asyncio.get_running_loop()
        idle = loop.time() - record.last_seen
        if idle < SERIES_FINISH_SECONDS:
            record.finish = loop.call_later(SERIES_FINISH_SECONDS - idle, self._finish_series, key, record)
            return
        record.finish = None
        if self._records.get(key) is record:
            del self._records[key]
        if record.count != record.written_count and self._queue is not None and not self._closed:
            record.due = record.count
            self._finishing[key] = record
            self._queue.add(key)

    async def close(self) -> None:
        """Stop writing; Events still queued are dropped."""
        self._closed = True
        if self._queue is not None:
            self._queue.shut_down()
        for record in self._records.values():
            if record.finish is not None:
                record.finish.cancel()
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None

    async def _run(self, queue: WorkQueue[_EventKey]) -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            try:
                # A finished series' final count, then whatever started afresh under its key.
                for record in (self._finishing.pop(key, None), self._records.get(key)):
                    if record is not None and record.due != record.written_count:
                        await self._write(record)
            except (StatusError, *TRANSPORT_ERRORS) as err:
                # Events are best effort, as upstream: losing one must not disturb the caller.
                log.warning("could not write event %s for %s: %s", key[4], key[1], err)
            except Exception:
                log.exception("event writer failed")
            finally:
                queue.done(key)

    async def _write(self, record: _Record) -> None:
        """The record's count on its Event: a patch of the Event, or the Event created (whole, with
        the count; again if someone deleted it).  A core recorder patches the count, last time and
        message (client-go's patch carries an aggregated Event's changes); a series recorder the
        ``series`` of an events.k8s.io/v1 Event (tools/events' ``recordEvent``)."""
        count = record.due
        record.written_at = asyncio.get_running_loop().time()
        namespace = record.involved.get("namespace") or "default"
        series: dict | None = None
        if self._series:
            gvr = EVENTS_V1
            series = {"count": count, "lastObservedTime": record.last_micro} if count > 1 else None
            patch = None if series is None else {"series": series}
        else:
            gvr = EVENTS
            patch = {"count": count, "lastTimestamp": record.last, "message": record.message}
        if patch is not None and record.name is not None:
            try:
                await self._api.patch(gvr, namespace, record.name, patch, result=False)
                record.written_count = count
                return
            except NotFound:
                record.name = None  # someone deleted it; write it afresh
        name = f"{record.involved['name']}.{secrets.token_hex(8)}"
        metadata = {"name": name, "namespace": namespace}
        body = (self._series_event(record, metadata, series) if self._series
                else self._core_event(record, metadata, count))
        await self._api.create(gvr, namespace, body, result=False)
        record.name = name
        record.written_count = count

    def _core_event(self, record: _Record, metadata: dict, count: int) -> dict:
        """A core/v1 Event as tools/record writes it."""
        return {
            "apiVersion": "v1", "kind": "Event", "metadata": metadata,
            "involvedObject": record.involved,
            "type": record.type, "reason": record.reason, "message": record.message,
            "source": {"component": self._component, **({"host": record.host} if record.host else {})},
            # tools/record: the reporting controller and instance are the source's component and host.
            "reportingComponent": self._component, **({"reportingInstance": record.host} if record.host else {}),
            "firstTimestamp": record.first, "lastTimestamp": record.last, "count": count,
        }

    def _series_event(self, record: _Record, metadata: dict, series: dict | None) -> dict:
        """An events.k8s.io/v1 Event as tools/events writes it."""
        body = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": metadata,
            "eventTime": record.first_micro, "reportingController": self._component,
            "reportingInstance": self._instance, "action": record.action, "reason": record.reason,
            "regarding": record.involved, "note": record.message, "type": record.type,
        }
        if record.related is not None:
            body["related"] = record.related
        if series is not None:
            body["series"] = series
        return body
