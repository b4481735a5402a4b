"""REST handlers: parse the HTTP request, call the registry, serialize the answer.

Nothing here decides semantics; that lives in ``fakeapi.registry``: reads (get, list, watch)
and writes (the pipeline, and the subresource handlers a kind declares).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import replace
from itertools import accumulate
from typing import Any

from aiohttp import hdrs, web

from fakeapi.auth.users import UserInfo
from fakeapi.errors import (
    STALE_OBJECT,
    BadRequest,
    MethodNotAllowed,
    NotAcceptable,
    StatusError,
    UnsupportedMediaType,
    conflict,
    invalid_object,
    not_supported,
    success_status,
    too_long,
)
from fakeapi.machinery.goparse import parse_int64
from fakeapi.machinery.listtypes import ListTypes
from fakeapi.machinery.managedfields import OMIT_MANAGED_FIELDS_HEADER, without_managed_fields
from fakeapi.machinery.memo import Memo
from fakeapi.models.options import DeleteOptions
from fakeapi.models.schema import decode
from fakeapi.registry import listing, patching
from fakeapi.registry.patching import PATCH_MEDIA, PATCH_TYPES
from fakeapi.registry.reads import encoded, encoded_without_managed_fields
from fakeapi.registry.resource import ResourceType, Subresource
from fakeapi.registry.rest import Registry
from fakeapi.registry.subresources import named_as
from fakeapi.registry.writes import WriteOptions, sent_options
from fakeapi.server import connect, partial, tables
from fakeapi.server.answers import JSONResponse
from fakeapi.server.bodies import JSON, YAML, body_media_type, read_body
from fakeapi.server.routes import Target, resolve
from fakeapi.server.security import authenticate
from fakeapi.server.state import ACCESS, REGISTRY, WEBHOOKS
from fakeapi.server.watch_stream import stream_watch, table_lines

MAX_BODY = 3 * 1024 * 1024  # upstream's request body limit
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")
# The verb of each HTTP method a subresource may declare.
METHOD_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch"}


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None, *,
                  omit_managed_fields: bool = False) -> web.Response:
    """``body`` as JSON; ``omit_managed_fields``: an object without its managedFields."""
    headers = {"Warning": ", ".join(f'299 - "{_escape(w)}"' for w in bounded_warnings(warnings))} \
        if warnings else None
    return JSONResponse(body=encoded_without_managed_fields(body) if omit_managed_fields else encoded(body),
                        status=status, content_type="application/json", headers=headers)


def _omits_managed_fields(request: web.Request) -> bool:
    """Whether the request reads objects without managedFields (a fakeapi extension)."""
    return request.headers.get(OMIT_MANAGED_FIELDS_HEADER) == "true"


def _object_response(request: web.Request, obj: Any, status: int = 200,
                     warnings: list[str] | None = None) -> web.Response:
    """An object answered as the request reads objects (without managedFields if it asks)."""
    return json_response(obj, status, warnings, omit_managed_fields=_omits_managed_fields(request))


# Upstream's warning recorder bounds what one response carries: 4 Ki runes of warning text in all;
# past that, every warning is cut to 256 runes and no more are added once the budget is spent.
WARNINGS_TOTAL_RUNES = 4 * 1024
WARNING_ITEM_RUNES = 256


def bounded_warnings(warnings: list[str]) -> list[str]:
    """The warnings a response carries, de-duplicated and truncated as upstream's recorder does."""
    unique = list(dict.fromkeys(w for w in warnings if w))
    totals = list(accumulate(map(len, unique)))
    if not totals or totals[-1] <= WARNINGS_TOTAL_RUNES:
        return unique
    # The first warning that does not fit turns truncation on for it and all before it.
    overflow = next(i for i, total in enumerate(totals) if total > WARNINGS_TOTAL_RUNES)
    kept = [text[:WARNING_ITEM_RUNES] for text in unique[:overflow + 1]]
    written = sum(map(len, kept))
    for text in unique[overflow + 1:]:
        if written >= WARNINGS_TOTAL_RUNES:
            break
        kept.append(text[:WARNING_ITEM_RUNES])
        written += len(kept[-1])
    return kept


