"""List-then-watch one resource and feed every change into a sink, forever.

The flow follows client-go's ``Reflector`` with its ``WatchListClient`` feature (on by default
since 1.35):

1. a streaming list (WATCH with ``sendInitialEvents``): the objects arrive as ADDED events into a
   temporary store; the BOOKMARK annotated ``k8s.io/initial-events-end`` hands the complete
   state to ``sink.replace`` with its resourceVersion, and the same stream goes on with live
   events — one request instead of a LIST and a WATCH.  A server that refuses streaming lists
   (or a stream that fails before the bookmark) gets a paged LIST instead, for this round;
2. each live event goes to ``sink.apply`` and advances the remembered resourceVersion
   (bookmarks advance it without an event);
3. when the stream ends or the connection drops, WATCH again from the remembered
   resourceVersion — no event is lost and none is repeated;
4. when the server answers 410 (the resourceVersion was compacted away), go back to 1; the
   sink diffs the fresh state against what it holds, so consumers still see add/update/delete.

Transient failures are retried with capped exponential backoff; cancellation ends the loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from typing import Protocol

from fakeapi.scheduler.backoff import Backoff
from fakeapi.scheduler.client import GVR, INITIAL_EVENTS_END, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.rules.keys import object_key

from fakeapi.errors import Expired, Gone, StatusError

log = logging.getLogger(__name__)

_PAGE_SIZE = 500
# Upstream picks a random watch timeout in [5, 10) minutes so watches of many informers do not
# all reconnect at once.
_MIN_WATCH_TIMEOUT = 300


class StreamEnded(Exception):
    """A streaming list ended before the bookmark that closes its initial events."""


class Sink(Protocol):
    """Where a reflector delivers what it sees (the informer)."""

    def replace(self, items: list[dict], resource_version: str) -> None: ...
    def apply(self, event_type: str, obj: dict) -> None: ...


class Reflector:
    """Keeps a :class:`Sink` in step with one (optionally filtered) collection on the server."""

    def __init__(self, api: ApiClient, gvr: GVR, sink: Sink, *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None) -> None:
        self._api = api
        self._gvr = gvr
        self._sink = sink
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        # Failures of this resource's list/watch, keyed by the GVR; reset by every success.
        self._backoff: Backoff[GVR] = Backoff(0.05, 2.0, jitter=0.2)
        self.resource_version = ""

    async def run(self) -> None:
        """List and watch until cancelled."""
        while True:
            try:
                try:
                    stream = await self._watch_list()
                except (StatusError, StreamEnded, *TRANSPORT_ERRORS) as err:
                    # client-go falls back too: making progress beats waiting for a streaming list.
                    log.info("streaming list of %s failed, listing instead: %s", self._gvr.plural, err)
                    stream = None
                    await self._list()
                await self._watch_until_expired(stream)
            except (StatusError, *TRANSPORT_ERRORS) as err:
                log.warning("list of %s failed, retrying: %s", self._gvr.plural, err)
                await asyncio.sleep(self._backoff.when(self._gvr))

    def _open_watch(self, resource_version: str, *, send_initial_events: bool = False) -> AsyncIterator[dict]:
        return self._api.watch(
            self._gvr, self._namespace, resource_version=resource_version, label_selector=self._label_selector,
            field_selector=self._field_selector, allow_bookmarks=True, send_initial_events=send_initial_events,
            timeout_seconds=_MIN_WATCH_TIMEOUT + int(random.random() * _MIN_WATCH_TIMEOUT))

    async def _watch_list(self) -> AsyncIterator[dict]:
        """Sync through a streaming list; return the stream, now carrying live events."""
        stream = self._open_watch("", send_initial_events=True)
        items: dict[str, dict] = {}
        async for event in stream:
            obj = event.get("object") or {}
            if event.get("type") == "BOOKMARK":
                meta = obj.get("metadata") or {}
                if (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
                    self.resource_version = meta["resourceVersion"]
                    self._sink.replace(list(items.values()), self.resource_version)
                    self._backoff.forget(self._gvr)
                    return stream
            elif event.get("type") == "DELETED":
                items.pop(object_key(obj), None)
            else:
                items[object_key(obj)] = obj
        raise StreamEnded(f"the streaming list of {self._gvr.plural} ended before its initial events did")

    async def _list(self) -> None:
        items: list[dict] = []
        continue_token: str | None = None
        resource_version = ""
        limit: int | None = _PAGE_SIZE
        while True:
            try:
                page = await self._api.list(self._gvr, self._namespace, label_selector=self._label_selector,
                                            field_selector=self._field_selector, limit=limit,
                                            continue_=continue_token)
            except (Expired, Gone):
                if continue_token is None:
                    raise
                # The continue token outlived the server's history: fall back to one full list.
                items, continue_token, limit = [], None, None
                continue
            if not resource_version:
                resource_version = page["metadata"]["resourceVersion"]
            items.extend(_with_type_meta(page))
            continue_token = (page.get("metadata") or {}).get("continue") or None
            if continue_token is None:
                break
        self.resource_version = resource_version
        self._sink.replace(items, resource_version)
        self._backoff.forget(self._gvr)

    async def _watch_until_expired(self, stream: AsyncIterator[dict] | None) -> None:
        """Follow ``stream`` (if any), then watch from the last seen resourceVersion, resuming on
        disconnects; return on 410."""
        while True:
            current, stream = stream, None
            seen_events = current is not None
            try:
                async for event in current or self._open_watch(self.resource_version):
                    self._handle(event)
                    seen_events = True
                    self._backoff.forget(self._gvr)
                if not seen_events:
                    # A server that keeps closing empty streams must not make us spin.
                    await asyncio.sleep(self._backoff.when(self._gvr))
            except (Expired, Gone) as err:
                log.info("watch of %s expired, re-listing: %s", self._gvr.plural, err)
                return
            except TRANSPORT_ERRORS as err:
                log.info("watch of %s dropped, resuming from %s: %s", self._gvr.plural,
                         self.resource_version, err)
                await asyncio.sleep(self._backoff.when(self._gvr))

    def _handle(self, event: dict) -> None:
        obj = event.get("object") or {}
        resource_version = (obj.get("metadata") or {}).get("resourceVersion")
        if event.get("type") != "BOOKMARK":
            self._sink.apply(event["type"], obj)
        if resource_version:
            self.resource_version = resource_version


def _with_type_meta(page: dict) -> list[dict]:
    """List items carry no kind/apiVersion on the wire; stamp them so cached objects look the same
    whether they arrived by list or by watch (event recorders and owner references need them)."""
    items = page.get("items") or []
    kind = page.get("kind", "")
    kind = kind.removesuffix("List")
    api_version = page.get("apiVersion", "")
    for item in items:
        item.setdefault("kind", kind)
        item.setdefault("apiVersion", api_version)
    return items
