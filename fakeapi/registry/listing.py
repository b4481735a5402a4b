"""ListOptions: parsing and validation as upstream does, and the selector predicate lists and
watches filter by.  Pure; :mod:`.reads` applies them to the store."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from fakeapi.errors import BadRequest, FieldError, invalid, invalid_object, not_supported
from fakeapi.machinery.goparse import parse_int64, parse_uint64
from fakeapi.machinery.selectors import (
    EVERYTHING,
    FieldSelector,
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from fakeapi.registry.resource import ResourceType

ALL_FIELDS = FieldSelector()


class ListOptions(NamedTuple):
    """A list or watch request's options; the defaults list everything at the latest revision.
    Immutable; a named tuple rather than a frozen dataclass, whose ten-field construction costs
    several times as much on every list and watch."""

    label_selector: LabelSelector = EVERYTHING
    field_selector: FieldSelector = ALL_FIELDS
    resource_version: str = ""
    resource_version_match: str = ""
    limit: int = 0
    continue_: str = ""
    watch: bool = False
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: int | None = None
    # Objects without managedFields (the fakeapi extension header OMIT_MANAGED_FIELDS_HEADER).
    omit_managed_fields: bool = False

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
    if not fields.empty:
        allowed = {"metadata.name", "metadata.namespace", *rt.field_selectors}
        for field in fields.fields():
            if field not in allowed:
                raise BadRequest(f'field label not supported: {field}')
    try:
        limit = parse_int64(query.get("limit") or "0")
        timeout = parse_int64(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
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
        errors.extend(_resource_version_errors(opts.resource_version))
    return errors


def _resource_version_errors(rv: str) -> list[FieldError]:
    try:
        parse_uint64(rv)
    except ValueError:
        return [invalid("resourceVersion", rv, "must be a non-negative integer")]
    return []


def parse_get_resource_version(query: Mapping[str, str]) -> int:
    """A GET's ``resourceVersion`` as the revision its answer must not be older than (0: any).

    Upstream's watch cache answers an unparsable one with a 500 that carries the same field
    error; a client mistake gets the 422 a list gets here instead.
    """
    rv = query.get("resourceVersion") or ""
    if not rv:
        return 0
    errors = _resource_version_errors(rv)
    if errors:
        raise invalid_object("GetOptions", "meta.k8s.io", "", errors)
    return int(rv)


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
    """The label and field selectors as one object predicate; None when they select everything."""
    if not opts.has_selectors:
        return None
    labels, fields = opts.label_selector, opts.field_selector

    def predicate(obj: dict[str, Any]) -> bool:
        if not labels.empty and not labels.matches((obj.get("metadata") or {}).get("labels") or {}):
            return False
        return fields.empty or fields.matches(_getter(rt, obj))

    return predicate
