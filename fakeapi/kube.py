"""Test helpers over HTTP for any cluster: apply manifests, get, list, delete, wait, read events.

:class:`KubeHelpers` is what ``FakeCluster`` and the pytest fixtures' cluster objects share; it
speaks only the public API (discovery, server-side apply, list and watch), so the same helper
calls work against fakeapi, kind or a real cluster.  Kinds are named as kubectl names them:
``Pod``, ``pods``, ``pod``, a short name (``rc``... as discovery lists them) or ``plural.group``
(``resourceclaims.resource.k8s.io``); manifests name theirs by ``apiVersion`` and ``kind``.

``wait_for`` watches (list, then watch from the list's revision; a 410 or a closed stream
re-lists), so it returns as soon as the condition holds, never a polling interval later.
Conditions read as ``kubectl wait --for``: ``"condition=Ready"`` (or just ``"Ready"``),
``"condition=Ready=False"``, ``"delete"``, ``"jsonpath={.status.phase}=Running"``, or a callable
taking the object.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fakeapi.errors import Expired, NotFound, StatusError
from fakeapi.machinery import yamltext
from fakeapi.machinery.jsonpath import MISSING, PathError, lookup, parse_path
from fakeapi.scheduler.client import GVR, TRANSPORT_ERRORS, ApiClient
from fakeapi.scheduler.connection import Connection

FIELD_MANAGER = "fakeapi-helpers"
# How long apply waits for a kind to appear in discovery (a CRD applied just before it).
DISCOVERY_WAIT = 10.0
_RETRY_DELAY = 0.05

# kubectl's ``--for=jsonpath='{.status.phase}'=Running``: a braced path, quoted or not, and a value.
_JSONPATH = re.compile(r"""^(['"]?)(?P<path>\{[^}]*\})\1(?:=(?P<value>.*))?$""")

Manifest = str | Path | dict[str, Any] | Iterable[dict[str, Any]]
Condition = str | Callable[[dict[str, Any]], Any]


class WaitTimeout(AssertionError):
    """The condition did not hold before the deadline (an assertion failure in a test)."""


@dataclass(frozen=True)
class ApiResource:
    """One resource of discovery: what names it, and where it lives."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str = ""
    short_names: tuple[str, ...] = ()
    namespaced: bool = True
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()

    @property
    def gvr(self) -> GVR:
        return GVR(self.group, self.version, self.plural, self.namespaced)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def find_resource(resources: Iterable[ApiResource], name: str, api_version: str | None = None) -> ApiResource | None:
    """The resource ``name`` means, as kubectl resolves it: a kind, plural, singular or short name
    (case-insensitive for all but the kind), optionally ``.group``-qualified; with ``api_version``
    the kind of exactly that group and version.  The core group wins a tie, then the order given
    (discovery's preferred versions first)."""
    candidates = list(resources)
    if api_version is not None:
        group, _, version = api_version.rpartition("/")
        return next((r for r in candidates if r.group == group and r.version == version and r.kind == name), None)
    lowered = name.lower()
    base, _, group = lowered.partition(".")
    for r in sorted(candidates, key=lambda r: r.group != ""):
        if group and r.group != group:
            continue
        if name == r.kind or base in (r.plural, r.singular, r.kind.lower()) or base in r.short_names:
            return r
    return None


def parse_condition(condition: Condition) -> Callable[[dict[str, Any] | None], bool]:
    """A predicate over the object (None once it is gone) for a ``kubectl wait --for`` spelling or
    a callable; ``ValueError`` for a spelling it does not know."""
    if callable(condition):
        return lambda obj: obj is not None and bool(condition(obj))
    text = condition.strip()
    if text == "delete":
        return lambda obj: obj is None
    if text.startswith("jsonpath="):
        match = _JSONPATH.match(text[len("jsonpath="):])
        try:
            steps = parse_path(match.group("path") if match else "")
        except PathError as exc:
            raise ValueError(f"unsupported wait condition {condition!r}: {exc}") from exc
        assert match is not None
        expected = match.group("value")
        return lambda obj: obj is not None and _path_holds(lookup(obj, steps), expected)
    if text.startswith("condition="):
        text = text[len("condition="):]
    ctype, _, want = text.partition("=")
    if not ctype or "=" in want:
        raise ValueError(f"unsupported wait condition {condition!r}")
    want = want or "True"
    return lambda obj: obj is not None and any(
        c.get("type") == ctype and str(c.get("status")).lower() == want.lower()
        for c in (obj.get("status") or {}).get("conditions") or [])


def _path_holds(value: Any, expected: str | None) -> bool:
    if value is MISSING:
        return False
    if expected is None:
        return True
    rendered = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()
    return rendered == expected or str(value).lower() == expected.lower()


def load_manifest(manifest: Manifest) -> list[dict[str, Any]]:
    """The documents of a manifest: YAML text (any number of ``---`` documents), a path to one, an
    object or objects.  Empty documents are dropped; a document without ``kind`` is refused."""
    if isinstance(manifest, Path) or (isinstance(manifest, str) and "\n" not in manifest
                                      and manifest.strip().endswith((".yaml", ".yml", ".json"))):
        manifest = Path(manifest).read_text()
    if isinstance(manifest, str):
        docs = [d for d in yamltext.load_all(manifest) if d is not None]
    elif isinstance(manifest, dict):
        docs = [manifest]
    else:
        docs = list(manifest)
    for doc in docs:
        if not isinstance(doc, dict) or not doc.get("kind") or not doc.get("apiVersion"):
            raise ValueError(f"not a Kubernetes object (no apiVersion and kind): {str(doc)[:200]}")
        if doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
            raise ValueError("apply the items of a List one by one")
        if not (doc.get("metadata") or {}).get("name"):
            raise ValueError(f"{doc['kind']} without metadata.name cannot be applied")
    return docs


class Discovery:
    """The served resources, from the legacy discovery documents; refreshed when a name is unknown."""

    def __init__(self, api: ApiClient) -> None:
        self._api = api
        self._resources: list[ApiResource] | None = None

    async def refresh(self) -> list[ApiResource]:
        found: list[ApiResource] = []
        paths = [("", "v1", "/api/v1")]
        groups = await self._api.get_path("/apis")
        for group in groups.get("groups") or []:
            versions = [group["preferredVersion"]] + [v for v in group["versions"] if v != group["preferredVersion"]]
            paths += [(group["name"], v["version"], f"/apis/{v['groupVersion']}") for v in versions]
        documents = await asyncio.gather(*(self._api.get_path(path) for *_, path in paths),
                                         return_exceptions=True)
        for (group, version, _), doc in zip(paths, documents, strict=True):
            if isinstance(doc, BaseException):
                continue  # a group version going away (a CRD being deleted) is skipped
            listed = doc.get("resources") or []
            subresources: dict[str, list[str]] = {}
            for r in listed:
                plural, _, sub = r["name"].partition("/")
                if sub:
                    subresources.setdefault(plural, []).append(sub)
            found += [ApiResource(group, version, r["kind"], r["name"], r.get("singularName", ""),
                                  tuple(r.get("shortNames") or ()), bool(r.get("namespaced")),
                                  tuple(subresources.get(r["name"], ())), tuple(r.get("verbs") or ()))
                      for r in listed if "/" not in r["name"]]
        self._resources = found
        return found

    async def resolve(self, name: str, api_version: str | None = None, *, wait: float = 0.0) -> ApiResource:
        """The resource for ``name``; refreshes discovery (for up to ``wait`` seconds) when unknown."""
        resources = self._resources if self._resources is not None else await self.refresh()
        found = find_resource(resources, name, api_version)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while found is None:
            resources = await self.refresh()
            found = find_resource(resources, name, api_version)
            if found is not None or loop.time() >= deadline:
                break
            await asyncio.sleep(_RETRY_DELAY)
        if found is None:
            what = f"{api_version}, Kind={name}" if api_version else name
            raise NotFound(f'the server doesn\'t have a resource type "{what}"')
        return found


def _retriable(exc: BaseException) -> bool:
    return isinstance(exc, TRANSPORT_ERRORS) or (isinstance(exc, StatusError) and exc.code in (429, 500, 503, 504))


class KubeHelpers:
    """apply / get / list / delete / wait_for / events against one cluster over HTTP.

    ``namespace`` is where namespaced objects go when a call or a manifest does not say.  A
    subclass opens the helpers with :meth:`open_helpers` once its server is known.
    """

    namespace: str = "default"
    _helpers_api: ApiClient | None = None
    _discovery: Discovery | None = None

    def open_helpers(self, connection: Connection | None = None, *, share: KubeHelpers | None = None) -> None:
        """Connect the helpers (they run on the calling event loop), or share another's connection."""
        if share is not None:
            self._helpers_api, self._discovery = share.api, share._discovery
            return
        assert connection is not None
        self._helpers_api = ApiClient(connection, user_agent="fakeapi-helpers")
        self._helpers_api.open()
        self._discovery = Discovery(self._helpers_api)

    async def close_helpers(self) -> None:
        api, self._helpers_api = self._helpers_api, None
        if api is not None:
            await api.close()

    @property
    def api(self) -> ApiClient:
        """The async client under the helpers, for what they do not cover."""
        if self._helpers_api is None:
            raise RuntimeError("the cluster is not running")
        return self._helpers_api

    async def resources(self) -> list[ApiResource]:
        """Every resource the server serves now (discovery read afresh)."""
        assert self._discovery is not None, "the cluster is not running"
        return await self._discovery.refresh()

    async def resource(self, kind: str, api_version: str | None = None, *, wait: float = 0.0) -> ApiResource:
        """What discovery says about ``kind`` (a kind, plural, singular or short name)."""
        assert self._discovery is not None, "the cluster is not running"
        return await self._discovery.resolve(kind, api_version, wait=wait)

    def _namespace(self, resource: ApiResource, namespace: str | None) -> str | None:
        return (namespace or self.namespace) if resource.namespaced else None

    async def apply(self, manifest: Manifest, *, namespace: str | None = None) -> list[dict[str, Any]]:
        """Server-side apply every document of ``manifest`` in order (YAML text, a path, objects),
        forcing conflicts as ``kubectl apply --server-side --force-conflicts``, and its ``status``
        (if it has one) through the status subresource, as the object's controller or kubelet
        would write it (a Node's conditions and allocatable); returns the objects as stored.  A
        kind defined by a CRD earlier in the manifest is waited for."""
        applied = []
        for doc in load_manifest(manifest):
            resource = await self.resource(doc["kind"], doc["apiVersion"], wait=DISCOVERY_WAIT)
            ns = self._namespace(resource, doc["metadata"].get("namespace") or namespace)
            name = doc["metadata"]["name"]
            obj = await self.api.patch(resource.gvr, ns, name, doc, patch_type="apply", field_manager=FIELD_MANAGER,
                                       force=True)
            if doc.get("status") and "status" in resource.subresources:
                status = {"apiVersion": doc["apiVersion"], "kind": doc["kind"], "metadata": {"name": name},
                          "status": doc["status"]}
                obj = await self.api.patch(resource.gvr, ns, name, status, patch_type="apply",
                                           field_manager=FIELD_MANAGER, force=True, subresource="status")
            applied.append(obj)
        return applied

    async def get(self, kind: str, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        """The object (:class:`~fakeapi.errors.NotFound` if there is none)."""
        resource = await self.resource(kind)
        return await self.api.get(resource.gvr, self._namespace(resource, namespace), name)

    async def list(self, kind: str, *, namespace: str | None = None, all_namespaces: bool = False,
                   label_selector: str | None = None, field_selector: str | None = None) -> list[dict[str, Any]]:
        """The objects of ``kind`` in the namespace (or all namespaces)."""
        resource = await self.resource(kind)
        ns = None if all_namespaces else self._namespace(resource, namespace)
        listing = await self.api.list(resource.gvr, ns, label_selector=label_selector, field_selector=field_selector)
        return listing.get("items") or []

    async def delete(self, kind: str, name: str, *, namespace: str | None = None, wait: bool = False,
                     timeout: float = 30.0, propagation_policy: str = "Background") -> None:
        """Delete the object (gone already is fine); ``wait`` until it is gone (finalizers, grace)."""
        resource = await self.resource(kind)
        ns = self._namespace(resource, namespace)
        try:
            await self.api.delete(resource.gvr, ns, name, propagation_policy=propagation_policy)
        except NotFound:
            return
        if wait:
            await self.wait_for(kind, name, "delete", namespace=ns, timeout=timeout)

    async def wait_for(self, kind: str, name: str, condition: Condition, *, timeout: float = 10.0,
                       namespace: str | None = None) -> dict[str, Any] | None:
        """Watch the object until ``condition`` holds and return it (None for ``"delete"``).

        Raises :class:`WaitTimeout` (an ``AssertionError``) with the last state seen after
        ``timeout`` seconds.  Transient errors (429, 5xx, broken connections) are retried.
        """
        predicate = parse_condition(condition)
        resource = await self.resource(kind)
        ns = self._namespace(resource, namespace)
        seen: list[dict[str, Any] | None] = [None]
        try:
            async with asyncio.timeout(timeout):
                return await self._watch_until(resource.gvr, ns, name, predicate, seen)
        except TimeoutError:
            state = "absent" if seen[0] is None else yaml.safe_dump(seen[0].get("status") or {}, sort_keys=False)
            raise WaitTimeout(f"timed out after {timeout}s waiting for {resource.kind} {name!r} to satisfy "
                              f"{condition!r}; last status:\n{state}") from None

    async def _watch_until(self, gvr: GVR, namespace: str | None, name: str,
                           predicate: Callable[[dict[str, Any] | None], bool],
                           seen: list[dict[str, Any] | None]) -> dict[str, Any] | None:
        selector = f"metadata.name={name}"
        while True:
            try:
                listing = await self.api.list(gvr, namespace, field_selector=selector)
                items = listing.get("items") or []
                seen[0] = items[0] if items else None
                if predicate(seen[0]):
                    return seen[0]
                rv = listing["metadata"]["resourceVersion"]
                async for event in self.api.watch(gvr, namespace, resource_version=rv, field_selector=selector,
                                                  timeout_seconds=300):
                    if event["type"] == "BOOKMARK":
                        continue
                    seen[0] = None if event["type"] == "DELETED" else event["object"]
                    if predicate(seen[0]):
                        return seen[0]
            except Expired:
                continue
            except Exception as exc:
                if not _retriable(exc):
                    raise
                await asyncio.sleep(_RETRY_DELAY)

    async def events(self, for_object: dict[str, Any], *, reason: str | None = None,
                     timeout: float = 10.0) -> list[dict[str, Any]]:
        """The core/v1 Events about ``for_object`` (by UID), oldest first; with ``reason``, once
        one with that reason is recorded (recorders write after the fact), :class:`WaitTimeout`
        after ``timeout`` seconds without one."""
        meta = for_object["metadata"]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            events = await self.list("events", namespace=meta.get("namespace") or None,
                                     all_namespaces=not meta.get("namespace"),
                                     field_selector=f"involvedObject.uid={meta['uid']}")
            if reason is None or any(e.get("reason") == reason for e in events):
                return sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
            if loop.time() >= deadline:
                raise WaitTimeout(f"no {reason} event for {meta.get('name')!r} after {timeout}s; events: "
                                  f"{[e.get('reason') for e in events]}")
            await asyncio.sleep(_RETRY_DELAY)
