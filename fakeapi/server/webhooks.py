"""Calling validating admission webhooks (``ServerOptions.admission_webhooks``).

A write that a ValidatingWebhookConfiguration's webhook matches is prepared in full by the registry
(defaults, validation, admission policies: the object as it would be stored), judged by every
matching webhook at once, and stored only if all of them allow it; the first denial (in
configuration name order, then webhook order) or failed call under ``failurePolicy: Fail``
becomes the answer, with upstream's messages (:mod:`fakeapi.machinery.admission_review`).

Webhooks are reached at ``clientConfig.url``, or through a ``clientConfig.service``: fakeapi has
no cluster network, so a Service reference is resolved through the Service's Endpoints (the first
ready address, on the target port of the named service port), as kube-apiserver does with
``--enable-aggregator-routing``; the TLS server name stays ``<service>.<namespace>.svc``.
Mutating webhooks are stored, never called.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import uuid
from typing import Any

import aiohttp

from fakeapi.auth.users import UserInfo
from fakeapi.errors import StatusError
from fakeapi.machinery.admission_match import RequestAttributes
from fakeapi.machinery.admission_review import WebhookError, denial, failure, review, verdict, webhook_applies
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry

log = logging.getLogger("fakeapi")
GROUP = "admissionregistration.k8s.io"
MAX_ANSWER = 3 * 1024 * 1024  # fakeapi's bound on a webhook's answer, as on a request's body


class _Unreachable(Exception):
    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url, self.reason = url, reason


class Webhooks:
    """The validating webhooks of one server, and the HTTP client that calls them."""

    def __init__(self, registry: Registry, *, enabled: bool) -> None:
        self._registry = registry
        self._enabled = enabled
        rt = registry.kinds.by_plural(GROUP, "validatingwebhookconfigurations")
        assert rt is not None, "the admissionregistration kinds are built in"
        self._configurations = rt
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}  # per CA bundle

    def active(self) -> bool:
        """Whether a write must be judged: calling is enabled and a configuration is stored."""
        return self._enabled and self._registry.store.count(self._configurations.storage_key) > 0

    async def close(self) -> None:
        """Close the client's connections (the application's cleanup)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def validate(self, rt: ResourceType, operation: str, obj: dict[str, Any] | None,
                       old: dict[str, Any] | None, subresource: str, user: UserInfo | None,
                       dry_run: bool) -> list[str]:
        """Judge one write; returns the webhooks' warnings, raises the Status of a refusal."""
        meta = (obj if obj is not None else old or {}).get("metadata") or {}
        attrs = RequestAttributes(operation, rt.group, rt.version, rt.plural, subresource, meta.get("name") or "",
                                  meta.get("namespace") or "" if rt.namespaced else "", rt.kind)
        reads = self._registry.reads
        is_namespace = rt.group == "" and rt.plural == "namespaces"
        ns_name = attrs.name if is_namespace else attrs.namespace
        namespace = reads.find(self._registry.kinds.namespaces, "", ns_name) if ns_name else None
        kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        resource = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        user_info = user.to_api() if user is not None else {"username": ""}
        base = review("", kind, resource, attrs, None, None, user_info, dry_run)["request"]
        activation = {"object": obj, "oldObject": old, "namespaceObject": None if is_namespace else namespace,
                      "request": {k: v for k, v in base.items() if k not in ("uid", "object", "oldObject")}}
        calls = []
        for config in reads.items(self._configurations):
            for hook in config.get("webhooks") or []:
                try:
                    applies = webhook_applies(hook, attrs, namespace=namespace, obj=obj, old=old,
                                              activation=activation)
                except WebhookError as exc:
                    raise failure(hook.get("name") or "", str(exc)) from None
                if applies:
                    calls.append(self._call(hook, kind, resource, attrs, obj, old, user_info, dry_run))
        warnings: list[str] = []
        for result in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result
            warnings += result
        return warnings

    async def _call(self, hook: dict[str, Any], kind: dict[str, str], resource: dict[str, str],
                    attrs: RequestAttributes, obj: dict[str, Any] | None, old: dict[str, Any] | None,
                    user: dict[str, Any], dry_run: bool) -> list[str]:
        name = hook.get("name") or ""
        uid = str(uuid.uuid4())
        try:
            answer = await self._post(hook, review(uid, kind, resource, attrs, obj, old, user, dry_run))
            allowed, status, warnings = verdict(answer, uid)
        except WebhookError as exc:
            if hook.get("failurePolicy") == "Ignore":
                log.warning("Failed calling webhook, failing open %s: %s", name, exc)
                return []
            raise failure(name, str(exc)) from None
        if not allowed:
            error: StatusError = denial(name, status)
            raise error
        return warnings

    async def _post(self, hook: dict[str, Any], body: dict[str, Any]) -> Any:
        config = hook.get("clientConfig") or {}
        timeout = hook.get("timeoutSeconds") or 10
        try:
            url, server_name, shown = self._target(config)
        except _Unreachable as exc:
            raise WebhookError(f'failed to call webhook: Post "{exc.url}?timeout={timeout}s": {exc.reason}') from None
        shown = f"{shown}?timeout={timeout}s"
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(f"{url}?timeout={timeout}s", json=body, ssl=self._ssl(config),
                                          server_hostname=server_name,
                                          timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                if response.status != 200:
                    raise WebhookError(f'failed to call webhook: Post "{shown}": the server responded with '
                                       f"status {response.status}")
                raw = bytearray()
                while chunk := await response.content.read(MAX_ANSWER + 1 - len(raw)):
                    raw += chunk
                    if len(raw) > MAX_ANSWER:
                        raise WebhookError(f"received invalid webhook response: larger than {MAX_ANSWER} bytes")
                return json.loads(raw)
        except TimeoutError:
            raise WebhookError(f'failed to call webhook: Post "{shown}": context deadline exceeded') from None
        except (aiohttp.ClientError, OSError) as exc:
            raise WebhookError(f'failed to call webhook: Post "{shown}": {exc}') from None
        except ValueError as exc:
            raise WebhookError(f"received invalid webhook response: {exc}") from None

    def _target(self, config: dict[str, Any]) -> tuple[str, str | None, str]:
        """(the URL to post to, the TLS server name, the URL as upstream would show it)."""
        if config.get("url"):
            return config["url"], None, config["url"]
        service = config.get("service") or {}
        name, namespace = service.get("name") or "", service.get("namespace") or ""
        port, path = service.get("port") or 443, service.get("path") or ""
        host = f"{name}.{namespace}.svc"
        shown = f"https://{host}:{port}{path}"
        address = self._endpoint(namespace, name, port)
        if address is None:
            raise _Unreachable(shown, f'no endpoints available for service "{name}"')
        return f"https://{address}{path}", host, shown

    def _endpoint(self, namespace: str, name: str, port: int) -> str | None:
        """``ip:port`` of the first ready address of the Service's Endpoints, on the Endpoints port
        named as the Service's port ``port`` is."""
        reads, kinds = self._registry.reads, self._registry.kinds
        services, endpoints = kinds.by_plural("", "services"), kinds.by_plural("", "endpoints")
        svc = reads.find(services, namespace, name) if services else None
        eps = reads.find(endpoints, namespace, name) if endpoints else None
        if svc is None or eps is None:
            return None
        spec_port = next((p for p in (svc.get("spec") or {}).get("ports") or [] if p.get("port") == port), None)
        if spec_port is None:
            return None
        wanted = spec_port.get("name") or ""
        for subset in eps.get("subsets") or []:
            # An Endpoints port is the service port's resolved target, matched by name.
            number = next((p.get("port") for p in subset.get("ports") or [] if (p.get("name") or "") == wanted), None)
            for address in subset.get("addresses") or []:
                if address.get("ip") and number:
                    ip = address["ip"]
                    return f"[{ip}]:{number}" if ":" in ip else f"{ip}:{number}"
        return None

    def _ssl(self, config: dict[str, Any]) -> ssl.SSLContext:
        """A context trusting ``caBundle`` (the system's roots without one)."""
        bundle = config.get("caBundle") or ""
        context = self._contexts.get(bundle)
        if context is None:
            context = ssl.create_default_context()
            if bundle:
                try:
                    context.load_verify_locations(cadata=base64.b64decode(bundle).decode())
                except (ValueError, ssl.SSLError) as exc:
                    raise WebhookError(f"could not get REST client: unable to load root certificates: {exc}") from None
            self._contexts[bundle] = context
        return context
