"""A thin async HTTP client for the Kubernetes wire protocol.

The control plane talks to the API server only through this module, exactly as a real
kube-scheduler or kube-controller-manager would: list, watch (newline-delimited JSON events),
create, update, patch (merge, strategic, JSON, apply), delete, the ``status`` subresource and
``pods/binding``.  Objects are plain JSON dicts; a non-2xx answer becomes the matching
:class:`fakeapi.errors.StatusError` subclass, so callers write ``except Conflict``.  A request
that gets no answer raises one of :data:`TRANSPORT_ERRORS`; :func:`outcome_unknown` tells which
failed writes may have been committed all the same.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload
from urllib.parse import quote

import orjson
from fakeapi.scheduler.connection import Connection
from fakeapi.scheduler.http import HTTPClient

from fakeapi.errors import StatusError
from fakeapi.machinery.deadlines import TaskDeadlines
from fakeapi.machinery.managedfields import OMIT_MANAGED_FIELDS_HEADER

# The control plane's User-Agent, the field manager of a write that names none (as upstream's).
CONTROL_PLANE_AGENT = "fakeapi-control-plane"
# Its components' field managers: what upstream's apiserver makes of their User-Agents (the part
# before the first "/"), sent as their writes' fieldManager (ApiClient.as_manager) under that one.
KUBELET_MANAGER, SCHEDULER_MANAGER, CONTROLLER_MANAGER = "kubelet", "kube-scheduler", "kube-controller-manager"


@dataclass(frozen=True)
class GVR:
    """Group, version and plural resource name: everything needed to build a URL."""

    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        """``/api/v1/namespaces/ns/pods/p/status``; no namespace means all namespaces."""
        parts = ["/api/v1"] if not self.group else [f"/apis/{self.group}/{self.version}"]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{_segment(namespace)}")
        parts.append(self.plural)
        if name is not None:
            parts.append(_segment(name))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)


@functools.lru_cache(maxsize=1024)
def _query_pair(key: str, value: str) -> str:
    """``key=value`` percent-encoded; remembered, since most requests repeat a few (``watch=true``,
    ``fieldManager=...``) and quoting costs a dozen calls a parameter."""
    return f"{quote(key, safe='')}={quote(value, safe='')}"


def _segment(name: str) -> str:
    """``name`` as one path segment: percent-encoded, and a name of dots with its dots encoded,
    so that no one on the way takes it for a dot segment and drops it with the segment before."""
    return quote(name, safe="") if name.strip(".") else "%2E" * len(name)


PODS = GVR("", "v1", "pods", True)
NODES = GVR("", "v1", "nodes", False)
NAMESPACES = GVR("", "v1", "namespaces", False)
EVENTS = GVR("", "v1", "events", True)
EVENTS_V1 = GVR("events.k8s.io", "v1", "events", True)
RESOURCE_CLAIMS = GVR("resource.k8s.io", "v1", "resourceclaims", True)
RESOURCE_CLAIM_TEMPLATES = GVR("resource.k8s.io", "v1", "resourceclaimtemplates", True)
RESOURCE_SLICES = GVR("resource.k8s.io", "v1", "resourceslices", False)
DEVICE_CLASSES = GVR("resource.k8s.io", "v1", "deviceclasses", False)
DEVICE_TAINT_RULES = GVR("resource.k8s.io", "v1", "devicetaintrules", False)
PODGROUPS = GVR("scheduling.k8s.io", "v1beta1", "podgroups", True)
WORKLOADS_V1BETA1 = GVR("scheduling.k8s.io", "v1beta1", "workloads", True)
WORKLOADS_V1ALPHA1 = GVR("scheduling.k8s.io", "v1alpha1", "workloads", True)
PODDISRUPTIONBUDGETS = GVR("policy", "v1", "poddisruptionbudgets", True)

_PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}

# The annotation of the BOOKMARK that ends a streaming list's initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

# What a request fails with when no answer arrives: the connection broke, or the answer took too long.
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (OSError, TimeoutError)

# Ordinary requests must never hang a control loop: one without its answer this many seconds
# after it began fails with TimeoutError.  Each client sweeps its requests' deadlines with one
# timer (machinery.deadlines) instead of a timer per request; watches are bounded by
# timeoutSeconds instead.
REQUEST_TIMEOUT = 30.0


def _dumps(body: Any) -> bytes:
    return orjson.dumps(body)


def _query(**params: Any) -> dict[str, str]:
    """Drop unset parameters and render the rest the way the API server expects."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


