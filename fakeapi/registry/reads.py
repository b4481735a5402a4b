"""The one read path: every reader of objects (handlers, watch streaming, admission, the garbage
collector, the test plugin's dump) goes through :class:`Reader`, never to the store.

It applies a kind's scope (cluster-scoped kinds ignore the namespace), the resourceVersion rules
of lists and watches (``NotOlderThan`` waits, ``Exact`` reads history, 410 once compacted) and
continue tokens; ListOptions parsing and selectors live in :mod:`.listing`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from fakeapi.errors import Expired, Timeout, not_found
from fakeapi.machinery.managedfields import without_managed_fields
from fakeapi.registry.listing import ListOptions, make_predicate
from fakeapi.registry.resource import ResourceType
from fakeapi.store.eventlog import Event

# ``encoded`` and ``encoded_without_managed_fields`` are re-exported for the HTTP layer, which
# reaches objects only through the registry: an object's JSON, reusing the bytes its commit (or its
# watch line without managedFields) serialized when it is the object just written.
from fakeapi.store.eventlog import encoded_without_managed_fields as encoded_without_managed_fields
from fakeapi.store.objects import ObjectStore, object_key
from fakeapi.store.objects import encoded as encoded
from fakeapi.store.pagination import ContinueToken

# ``Watcher`` is re-exported for the HTTP layer's bookmark timer (a sweep of open watches).
from fakeapi.store.watch import Watcher as Watcher
from fakeapi.store.watch import WatchFilter

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_EVERYTHING = WatchFilter()
# How long a read "not older than" a future resourceVersion waits before 504 (upstream: 3 s).
RV_WAIT_SECONDS = 3.0


def bookmark_line(rt: ResourceType, rv: int, initial_events_end: bool = False) -> dict[str, Any]:
    """A BOOKMARK watch event at ``rv`` (``initial_events_end`` closes a streaming list)."""
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}}


def _too_large(rv: int, current: int) -> Timeout:
    return Timeout(f"Too large resource version: {rv}, current: {current}",
                   details={"causes": [{"reason": "ResourceVersionTooLarge",
                                        "message": "Too large resource version"}],
                            "retryAfterSeconds": 1})


def _expired_continue(store: ObjectStore, token: ContinueToken) -> Expired:
    inconsistent = ContinueToken(store.rv, token.start_after).encode()
    return Expired("The provided continue parameter is too old to display a consistent list result. "
                   "You can start a new list without the continue parameter, or use the continue "
                   "token in this response to retrieve the remainder of the results. Continuing with "
                   "the provided token results in an inconsistent list - objects that were created, "
                   "modified, or deleted between the time the first chunk was returned and now may "
                   "show up in the list.", metadata={"continue": inconsistent})


class Reader:
    """Reads of one store, by kind."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @property
    def resource_version(self) -> int:
        """The store's current revision."""
        return self._store.rv

    # -- current state -------------------------------------------------------------------------

    def find(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored object, or None."""
        obj = self._store.get(rt.storage_key, (namespace if rt.namespaced else "", name))
        return obj if obj is None or rt.read_view is None else rt.read_view(obj)

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        """The stored object; 404 if there is none."""
        obj = self.find(rt, namespace, name)
        if obj is None:
            raise not_found(rt.plural, rt.group, name)
        return obj

    def items(self, rt: ResourceType, namespace: str | None = None) -> list[dict[str, Any]]:
        """Current objects of a kind in key order (one namespace, or all with None)."""
        objects = self._store.items(rt.storage_key, namespace if rt.namespaced else None)
        return objects if rt.read_view is None else [rt.read_view(o) for o in objects]

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Call ``listener`` synchronously after every commit (in-process controllers)."""
        self._store.add_listener(listener)

    def unsubscribe(self, listener: Callable[[Event], None]) -> None:
        """Stop calling ``listener``."""
        self._store.remove_listener(listener)

    # -- lists -------------------------------------------------------------------------------------

    async def wait_not_older_than(self, rv: int) -> None:
        """Return once the store has reached revision ``rv``; 504 after ``RV_WAIT_SECONDS``."""
        store = self._store
        if rv > store.rv and not await store.wait_for_rv(rv, RV_WAIT_SECONDS):
            raise _too_large(rv, store.rv)

    async def list(self, rt: ResourceType, namespace: str | None, opts: ListOptions) -> dict[str, Any]:
        """The ``{Kind}List`` body for a list request."""
        store = self._store
        scope = namespace if rt.namespaced else None
        start_after: tuple[str, str] | None = None
        if opts.continue_:
            token = ContinueToken.decode(opts.continue_)
            if token.rv < store.log.compacted_rv:
                raise _expired_continue(store, token)
            await self.wait_not_older_than(token.rv)
            list_rv, start_after = token.rv, token.start_after
        else:
            rv = int(opts.resource_version) if opts.resource_version else 0
            exact = opts.resource_version_match == "Exact" or (
                rv > 0 and opts.limit > 0 and not opts.resource_version_match)
            if rv > 0:
                await self.wait_not_older_than(rv)
            list_rv = rv if exact else store.rv
        if list_rv == store.rv:
            items_all = self.items(rt, scope)
        else:
            snap = store.snapshot_at(rt.storage_key, list_rv)
            items_all = [snap[k] for k in sorted(snap) if scope is None or k[0] == scope]
            if rt.read_view is not None:
                items_all = [rt.read_view(o) for o in items_all]
        if start_after is not None:
            items_all = [o for o in items_all if object_key(o) > start_after]
        predicate = make_predicate(rt, opts)
        if predicate is not None:
            items_all = [o for o in items_all if predicate(o)]
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        items = items_all
        if opts.limit and len(items_all) > opts.limit:
            items = items_all[:opts.limit]
            meta["continue"] = ContinueToken(list_rv, object_key(items[-1])).encode()
            if predicate is None:
                meta["remainingItemCount"] = len(items_all) - opts.limit
        if opts.omit_managed_fields:
            items = [without_managed_fields(o) for o in items]
        return {"kind": f"{rt.kind}List", "apiVersion": rt.api_version, "metadata": meta, "items": items}

    # -- watches -------------------------------------------------------------------------------

    async def watch(self, rt: ResourceType, namespace: str | None, opts: ListOptions) -> Watcher:
        """Open a watcher per the resourceVersion rules.

        Streaming lists (sendInitialEvents) get the current objects as ADDED, then the
        ``initial-events-end`` bookmark at the revision they reflect, then live events.
        """
        store = self._store
        fields = opts.field_selector
        # A watch across namespaces whose field selector fixes one is scoped to it, as upstream's
        # watch cache scopes it (the predicate checks it all the same).
        scope = (namespace or fields.requires_exact_match("metadata.namespace")) if rt.namespaced else None
        predicate = make_predicate(rt, opts)
        # Most watches (every informer's) take a kind's objects as stored: one filter for all.
        flt = _EVERYTHING if (scope is None and predicate is None and rt.read_view is None
                              and not opts.omit_managed_fields) else WatchFilter(
            scope, predicate, rt.read_view, fields.requires_exact_match("metadata.name"), opts.omit_managed_fields)
        storage = rt.storage_key
        rv_text = opts.resource_version
        if opts.send_initial_events:
            if rv_text and rv_text != "0":
                await self.wait_not_older_than(int(rv_text))
            watcher = store.open_watch(storage, flt, since=None, initial=self._initial(rt, flt.namespace, opts))
            watcher.push_line(orjson.dumps(bookmark_line(rt, store.rv, True)) + b"\n")
            return watcher
        if not rv_text or rv_text == "0":
            initial = self._initial(rt, flt.namespace, opts) if opts.send_initial_events is not False else []
            return store.open_watch(storage, flt, since=None, initial=initial)
        rv = int(rv_text)
        if rv > store.rv:
            await self.wait_not_older_than(rv)
        return store.open_watch(storage, flt, since=rv)

    def _initial(self, rt: ResourceType, namespace: str | None, opts: ListOptions) -> list[dict[str, Any]]:
        """A watch's synthetic ADDED objects, as it reads them."""
        objects = self.items(rt, namespace)
        return [without_managed_fields(o) for o in objects] if opts.omit_managed_fields else objects

    def bookmark(self, rt: ResourceType) -> dict[str, Any]:
        """A BOOKMARK at the current revision."""
        return bookmark_line(rt, self._store.rv)

    def close_watch(self, rt: ResourceType, watcher: Watcher) -> None:
        """Stop delivering to ``watcher`` and wake its reader."""
        self._store.close_watch(rt.storage_key, watcher)

    def close_all_watches(self) -> None:
        """End every open watch (server shutdown)."""
        self._store.hub.close_all()

    def compact_history(self) -> int:
        """Compact the event history at a fresh revision (every resume from before gets 410)."""
        return self._store.compact_history()