def _escape(text: str) -> str:
    """Warning text as a quoted-string: quotes and backslashes escaped, and control characters (an
    unknown field's name may hold any) written as ``\\uXXXX``, since a header cannot carry them."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(c if c.isprintable() or c == "\t" else f"\\u{ord(c):04x}" for c in text)


def _check_type_meta(body: Any, target: Target, kind: str | None = None, sub_api_version: str = "") -> None:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    rt = target.resource
    api_version, body_kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != rt.api_version and not (kind and api_version in ("v1", sub_api_version)):
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected API "
                         f"version ({rt.api_version})")
    expected = kind or rt.kind
    if body_kind and body_kind != expected:
        raise BadRequest(f"the kind in the data ({body_kind}) does not match the expected kind ({expected})")


def _field_manager(request: web.Request) -> str:
    manager = request.query.get("fieldManager")
    if manager:
        if len(manager) > 128:
            raise invalid_object("PatchOptions", "meta.k8s.io", "", [too_long("fieldManager", 128)])
        return manager
    return request.headers.get("User-Agent", "unknown").split("/")[0][:128]


def write_options(request: web.Request, subresource: str = "", *, apply: bool = False) -> WriteOptions:
    """Write options from the query; apply patches must name their manager explicitly.

    They depend on the query string and the User-Agent only, so requests that send the same share
    one (WriteOptions are frozen), found without parsing the query again; a refused query is
    refused every time."""
    key = (request.raw_path.partition("?")[2], request.headers.get(hdrs.USER_AGENT), subresource, apply)
    opts = _options_seen.get(key)
    if opts is None:
        opts = _options_seen.keep(key, _parse_write_options(request, subresource, apply))
    return opts


def _parse_write_options(request: web.Request, subresource: str, apply: bool) -> WriteOptions:
    dry_run = request.query.getall("dryRun", [])
    for value in dry_run:
        if value != "All":
            raise invalid_object("CreateOptions", "meta.k8s.io", "", [
                not_supported("dryRun", value, ["All"])])
    validation = request.query.get("fieldValidation") or "Warn"
    if validation not in FIELD_VALIDATION:
        raise BadRequest(f'fieldValidation: Unsupported value: "{validation}": supported values: '
                         f'"Ignore", "Strict", "Warn"')
    force = request.query.get("force", "").lower() in ("1", "true")
    manager = request.query.get("fieldManager", "") if apply else _field_manager(request)
    sent = tuple((key, request.query[key]) for key in ("fieldManager", "fieldValidation") if request.query.get(key))
    return WriteOptions(manager, bool(dry_run), validation, force, subresource, sent=sent)


# The write options of recent (query string, User-Agent, subresource, apply) keys.
_options_seen: Memo[tuple[str, str | None, str, bool], WriteOptions] = Memo(256)


def handle_resource(request: web.Request, group: str, version: str, tail: str) -> Awaitable[web.StreamResponse]:
    """The handler's awaitable for a request to a resource path (``tail`` after the group/version).
    A plain function: the verb's coroutine is awaited by the caller, one frame fewer per request."""
    registry = request.app[REGISTRY]
    target = resolve(registry, group, version, tail.split("/"))
    method = request.method
    if target.resource.review is not None:
        return _review(request, registry, target)
    if target.subresource:
        return _subresource(request, registry, target)
    if method == "GET":
        return _get(request, registry, target)
    collection = target.name is None
    if method == "POST" and collection:
        return _create(request, registry, target)
    if method == "PUT" and not collection:
        return _update(request, registry, target)
    if method == "PATCH" and not collection:
        return _patch(request, registry, target)
    if method == "DELETE":
        if collection:
            return _delete_collection(request, registry, target)
        return _delete(request, registry, target)
    raise MethodNotAllowed("the server does not allow this method on the requested resource")


async def _review(request: web.Request, registry: Registry, target: Target) -> web.Response:
    """A review kind takes POST to its collection only; the answer is computed, never stored."""
    rt = target.resource
    if request.method != "POST" or not target.is_collection:
        raise MethodNotAllowed("the server does not allow this method on the requested resource")
    assert rt.review is not None and rt.model is not None  # every review kind has both
    body = await read_body(request)
    _check_type_meta(body, target)
    opts = write_options(request)
    review, warnings = decode(rt.model, body, opts.field_validation)
    access = request.app[ACCESS]
    answer = rt.review(access, authenticate(request, access), target.namespace or "", review)
    return json_response({"kind": rt.kind, "apiVersion": rt.api_version, **answer}, 201, warnings)


