"""The aiohttp application: explicit route table, one error renderer, lifecycle hooks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler
from aiohttp.web_urldispatcher import UrlMappingMatchInfo

from fakeapi.auth import bootstrap, rbac
from fakeapi.auth.users import UserInfo
from fakeapi.config import FeatureGates, ServerOptions
from fakeapi.crdcontroller import CRDController
from fakeapi.errors import MethodNotAllowed, NotFound, StatusError, Timeout
from fakeapi.gc import GarbageCollector
from fakeapi.machinery.aggregation import aggregated_rules
from fakeapi.machinery.faults import FaultSet
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.servicenet import ServiceNetwork
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.registry.access import Access
from fakeapi.registry.kinds import KINDS
from fakeapi.registry.meta import new_uid
from fakeapi.registry.rest import Registry
from fakeapi.registry.writes import WriteOptions
from fakeapi.server import discovery, openapi
from fakeapi.server.connections import REQUEST_TIMEOUT_MESSAGE, RequestDeadlines
from fakeapi.server.faults import FAULTS, add_admin_routes, fault_for, faulted
from fakeapi.server.handlers import MAX_BODY, handle_resource, json_response
from fakeapi.server.openapi import OpenAPICache
from fakeapi.server.routes import NOT_FOUND_MESSAGE
from fakeapi.server.security import authorize
from fakeapi.server.state import ACCESS, OPENAPI, OPTIONS, REGISTRY, WEBHOOKS
from fakeapi.server.watch_stream import BOOKMARKS, bookmark_sweep
from fakeapi.server.webhooks import Webhooks
from fakeapi.store.eventlog import ADDED, StorageKey
from fakeapi.store.objects import ObjectStore
from fakeapi.validation import priority

log = logging.getLogger("fakeapi")
GC = web.AppKey("gc", GarbageCollector)
# The routes of resource paths, core then grouped (see dispatcher).
RESOURCE_ROUTES = web.AppKey("resource_routes", tuple[web.ResourceRoute, web.ResourceRoute])
CRDS = web.AppKey("crds", CRDController)
REQUEST_DEADLINES = web.AppKey("request_deadlines", RequestDeadlines)


def serving(deadlines: RequestDeadlines, access: Access, faults: FaultSet,
            gate: Callable[[], None] | None = None) -> Callable[[Handler], Handler]:
    """What every request passes, as a wrapper of each route's handler, its concerns in
    upstream's filter order: errors rendered as a ``metav1.Status``, the ``gate``, the request
    timeout, authentication and authorization, injected faults.  Not an aiohttp middleware: with
    none, aiohttp skips its per-request middleware machinery (its own middleware and a cache of
    handler chains, which also kept every application it served alive, store and all), and
    :func:`dispatcher` can route around aiohttp's router.  ``deadlines``: the requests' timeout
    sweep (the application's :data:`REQUEST_DEADLINES`, stopped with it)."""
    secure = access.secure

    def wrap(handler: Handler) -> Handler:
        async def serve(request: web.Request) -> web.StreamResponse:
            try:
                if gate is not None:
                    gate()
                task = deadlines.start(request)
                try:
                    if secure:
                        authorize(request, access)
                    if faults and (decision := fault_for(request, faults)) is not None:
                        return await faulted(request, handler, decision)
                    return await handler(request)
                except asyncio.CancelledError:
                    if task is not None and deadlines.expired(task):
                        return await timed_out(request)
                    raise
                except TimeoutError:
                    if task is None:
                        raise
                    return await timed_out(request)
                finally:
                    if task is not None:
                        deadlines.finish(task)
            except web.HTTPException:
                raise
            except Exception as exc:
                return error_response(request, exc)

        return serve

    return wrap


async def timed_out(request: web.Request) -> web.Response:
    """The request timeout's 504 Status, sent, then its connection closed: the rest of a body that
    never arrived would otherwise be read as the next request.  Closed here, since an answer's
    ``Connection: close`` does not stop aiohttp's lingering read of an unread body (it heeds only
    its protocol's ``force_close``): the connection would stay busy for UNREAD_BODY_WAIT more."""
    response = error_response(request, Timeout(REQUEST_TIMEOUT_MESSAGE, details={}))
    response.force_close()
    with contextlib.suppress(ConnectionError):  # the client went: aiohttp finds so when it ends the answer
        await response.prepare(request)
        await response.write_eof()
    request.protocol.force_close()  # what was written goes out first
    return response


def error_response(request: web.Request, exc: Exception) -> web.Response:
    """``exc`` as a ``metav1.Status`` answer — the only place that renders one."""
    if isinstance(exc, StatusError):
        return json_response(exc.to_status(), exc.code)
    # A bug of ours: say so as Status 500, never a bare traceback.
    log.error("internal error serving %s %s", request.method, request.path, exc_info=exc)
    err = StatusError(f"Internal error occurred: {type(exc).__name__}: {exc}")
    return json_response(err.to_status(), 500)


async def _unrouted(request: web.Request) -> web.StreamResponse:
    """What no route serves: 405 when a route serves the path with other methods, else 404 (as
    Status; aiohttp's own answers are plain text).  Decided here, on the rare miss, rather than
    by a ``*`` route on every path, which cost a fifth of building the application."""
    for resource in request.app.router.resources():
        match, allowed = await resource.resolve(request)
        if match is None and allowed:
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
    raise NotFound(NOT_FOUND_MESSAGE, details={})


def _text(body: str) -> web.Response:
    return web.Response(text=body, content_type="text/plain")


# The resource handlers are plain functions returning handle_resource's awaitable, which the
# wrapper awaits: no frame of theirs on every request's await chain.
def _core(request: web.Request) -> Awaitable[web.StreamResponse]:
    return handle_resource(request, "", "v1", request.match_info["tail"])


def _grouped(request: web.Request) -> Awaitable[web.StreamResponse]:
    info = request.match_info
    return handle_resource(request, info["group"], info["version"], info["tail"])


def _api(request: web.Request) -> web.Response:
    return json_response(discovery.api_versions())


def _apis(request: web.Request) -> web.Response:
    return json_response(discovery.api_group_list(request.app[REGISTRY]))


def _api_group(request: web.Request, group: str) -> web.Response:
    doc = discovery.api_group(request.app[REGISTRY], group)
    if doc is None:
        raise NotFound(NOT_FOUND_MESSAGE, details={})
    return json_response(doc)


def _resources(request: web.Request, group: str = "", version: str = "v1") -> web.Response:
    doc = discovery.api_resource_list(request.app[REGISTRY], group, version)
    if doc is None:
        raise NotFound(NOT_FOUND_MESSAGE, details={})
    return json_response(doc)


def _version(request: web.Request) -> web.Response:
    return json_response(discovery.version_info())


def _health(request: web.Request) -> web.Response:
    return _text("ok")


def _openapi_root(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI].root())