class ApiClient:
    """Kubernetes API requests to one server over keep-alive HTTP/1.1 connections
    (:mod:`fakeapi.scheduler.http`); use as ``async with``."""

    def __init__(self, server: str | Connection, *, user_agent: str = CONTROL_PLANE_AGENT,
                 omit_managed_fields: bool = False) -> None:
        """``omit_managed_fields``: read every object without ``metadata.managedFields`` (fakeapi's
        extension header, see :data:`~fakeapi.machinery.managedfields.OMIT_MANAGED_FIELDS_HEADER`),
        for a client that drops them anyway, as the control plane's informers do."""
        self.connection = server if isinstance(server, Connection) else Connection(server)
        self._user_agent = user_agent
        self._extra_headers = {OMIT_MANAGED_FIELDS_HEADER: "true"} if omit_managed_fields else {}
        self._http: HTTPClient | None = None
        self._deadlines = TaskDeadlines(REQUEST_TIMEOUT)
        self._field_manager: str | None = None  # the writes' fieldManager when a call names none

    def as_manager(self, manager: str) -> ApiClient:
        """This open client's connections, its creates, updates and patches made as field manager
        ``manager``: how the control plane's components write under their upstream names
        (``kubelet``, ``kube-scheduler``, ``kube-controller-manager``, which upstream's apiserver
        takes from their User-Agents) over one connection pool and one User-Agent.  Closing the
        client closes the view's connections too."""
        view = ApiClient.__new__(ApiClient)  # copy.copy costs a few times more, on every start
        view.__dict__.update(self.__dict__, _field_manager=manager)
        return view

    async def __aenter__(self) -> ApiClient:
        self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def open(self) -> None:
        """Make the connection pool (idempotent); ``async with`` calls it for you."""
        if self._http is None:
            self._http = HTTPClient(
                self.connection.server,
                {"User-Agent": self._user_agent, "Accept": "application/json", **self._extra_headers,
                 **self.connection.headers()},
                ssl_context=self.connection.ssl_context(), connect=self.connection.connect)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        self._deadlines.close()

    @property
    def http(self) -> HTTPClient:
        """The connection pool the requests go through."""
        if self._http is None:
            raise RuntimeError("ApiClient is not open; use `async with ApiClient(url)`")
        return self._http

    @staticmethod
    def target(path: str, params: dict[str, str] | None = None, *, encoded: bool = True) -> str:
        """The request target of ``path`` after the server's own path prefix, with ``params`` as
        its percent-encoded query; ``encoded``: ``path`` is percent-encoded already (GVR.path's)."""
        if not encoded:
            path = quote(path, safe="/:@!$&'()*+,;=-._~")
        return f"{path}?{'&'.join([_query_pair(k, v) for k, v in params.items()])}" if params else path

    async def _request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                       body: Any = None, content_type: str = "application/json", result: bool = True,
                       encoded: bool = True) -> Any:
        """The decoded answer; with ``result`` false None (the body is read but not decoded unless
        it is an error's Status); ``encoded`` as in :meth:`target`."""
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else _dumps(body)
        task = self._deadlines.begin()
        try:
            status, raw = await self.http.request(method, self.target(path, params, encoded=encoded), data,
                                                  content_type)
        except asyncio.CancelledError:
            if self._deadlines.expired(task):
                raise TimeoutError(f"no answer to {method} {path} in {self._deadlines.seconds:g} s") from None
            raise
        finally:
            self._deadlines.finish(task)
        if status >= 400:
            raise _status_error(status, _decode(raw), raw)
        return _decode(raw) if result else None

    async def get(self, gvr: GVR, namespace: str | None, name: str) -> dict:
        return await self._request("GET", gvr.path(namespace, name))

    async def get_path(self, path: str) -> Any:
        """GET any path of the server (discovery documents, ``/version``) as JSON."""
        return await self._request("GET", path, encoded=False)

    async def list(self, gvr: GVR, namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None, limit: int | None = None,
                   continue_: str | None = None, resource_version: str | None = None) -> dict:
        params = _query(labelSelector=label_selector, fieldSelector=field_selector, limit=limit,
                        resourceVersion=resource_version)
        if continue_:
            params["continue"] = continue_
        return await self._request("GET", gvr.path(namespace), params=params)

    async def watch(self, gvr: GVR, namespace: str | None = None, *, resource_version: str,
                    label_selector: str | None = None, field_selector: str | None = None,
                    allow_bookmarks: bool = True, send_initial_events: bool = False,
                    timeout_seconds: int | None = None) -> AsyncIterator[dict]:
        """Yield ``{"type", "object"}`` events until the server ends the stream.

        ``send_initial_events`` makes it a streaming list (WatchList): the objects as ADDED
        events, then a BOOKMARK annotated :data:`INITIAL_EVENTS_END`, then live events.
        An in-stream ``ERROR`` event (e.g. 410 "too old resource version") is raised as the
        matching :class:`StatusError`, so ``except Expired`` triggers a re-list.
        """
        params = _query(watch=True, resourceVersion=resource_version, labelSelector=label_selector,
                        fieldSelector=field_selector, allowWatchBookmarks=allow_bookmarks or None,
                        sendInitialEvents=send_initial_events or None,
                        resourceVersionMatch="NotOlderThan" if send_initial_events else None,
                        timeoutSeconds=timeout_seconds)
        async with self.http.stream("GET", self.target(gvr.path(namespace), params)) as resp:
            if resp.status >= 400:
                raw = await resp.read()
                raise _status_error(resp.status, _decode(raw), raw)
            # Lines may be long and chunks may split them: split on newlines ourselves.
            buffer = b""
            async for chunk in resp.chunks():
                lines, buffer = complete_lines(buffer + chunk)
                for line in lines:
                    if line and not line.isspace():
                        yield _watch_event(orjson.loads(line))
            if buffer.strip():
                yield _watch_event(orjson.loads(buffer))

    @overload
    async def create(self, gvr: GVR, namespace: str | None, body: dict, *,
                     field_manager: str | None = None, result: Literal[True] = True) -> dict: ...
    @overload
    async def create(self, gvr: GVR, namespace: str | None, body: dict, *,
                     field_manager: str | None = None, result: Literal[False]) -> None: ...

    async def create(self, gvr: GVR, namespace: str | None, body: dict, *,
                     field_manager: str | None = None, result: bool = True) -> dict | None:
        """POST; ``result=False`` for a caller that does not read the created object (None then)."""
        return await self._request("POST", gvr.path(namespace), body=body,
                                   params=_query(fieldManager=field_manager or self._field_manager), result=result)

    async def update(self, gvr: GVR, namespace: str | None, body: dict, *,
                     subresource: str | None = None) -> dict:
        """PUT; optimistic concurrency through the body's ``metadata.resourceVersion``."""
        name = body["metadata"]["name"]
        return await self._request("PUT", gvr.path(namespace, name, subresource), body=body,
                                   params=_query(fieldManager=self._field_manager))

    @overload
    async def patch(self, gvr: GVR, namespace: str | None, name: str, body: Any, *,
                    patch_type: str = "merge", subresource: str | None = None, field_manager: str | None = None,
                    force: bool | None = None, result: Literal[True] = True) -> dict: ...
    @overload
    async def patch(self, gvr: GVR, namespace: str | None, name: str, body: Any, *,
                    patch_type: str = "merge", subresource: str | None = None, field_manager: str | None = None,
                    force: bool | None = None, result: Literal[False]) -> None: ...

    async def patch(self, gvr: GVR, namespace: str | None, name: str, body: Any, *,
                    patch_type: str = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool | None = None,
                    result: bool = True) -> dict | None:
        """``patch_type`` is one of ``merge``, ``strategic``, ``json`` or ``apply``; ``result=False``
        for a caller that does not read the patched object (None then)."""
        return await self._request("PATCH", gvr.path(namespace, name, subresource), body=body,
                                   content_type=_PATCH_CONTENT_TYPES[patch_type],
                                   params=_query(fieldManager=field_manager or self._field_manager, force=force),
                                   result=result)

    async def delete(self, gvr: GVR, namespace: str | None, name: str, *,
                     preconditions: dict | None = None, propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None) -> dict | None:
        """Return the object while it lingers (finalizers, grace) or the Success Status."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        return await self._request("DELETE", gvr.path(namespace, name), body=options)

    async def bind(self, namespace: str, pod_name: str, node_name: str, pod_uid: str | None = None) -> None:
        """POST ``pods/binding``; a pod UID makes the binding conditional on that pod instance."""
        metadata: dict[str, Any] = {"name": pod_name, "namespace": namespace}
        if pod_uid:
            metadata["uid"] = pod_uid
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        await self._request("POST", PODS.path(namespace, pod_name, "binding"), body=body, result=False)


def outcome_unknown(exc: BaseException) -> bool:
    """Whether a write that failed with ``exc`` may have been committed all the same.

    Only a 4xx answer says the server did not apply the request.  A broken connection or a
    timeout may hide a commit (the request reached the server, the answer got lost), and so may
    a 5xx (a server can fail after committing); the writer must re-read before reusing what it
    wrote.  (The client resends only a GET whose kept-alive connection the server had closed.)
    """
    if isinstance(exc, StatusError):
        return exc.code >= 500
    return isinstance(exc, TRANSPORT_ERRORS)


def complete_lines(buffer: bytes) -> tuple[Sequence[bytes], bytes]:
    """The complete lines of ``buffer`` (a line may keep its newline) and the incomplete rest.
    Most watch chunks are one whole event: found by memchr and kept whole, where bytes.split
    would scan it byte by byte and copy it."""
    if buffer.find(b"\n") == len(buffer) - 1:
        return (buffer,), b""
    *lines, rest = buffer.split(b"\n")
    return lines, rest


def _decode(raw: bytes) -> Any:
    """JSON body or None: error pages from proxies or the framework may be plain text."""
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None


def trim_managed_fields(obj: dict) -> dict:
    """``obj`` (freshly decoded, so not shared yet) without ``metadata.managedFields``, as
    kube-scheduler's and kube-controller-manager's informers keep objects: no loop reads them, and
    a write of such an object leaves the stored ones in place.  The control plane's client asks the
    server to leave them out already (``omit_managed_fields``); this keeps any that come anyway
    (a client without the option) out of the caches."""
    meta = obj.get("metadata")
    if meta:
        meta.pop("managedFields", None)
    return obj


def _watch_event(event: dict) -> dict:
    if event.get("type") == "ERROR":
        raise StatusError.from_status(event.get("object") or {})
    return event


def _status_error(http_status: int, payload: Any, raw: bytes) -> StatusError:
    if isinstance(payload, dict) and payload.get("kind") == "Status":
        return StatusError.from_status(payload)
    return StatusError.from_status({"code": http_status, "message": raw.decode(errors="replace")[:500]})