async def _get(request: web.Request, registry: Registry, target: Target) -> web.StreamResponse:
    rt = target.resource
    accept = request.headers.get(hdrs.ACCEPT, "")
    metadata_only = partial.requested(accept) if "Partial" in accept else None  # (no call on nearly every GET)
    if target.name is None:
        opts = listing.parse_list_options(request.query, rt)
        if _omits_managed_fields(request):
            opts = opts._replace(omit_managed_fields=True)
        if opts.watch:
            if opts.send_initial_events and tables.accepts_only_table(accept):
                raise NotAcceptable("only the following media types are accepted: application/json, "
                                    "application/yaml, application/vnd.kubernetes.protobuf")
            if metadata_only:  # each event one object's metadata, whichever form was asked for
                render = metadata_only.watch_line
            else:
                render = table_lines(target) if tables.wants_table(accept) else None
            return await stream_watch(request, registry, target, opts, render)
        body = await registry.reads.list(rt, target.namespace, opts)
        if tables.wants_table(accept):
            body = tables.to_table(rt, body["items"], body["metadata"],
                                   request.query.get("includeObject", "Metadata"))
        elif metadata_only:
            body = metadata_only.list(body)
        return json_response(body)
    if "?" in request.raw_path:  # (the check without parsing, or a URL object: nearly every GET has none)
        await registry.reads.wait_not_older_than(listing.parse_get_resource_version(request.query))
    obj = registry.reads.get(rt, target.namespace or "", target.name or "")
    if "Table" in accept and tables.wants_table(accept):  # (the check without a call: nearly every GET)
        return json_response(tables.to_table(rt, [obj], {"resourceVersion": obj["metadata"]["resourceVersion"]},
                                             request.query.get("includeObject", "Metadata")))
    return _object_response(request, metadata_only.object(obj) if metadata_only else obj)


def _with_user(request: web.Request, registry: Registry, target: Target, opts: WriteOptions) -> WriteOptions:
    """``opts`` with the requesting user when the kind's creates record it (CSRs) or admission
    (policies, webhooks) may read it; options are shared between requests, so the user goes on a
    copy."""
    if not target.resource.strategy.wants_user and not _admission_reads_user(request, registry):
        return opts
    return replace(opts, user=authenticate(request, request.app[ACCESS]))


def _admission_reads_user(request: web.Request, registry: Registry) -> bool:
    return registry.writes.policies.active() or request.app[WEBHOOKS].active()


# A registry write's object, whether it was created, and its warnings.
Written = tuple[dict[str, Any], bool, list[str]]
Write = Callable[[WriteOptions], Written]


async def _judged(request: web.Request, registry: Registry, target: Target, opts: WriteOptions,
                  write: Write) -> Written:
    """``write`` (returning the object, whether it was created, warnings) through the admission
    webhooks, as upstream orders them: staged and handed to the mutating webhooks (whose result is
    written instead, with the request's managedFields), then prepared in full, judged by the
    validating webhooks, and stored.  Callers ask ``WEBHOOKS.active()`` first, so that a cluster
    without webhook configurations keeps its plain path."""
    webhooks = request.app[WEBHOOKS]
    rt = target.resource
    old = registry.reads.find(rt, target.namespace or "", target.name) if target.name else None
    warnings: list[str] = []
    if webhooks.mutating_active():
        staged, created, warnings = write(replace(opts, for_mutation=True))
        changed, said = await webhooks.mutate(rt, "CREATE" if created else "UPDATE", staged,
                                              None if created else old, opts.subresource, opts.user, opts.dry_run,
                                              dict(opts.sent))
        warnings += said
        if changed is not None:
            write = functools.partial(_rewritten, registry, target, changed, None if created else old,
                                      staged["metadata"].get("managedFields"))
    if not webhooks.validating_active():
        obj, created, said = write(opts)
        return obj, created, warnings + said
    obj, created, said = write(replace(opts, prepare_only=True))
    warnings += said
    before = None if created else old
    warnings += await webhooks.validate(rt, "CREATE" if created else "UPDATE", obj, before, opts.subresource,
                                        opts.user, opts.dry_run, dict(opts.sent))
    if not opts.dry_run:
        obj = registry.writes.commit_prepared(rt, obj, before)
    return obj, created, warnings