def _openapi_gv(request: web.Request, tail: str) -> web.Response:
    parts = tail.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        doc = request.app[OPENAPI].document("", parts[1])
    elif len(parts) == 3 and parts[0] == "apis":
        doc = request.app[OPENAPI].document(parts[1], parts[2])
    else:
        doc = None
    if doc is None:
        raise NotFound(NOT_FOUND_MESSAGE, details={})
    return web.Response(body=doc, content_type="application/json")


def _openapi_v2(request: web.Request) -> web.Response:
    body, content_type = openapi.swagger_document(request.headers.get("Accept", ""))
    return web.Response(body=body, headers={"Content-Type": content_type})


# Discovery, health and OpenAPI paths (GET and HEAD only), each but /openapi/v2 also with a
# trailing slash (kr8s asks so).  One catch-all route serves them through this table: two aiohttp
# routes per path (and their HEAD twins) were half of building an application.
_DOCUMENTS: dict[str, Callable[[web.Request], web.Response]] = {"/openapi/v2": _openapi_v2}
for _path, _handler in (("/api", _api), ("/apis", _apis), ("/api/v1", _resources), ("/version", _version),
                        ("/healthz", _health), ("/livez", _health), ("/readyz", _health),
                        ("/openapi/v3", _openapi_root)):
    _DOCUMENTS[_path] = _DOCUMENTS[_path + "/"] = _handler
