"""List and watch semantics: ListOptions validation, selectors, resourceVersion rules, chunking.

Pure over the store: builds list bodies and opens watchers; the HTTP layer only streams.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from fakeapi.errors import BadRequest, Expired, FieldError, Timeout, invalid, invalid_object, not_supported
from fakeapi.machinery.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from fakeapi.registry.resource import ResourceType
from fakeapi.store.objects import ObjectStore
from fakeapi.store.pagination import ContinueToken
from fakeapi.store.watch import Watcher, WatchFilter

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
# How long a read "not older than" a future resourceVersion waits before 504 (upstream: 3 s).
RV_WAIT_SECONDS = 3.0


@dataclass(frozen=True)
class ListOptions:
    label_selector: LabelSelector
    field_selector: FieldSelector
    resource_version: str = ""
    resource_version_match: str = ""
    limit: int = 0
    continue_: str = ""
    watch: bool = False
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: int | None = None

    @property
    def has_selectors(self) -> bool:
        return not (self.label_selector.empty and self.field_selector.empty)


def _bool(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


def parse_list_options(query: Mapping[str, str], rt: ResourceType) -> ListOptions:
    """Validate ListOptions as upstream does: 400 for syntax, 422 for bad combinations."""
    try:
        labels = parse_label_selector(query.get("labelSelector"))
        fields = parse_field_selector(query.get("fieldSelector"))
    except SelectorError as exc:
        raise BadRequest(str(exc)) from exc
    allowed = {"metadata.name", "metadata.namespace", *rt.field_selectors}
    for field in fields.fields():
        if field not in allowed:
            raise BadRequest(f'field label not supported: {field}')
    try:
        limit = int(query.get("limit") or 0)
        timeout = int(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
    except ValueError as exc:
        raise BadRequest(f"invalid query parameter: {exc}") from exc
    sie = query.get("sendInitialEvents")
    opts = ListOptions(
        label_selector=labels, field_selector=fields,
        resource_version=query.get("resourceVersion") or "",
        resource_version_match=query.get("resourceVersionMatch") or "",
        limit=max(limit, 0), continue_=query.get("continue") or "",
        watch=_bool(query.get("watch")), allow_bookmarks=_bool(query.get("allowWatchBookmarks")),
        send_initial_events=None if sie is None else _bool(sie), timeout_seconds=timeout)
    errors = _validate_list_options(opts)
    if errors:
        raise invalid_object("ListOptions", "meta.k8s.io", "", errors)
    return opts


def _validate_list_options(opts: ListOptions) -> list[FieldError]:
    errors: list[FieldError] = []
    match = opts.resource_version_match
    if match and match not in ("NotOlderThan", "Exact"):
        errors.append(not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
    if match and not opts.resource_version and not (opts.watch and opts.send_initial_events):
        errors.append(FieldError("FieldValueForbidden", "resourceVersionMatch",
                                 "resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if match == "Exact" and opts.resource_version == "0":
        errors.append(FieldError("FieldValueForbidden", "resourceVersionMatch",
                                 "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
    if opts.continue_ and opts.resource_version and opts.resource_version != "0":
        errors.append(FieldError("FieldValueForbidden", "resourceVersion",
                                 "specifying resource version is forbidden when using continue"))
    if opts.send_initial_events is not None:
        if not opts.watch:
            errors.append(FieldError("FieldValueForbidden", "sendInitialEvents",
                                     "sendInitialEvents is forbidden for list"))
        elif opts.send_initial_events and match != "NotOlderThan":
            errors.append(FieldError("FieldValueForbidden", "resourceVersionMatch",
                                     "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if opts.send_initial_events and not opts.allow_bookmarks:
            errors.append(FieldError("FieldValueForbidden", "allowWatchBookmarks",
                                     "allowWatchBookmarks must be true when sendInitialEvents is set"))
    if opts.watch and match and opts.send_initial_events is None:
        errors.append(FieldError("FieldValueForbidden", "resourceVersionMatch",
                                 "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
    if opts.resource_version:
        try:
            if int(opts.resource_version) < 0:
                raise ValueError
        except ValueError:
            errors.append(invalid("resourceVersion", opts.resource_version, "must be a non-negative integer"))
    return errors


def _getter(rt: ResourceType, obj: dict[str, Any]) -> Callable[[str], str | None]:
    def get(field: str) -> str | None:
        meta = obj.get("metadata") or {}
        if field == "metadata.name":
            return meta.get("name", "")
        if field == "metadata.namespace":
            return meta.get("namespace", "")
        fn = rt.field_selectors.get(field)
        return fn(obj) if fn else None
    return get


def make_predicate(rt: ResourceType, opts: ListOptions) -> Callable[[dict[str, Any]], bool] | None:
    if not opts.has_selectors:
        return None
    labels, fields = opts.label_selector, opts.field_selector

    def predicate(obj: dict[str, Any]) -> bool:
        if not labels.empty and not labels.matches((obj.get("metadata") or {}).get("labels") or {}):
            return False
        return fields.empty or fields.matches(_getter(rt, obj))

    return predicate


def _too_large(rv: int, current: int) -> Timeout:
    return Timeout(f"Too large resource version: {rv}, current: {current}",
                   details={"causes": [{"reason": "ResourceVersionTooLarge",
                                        "message": "Too large resource version"}],
                            "retryAfterSeconds": 1})


async def _wait_not_older_than(store: ObjectStore, rv: int) -> None:
    if rv > store.rv and not await store.wait_for_rv(rv, RV_WAIT_SECONDS):
        raise _too_large(rv, store.rv)


async def list_objects(store: ObjectStore, rt: ResourceType, namespace: str | None,
                       opts: ListOptions) -> dict[str, Any]:
    """The ``{Kind}List`` body for a list request."""
    storage = rt.storage_key
    start_after: tuple[str, str] | None = None
    if opts.continue_:
        token = ContinueToken.decode(opts.continue_)
        if token.rv < store.log.compacted_rv:
            inconsistent = ContinueToken(store.rv, token.start_after).encode()
            raise Expired("The provided continue parameter is too old to display a consistent list result. "
                          "You can start a new list without the continue parameter, or use the continue "
                          "token in this response to retrieve the remainder of the results. Continuing with "
                          "the provided token results in an inconsistent list - objects that were created, "
                          "modified, or deleted between the time the first chunk was returned and now may "
                          "show up in the list.", metadata={"continue": inconsistent})
        list_rv, start_after = token.rv, token.start_after
    else:
        rv = int(opts.resource_version) if opts.resource_version else 0
        exact = opts.resource_version_match == "Exact" or (
            rv > 0 and opts.limit > 0 and not opts.resource_version_match)
        if rv > 0:
            await _wait_not_older_than(store, rv)
        list_rv = rv if exact else store.rv
    if list_rv == store.rv:
        items_all = store.items(storage, namespace)
    else:
        snap = store.snapshot_at(storage, list_rv)
        items_all = [snap[k] for k in sorted(snap) if namespace is None or k[0] == namespace]
    if start_after is not None:
        items_all = [o for o in items_all if _key(o) > start_after]
    predicate = make_predicate(rt, opts)
    if predicate is not None:
        items_all = [o for o in items_all if predicate(o)]
    meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
    items = items_all
    if opts.limit and len(items_all) > opts.limit:
        items = items_all[:opts.limit]
        meta["continue"] = ContinueToken(list_rv, _key(items[-1])).encode()
        if predicate is None:
            meta["remainingItemCount"] = len(items_all) - opts.limit
    return {"kind": f"{rt.kind}List", "apiVersion": rt.api_version, "metadata": meta, "items": items}


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def bookmark_line(rt: ResourceType, rv: int, initial_events_end: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}}


async def open_watch(store: ObjectStore, rt: ResourceType, namespace: str | None,
                     opts: ListOptions) -> Watcher:
    """Open a watcher per the resourceVersion rules.

    Streaming lists (sendInitialEvents) get the current objects as ADDED, then the
    ``initial-events-end`` bookmark at the revision they reflect, then live events.
    """
    flt = WatchFilter(namespace if rt.namespaced else None, make_predicate(rt, opts))
    storage = rt.storage_key
    rv_text = opts.resource_version
    if opts.send_initial_events:
        if rv_text and rv_text != "0":
            await _wait_not_older_than(store, int(rv_text))
        watcher = store.open_watch(storage, flt, since=None, initial=store.items(storage, flt.namespace))
        watcher.push_line(orjson.dumps(bookmark_line(rt, store.rv, True)) + b"\n")
        return watcher
    if not rv_text or rv_text == "0":
        initial = store.items(storage, flt.namespace) if opts.send_initial_events is not False else []
        return store.open_watch(storage, flt, since=None, initial=initial)
    rv = int(rv_text)
    if rv > store.rv:
        await _wait_not_older_than(store, rv)
    return store.open_watch(storage, flt, since=rv)