def _rewritten(registry: Registry, target: Target, body: dict[str, Any], old: dict[str, Any] | None,
               managed: list[Any] | None, opts: WriteOptions) -> Written:
    """The write of a mutating webhook's result: a create, or an update of the object as it was
    when the request began (409 if it changed meanwhile), keeping the request's managedFields."""
    rt, namespace = target.resource, target.namespace or ""
    if old is None:
        obj, warnings = registry.writes.create(rt, namespace, body, opts, managed)
        return obj, True, warnings
    body["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
    obj, warnings = registry.writes.update(rt, namespace, target.name or "", body, opts, managed)
    return obj, False, warnings


def _created(registry: Registry, target: Target, body: Any, opts: WriteOptions) -> Written:
    obj, warnings = registry.writes.create(target.resource, target.namespace or "", body, opts)
    return obj, True, warnings


def _updated(registry: Registry, target: Target, body: Any, opts: WriteOptions) -> Written:
    obj, warnings = registry.writes.update(target.resource, target.namespace or "", target.name or "", body, opts)
    return obj, False, warnings


def _patched(registry: Registry, target: Target, patch_type: str, body: Any, opts: WriteOptions) -> Written:
    return registry.writes.patch(target.resource, target.namespace or "", target.name or "", patch_type, body, opts)


async def _create(request: web.Request, registry: Registry, target: Target) -> web.Response:
    body = await read_body(request)
    _check_type_meta(body, target)
    opts = _with_user(request, registry, target, write_options(request))
    if request.app[WEBHOOKS].active():
        write = functools.partial(_created, registry, target, body)
        obj, _, warnings = await _judged(request, registry, target, opts, write)
    else:
        obj, _, warnings = _created(registry, target, body, opts)
    return _object_response(request, obj, 201, warnings)


async def _update(request: web.Request, registry: Registry, target: Target) -> web.Response:
    body = await read_body(request)
    _check_type_meta(body, target)
    opts = _with_user(request, registry, target, write_options(request, target.subresource))
    if request.app[WEBHOOKS].active():
        write = functools.partial(_updated, registry, target, body)
        obj, _, warnings = await _judged(request, registry, target, opts, write)
    else:
        obj, _, warnings = _updated(registry, target, body, opts)
    return _object_response(request, obj, 200, warnings)


def _patch_type(request: web.Request, allowed: tuple[str, ...]) -> str:
    """The request's patch type, or 415 when it is not one of ``allowed``."""
    patch_type = PATCH_TYPES.get(body_media_type(request))
    if patch_type not in allowed:
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                   f"include: {', '.join(PATCH_MEDIA)}")
    return patch_type


async def _patch(request: web.Request, registry: Registry, target: Target) -> web.Response:
    patch_type = _patch_type(request, ("json", "merge", "strategic", "apply"))
    body = await read_body(request, syntax=YAML if patch_type == "apply" else JSON)
    if patch_type == "apply":
        _check_type_meta(body, target)
    # (server-side apply may create)
    opts = _with_user(request, registry, target,
                      write_options(request, target.subresource, apply=patch_type == "apply"))
    if request.app[WEBHOOKS].active():
        write = functools.partial(_patched, registry, target, patch_type, body)
        obj, created, warnings = await _judged(request, registry, target, opts, write)
    else:
        obj, created, warnings = _patched(registry, target, patch_type, body, opts)
    return _object_response(request, obj, 201 if created else 200, warnings)