OPENAPI_V3_PREFIX = "/openapi/v3/"


def _unquote_path_safe(value: str) -> str:
    """A matched value as aiohttp's router gives it: the slashes and percent signs the matching
    form keeps encoded, decoded."""
    return value.replace("%2F", "/").replace("%25", "%") if "%" in value else value


def document_handler(path: str) -> Callable[[web.Request], web.Response] | None:
    """What serves ``path`` (aiohttp's matching form of it) among the discovery, health and
    OpenAPI documents, as the routes ``/apis/{group}``, ``/apis/{group}/{version}`` (each with an
    optional trailing slash) and ``/openapi/v3/{tail:.+}`` would match it; None for other paths."""
    handler = _DOCUMENTS.get(path)
    if handler is not None:
        return handler
    if path.startswith(OPENAPI_V3_PREFIX):
        return partial(_openapi_gv, tail=_unquote_path_safe(path[len(OPENAPI_V3_PREFIX):]))
    parts = path.split("/")
    if parts[-1] == "":  # one trailing slash
        parts.pop()
    if len(parts) in (3, 4) and parts[1] == "apis" and all(parts[2:]):
        if len(parts) == 3:
            return partial(_api_group, group=_unquote_path_safe(parts[2]))
        return partial(_resources, group=_unquote_path_safe(parts[2]), version=_unquote_path_safe(parts[3]))
    return None


async def _documents(request: web.Request) -> web.StreamResponse:
    """The catch-all route: a document (see :func:`document_handler`), else 405 or 404."""
    handler = document_handler(request.rel_url.path_safe)
    if handler is None:
        return await _unrouted(request)
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed("the server does not allow this method on the requested resource")
    return handler(request)


_BRACES = frozenset("{}")
_ANY = r"[\s\S]"  # any character (a route's pattern has no flags for "." to take newlines)


def _routes(app: web.Application, wrap: Callable[[Handler], Handler]) -> None:
    r = app.router
    # Resource paths first: aiohttp tries the routes indexed under one prefix (``/api/v1``,
    # ``/apis``) in the order they were added, and these are nearly every request; none of the
    # documents' paths matches them (a tail is needed).  A tail may hold any character, newlines
    # too (``.`` takes none): a name upstream would look up and not find is a 404 Status.
    app[RESOURCE_ROUTES] = (r.add_route("*", "/api/v1/{tail:" + _ANY + "+}", wrap(_core)),
                            r.add_route("*", "/apis/{group}/{version}/{tail:" + _ANY + "+}", wrap(_grouped)))


def route_directly(runner: web.AppRunner) -> None:
    """Serve the application of ``runner`` (one :func:`create_app` made) through
    :func:`dispatcher`: call after ``runner.setup()``, before a site starts."""
    server = runner.server
    assert server is not None, "the runner is not set up"
    server.request_handler = dispatcher(runner.app, server.request_handler)


def dispatcher(app: web.Application, routed: Handler) -> Handler:
    """The handler of every request to ``app`` in place of aiohttp's (``routed``, which resolves
    the route and runs the middlewares).  A request to a resource path goes straight to its
    route's handler, matched by prefix as the route's pattern would match it, with the same match
    info; any other path, a request that expects ``100-continue``, and every request while the
    application has middlewares go through ``routed``.  aiohttp's resolution (a dictionary
    lookup per path segment, a regular expression, three coroutines) cost ~5-10 us of a ~170 us
    create and of a ~110 us get in ``bench_api``, and nearly every request is to a resource
    path.  ``app`` must be frozen (its runner set up)."""
    core, grouped = app[RESOURCE_ROUTES]
    has_middlewares = bool(app.middlewares)

    async def dispatch(request: web.Request) -> web.StreamResponse:
        match = None if has_middlewares or request.headers.get(hdrs.EXPECT) else _resource_match(
            request.rel_url.path_safe, core, grouped)
        if match is None:
            return await routed(request)
        match.add_app(app)
        match.freeze()
        request._match_info = match  # what aiohttp's own dispatch sets (no public setter)
        return await match.route.handler(request)

    return dispatch