async def _delete_options(request: web.Request) -> tuple[dict[str, Any], bool]:
    # Decoded as DeleteOptions, unknown fields ignored as upstream's delete handler does.
    options, _ = decode(DeleteOptions, await read_body(request, allow_empty=True) or {}, "Ignore")
    query = request.query
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if "gracePeriodSeconds" in query:
        try:
            options["gracePeriodSeconds"] = parse_int64(query["gracePeriodSeconds"])
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
    if "orphanDependents" in query:
        options["orphanDependents"] = query["orphanDependents"].lower() == "true"
    dry = list(query.getall("dryRun", [])) + list(options.get("dryRun") or [])
    for value in dry:
        if value != "All":
            raise invalid_object("DeleteOptions", "meta.k8s.io", "", [not_supported("dryRun", value, ["All"])])
    return options, bool(dry)


async def _delete(request: web.Request, registry: Registry, target: Target) -> web.Response:
    options, dry_run = await _delete_options(request)
    rt = target.resource
    user = authenticate(request, request.app[ACCESS]) if _admission_reads_user(request, registry) else None
    obj, gone, warnings = await _deleted(request, registry, rt, target.namespace or "", target.name or "",
                                         options, dry_run, user)
    if not gone or rt.returns_deleted_object:
        return _object_response(request, obj, warnings=warnings)
    details: dict[str, Any] = {"name": target.name, "kind": rt.plural, "uid": obj["metadata"]["uid"]}
    if rt.group:
        details["group"] = rt.group
    return json_response(success_status(200, details), warnings=warnings)


# How often a delete is judged again when its object changed while webhooks judged it (upstream
# retries its guaranteed update without a bound; a bound keeps a busy object from holding a request).
_DELETE_ATTEMPTS = 5


async def _deleted(request: web.Request, registry: Registry, rt: ResourceType, namespace: str, name: str,
                   options: dict[str, Any], dry_run: bool, user: UserInfo | None
                   ) -> tuple[dict[str, Any], bool, list[str]]:
    """One object's delete through admission, in upstream's order: the delete's own checks
    (preconditions, options), then the mutating webhooks, the policies and the validating
    webhooks, each seeing the stored object as ``oldObject``; then the delete itself, judged
    again if the object changed meanwhile.  Returns (object, gone, warnings)."""
    writes, webhooks = registry.writes, request.app[WEBHOOKS]
    if not webhooks.active():  # no awaits: the registry's delete does it all, policies included
        warnings: list[str] = []
        obj, gone = writes.delete(rt, namespace, name, options, dry_run, user, warnings=warnings)
        return obj, gone, warnings
    sent = sent_options(options)
    for _ in range(_DELETE_ATTEMPTS):
        old, policy = writes.check_delete(rt, namespace, name, options)
        warnings = []
        if webhooks.mutating_active():
            warnings += (await webhooks.mutate(rt, "DELETE", None, old, "", user, dry_run, sent))[1]
        if writes.policies.active():
            warnings += writes.validating_policies(rt, "DELETE", None, old, "", user, dry_run, sent)
        if webhooks.validating_active():
            warnings += await webhooks.validate(rt, "DELETE", None, old, "", user, dry_run, sent)
        current = registry.reads.find(rt, namespace, name)
        if current is not None and current["metadata"]["resourceVersion"] == old["metadata"]["resourceVersion"]:
            return (*writes.commit_delete(rt, old, policy, options, dry_run), warnings)
    raise conflict(rt.plural, rt.group, name, STALE_OBJECT)


async def _delete_collection(request: web.Request, registry: Registry, target: Target) -> web.Response:
    """Every listed object deleted as its own delete would be, admission included; as upstream's,
    a failed delete does not stop the others, and the first failure (not found aside) is the
    answer."""
    rt = target.resource
    list_opts = listing.parse_list_options(request.query, rt)
    options, dry_run = await _delete_options(request)
    user = authenticate(request, request.app[ACCESS]) if _admission_reads_user(request, registry) else None
    body = await registry.reads.list(rt, target.namespace, list_opts)
    deleted, warnings = [], []
    failure: StatusError | None = None
    for item in body["items"]:
        meta = item["metadata"]
        try:
            obj, _, said = await _deleted(request, registry, rt, meta.get("namespace", ""), meta["name"],
                                          options, dry_run, user)
        except StatusError as exc:
            if exc.code != 404 and failure is None:
                failure = exc
            continue
        deleted.append(without_managed_fields(obj) if _omits_managed_fields(request) else obj)
        warnings += said
    if failure is not None:
        raise failure
    return json_response({"kind": f"{rt.kind}List", "apiVersion": rt.api_version,
                          "metadata": {"resourceVersion": str(registry.reads.resource_version)},
                          "items": deleted}, warnings=warnings)