def _resource_match(path: str, core: web.ResourceRoute, grouped: web.ResourceRoute) -> UrlMappingMatchInfo | None:
    """The match of ``path`` (aiohttp's matching form of it) to the core or grouped resource
    route, as their patterns ``/api/v1/{tail}`` and ``/apis/{group}/{version}/{tail}`` would
    match it, or None: a tail is anything but empty, a ``{name}`` segment takes neither a slash
    nor a brace."""
    if path.startswith("/api/v1/"):
        tail = path[8:]
        return UrlMappingMatchInfo({"tail": _unquote_path_safe(tail)}, core) if tail else None
    if not path.startswith("/apis/"):
        return None
    group, _, rest = path[6:].partition("/")
    version, _, tail = rest.partition("/")
    if not (group and version and tail) or not _BRACES.isdisjoint(group + version):
        return None
    return UrlMappingMatchInfo({"group": _unquote_path_safe(group), "version": _unquote_path_safe(version),
                                "tail": _unquote_path_safe(tail)}, grouped)


async def _run_crd_controller(app: web.Application) -> AsyncIterator[None]:
    controller = app[CRDS]
    controller.start()
    yield
    await controller.stop()


async def _run_gc(app: web.Application) -> AsyncIterator[None]:
    collector = app[GC]
    collector.start()
    yield
    await collector.stop()


async def _close_watches(app: web.Application) -> None:
    app[REGISTRY].reads.close_all_watches()


async def _close_webhooks(app: web.Application) -> None:
    await app[WEBHOOKS].close()


async def _stop_sweeps(app: web.Application) -> None:
    """Every request and watch has ended: their timers must not outlive the application."""
    app[REQUEST_DEADLINES].close()
    app[BOOKMARKS].close()


def create_app(options: ServerOptions | None = None, *,
               static_tokens: Mapping[str, UserInfo] | None = None,
               gate: Callable[[], None] | None = None) -> web.Application:
    """A ready-to-run API server application with an empty store.  ``static_tokens``: bearer
    tokens a secure server accepts with fixed identities (the control plane's); ``gate``: called
    before each request is handled, it refuses the request by raising a :class:`StatusError`."""
    options = options or ServerOptions()
    store = ObjectStore(window=options.event_window, window_bytes=options.event_window_bytes,
                        watcher_limit=options.watcher_queue_limit)
    registry = Registry(store, KINDS, options.feature_gates,
                        network=ServiceNetwork.parse(options.service_cluster_ip_range, options.service_node_port_range))
    access = Access(registry.reads, registry.kinds, registry.tokens, secure=options.secure,
                    static_tokens=static_tokens)
    faults = FaultSet()
    deadlines = RequestDeadlines(options.request_timeout)
    wrap = serving(deadlines, access, faults, gate)
    app = web.Application(client_max_size=MAX_BODY)
    app[REQUEST_DEADLINES] = deadlines
    app[FAULTS] = faults
    _routes(app, wrap)
    if options.enable_faults:
        add_admin_routes(app, wrap)
    app.router.add_route("*", "/{tail:" + _ANY + "*}", wrap(_documents))  # last: tried when no other route matches
    app[REGISTRY] = registry
    app[ACCESS] = access
    app[OPTIONS] = options
    app[BOOKMARKS] = bookmark_sweep(options.bookmark_interval)
    app[OPENAPI] = OpenAPICache(registry)
    app[WEBHOOKS] = Webhooks(registry, enabled=options.admission_webhooks)
    app[GC] = GarbageCollector(registry)
    app[CRDS] = CRDController(registry)
    app.cleanup_ctx.append(_run_gc)
    app.cleanup_ctx.append(_run_crd_controller)
    app.on_shutdown.append(_close_watches)
    app.on_cleanup.append(_stop_sweeps)
    app.on_cleanup.append(_close_webhooks)
    bootstrap_objects(registry, options)
    return app