def _subresource(request: web.Request, registry: Registry, target: Target) -> Awaitable[web.StreamResponse]:
    """A subresource answers the verbs it declares: through its own handler, or (status) as the
    generic pipeline's read and write of the object.  Like :func:`handle_resource`, it returns
    the coroutine that serves the request."""
    sub = target.resource.subresource(target.subresource)
    assert sub is not None  # resolve() only returns declared subresources
    method = request.method
    if METHOD_VERBS.get(method) not in sub.verbs:
        raise MethodNotAllowed("the server does not allow this method on the requested resource")
    if sub.connect:
        return connect.serve(request, registry, target)
    if sub.handler is None:
        return _GENERIC_SUBRESOURCE[method](request, registry, target)
    return _own_subresource(request, registry, target, sub)


async def _own_subresource(request: web.Request, registry: Registry, target: Target,
                           sub: Subresource) -> web.StreamResponse:
    """A subresource with a handler of its own (binding, eviction, scale, a view's patch...)."""
    method = request.method
    rt, namespace, name = target.resource, target.namespace or "", target.name or ""
    view = None
    if sub.view is not None and method in ("GET", "PATCH"):
        view = sub.view(registry.reads, rt, namespace, name)
        if method == "GET":
            return json_response(view)
        patch_type = _patch_type(request, ("json", "merge", "strategic"))
        # A view has no list fields to merge by key, so every patch type is a plain merge of the view.
        body = patching.patched(view, patch_type, await read_body(request), ListTypes())
    else:
        body = await read_body(request)
    _check_type_meta(body, target, kind=sub.kind or None, sub_api_version=sub.api_version)
    opts = _with_user(request, registry, target, write_options(request, sub.name))
    creating = method == "POST"
    body, warnings = registry.writes.decode_subresource(rt, sub, namespace, name, body, opts, creating=creating)
    if sub.kind and _admission_reads_user(request, registry):
        if view is None and not creating and sub.view is not None:
            view = sub.view(registry.reads, rt, namespace, name)
        body, said = await _admitted(request, registry, target, sub, body, view, opts)
        warnings += said
    answer = sub.handler(registry.writes, rt, namespace, name, body, opts)
    return _object_response(request, answer, 201 if creating else 200, warnings)


async def _admitted(request: web.Request, registry: Registry, target: Target, sub: Subresource,
                    body: dict[str, Any], old: dict[str, Any] | None, opts: WriteOptions
                    ) -> tuple[dict[str, Any], list[str]]:
    """A subresource's own object (a Binding, an Eviction, a Scale; ``old``: the view before an
    update) through admission, in upstream's order: the mutating webhooks (their result decoded
    again), the policies, the validating webhooks.  The handler writes what passed, without
    admission of its own."""
    webhooks, writes = request.app[WEBHOOKS], registry.writes
    rt, namespace, name = target.resource, target.namespace or "", target.name or ""
    operation = "CREATE" if old is None else "UPDATE"
    judged = sub.admitted_as or named_as
    warnings: list[str] = []
    if webhooks.mutating_active():
        changed, warnings = await webhooks.mutate(rt, operation, judged(body, namespace, name, old), old, sub.name,
                                                  opts.user, opts.dry_run, dict(opts.sent))
        if changed is not None:
            body, said = writes.decode_subresource(rt, sub, namespace, name, changed, opts, creating=old is None)
            warnings += said
    obj = judged(body, namespace, name, old)
    if writes.policies.active():
        warnings += writes.validating_policies(rt, operation, obj, old, sub.name, opts.user, opts.dry_run,
                                               dict(opts.sent))
    if webhooks.validating_active():
        warnings += await webhooks.validate(rt, operation, obj, old, sub.name, opts.user, opts.dry_run,
                                            dict(opts.sent))
    return body, warnings


# The generic read and writes of a subresource without a handler of its own (status).
_GENERIC_SUBRESOURCE = {"GET": _get, "PUT": _update, "PATCH": _patch}