# What the bootstrap creates stored, by the options the write pipeline's answer depends on (gates,
# the service network, RBAC): every cluster after a process's first commits copies of it with its
# own uid, timestamps and resourceVersions instead of running the creates (~0.9M instructions).
_BOOTSTRAPPED: dict[tuple[FeatureGates, str, str, bool], list[tuple[StorageKey, dict[str, Any]]]] = {}


def bootstrap_objects(registry: Registry, options: ServerOptions) -> None:
    """Store the objects a fresh cluster has (namespaces, the ``kubernetes`` Service, the system
    PriorityClasses, RBAC's bootstrap roles when secure) in ``registry``'s empty store."""
    key = (options.feature_gates, options.service_cluster_ip_range, options.service_node_port_range,
           options.secure)
    store = registry.store
    templates = _BOOTSTRAPPED.get(key)
    if templates is None:
        first = store.rv + 1
        _bootstrap(registry)
        _bootstrap_priority_classes(registry)
        if options.secure:
            _bootstrap_rbac(registry)
        # The event log holds them in order unless a tiny window dropped some: then keep no copy.
        events = list(store.log.since(first - 1))
        if len(events) == store.rv - first + 1:
            _BOOTSTRAPPED[key] = [(e.storage, deep_copy(e.obj)) for e in events]
        return
    now = now_rfc3339()
    for storage, template in templates:
        obj = deep_copy(template)
        meta = obj["metadata"]
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now
        for entry in meta["managedFields"]:
            entry["time"] = now
        del meta["resourceVersion"]  # the commit adds the store's next one, last as the pipeline's
        store.commit(storage, ADDED, obj)


def _bootstrap(registry: Registry) -> None:
    """The namespaces a fresh cluster has, and the ``kubernetes`` Service in ``default`` (the
    first cluster IP; the apiserver's secure port behind it, as kubeadm's 6443)."""
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        registry.writes.create(registry.kinds.namespaces, "", {"metadata": {"name": name}},
                               WriteOptions(manager="fakeapi"))
    services = registry.kinds.by_plural("", "services")
    assert services is not None
    registry.writes.create(services, "default", {
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": registry.writes.network.first_ip,
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}},
        WriteOptions(manager="kube-apiserver"))


def _bootstrap_rbac(registry: Registry) -> None:
    """Upstream's bootstrap ClusterRoles and ClusterRoleBindings, aggregated roles filled in (so
    they hold without the control plane's aggregation controller too)."""
    opts = WriteOptions(manager="fakeapi")
    roles = registry.kinds.by_plural(rbac.GROUP, "clusterroles")
    bindings = registry.kinds.by_plural(rbac.GROUP, "clusterrolebindings")
    assert roles is not None and bindings is not None
    for role in bootstrap.CLUSTER_ROLES:
        rules = aggregated_rules(role, bootstrap.CLUSTER_ROLES)
        registry.writes.create(roles, "", role if rules is None else {**role, "rules": rules}, opts)
    for binding in bootstrap.CLUSTER_ROLE_BINDINGS:
        registry.writes.create(bindings, "", binding, opts)


def _bootstrap_priority_classes(registry: Registry) -> None:
    """The two system PriorityClasses, as the apiserver's post-start hook creates them."""
    priority_classes = registry.kinds.by_plural(priority.GROUP, priority.PLURAL)
    assert priority_classes is not None
    for pc in priority.SYSTEM_PRIORITY_CLASSES:
        registry.writes.create(priority_classes, "", pc, WriteOptions(manager="kube-apiserver"))
