"""Calling admission webhooks (``ServerOptions.admission_webhooks``).

A write that a MutatingWebhookConfiguration's webhook matches is staged by the registry (defaults,
built-in admission and managedFields, before validation, as upstream orders it) and handed to the
mutating webhooks one after the other, each patching the object as the one before left it
(``reinvocationPolicy: IfNeeded`` runs once more after a later change).  A write that a
ValidatingWebhookConfiguration's webhook matches is then prepared in full (validation, admission
policies: the object as it would be stored), judged by every matching webhook at once, and stored
only if all of them allow it.  The first denial (in configuration name order, then webhook order)
or failed call under ``failurePolicy: Fail`` becomes the answer, with upstream's messages
(:mod:`fakeapi.machinery.admission_review`).

Webhooks are reached at ``clientConfig.url``, or through a ``clientConfig.service``: fakeapi has
no cluster network, so a Service reference is resolved through the Service's Endpoints (the first
ready address, on the target port of the named service port), as kube-apiserver does with
``--enable-aggregator-routing``; the TLS server name stays ``<service>.<namespace>.svc``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from fakeapi.auth.users import UserInfo, api_form
from fakeapi.errors import StatusError
from fakeapi.machinery.admission_match import RequestAttributes
from fakeapi.machinery.admission_review import (
    WebhookError,
    cel_variables,
    denial,
    failure,
    mutated,
    review,
    verdict,
    webhook_applies,
)
from fakeapi.registry.resource import ResourceType
from fakeapi.registry.rest import Registry

log = logging.getLogger("fakeapi")
GROUP = "admissionregistration.k8s.io"
# The fields of a request's Create-, Update- or DeleteOptions as it sent them (None: none).
Options = Mapping[str, Any] | None
MAX_ANSWER = 3 * 1024 * 1024  # fakeapi's bound on a webhook's answer, as on a request's body


class _Unreachable(Exception):
    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url, self.reason = url, reason


@dataclass
class _Request:
    """One write as the webhooks see it: its attributes, the namespace that judges it, and the CEL
    variables of their match conditions (made once for all the webhooks)."""

    attrs: RequestAttributes
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    namespace: dict[str, Any] | None
    variables: dict[str, Any]

    def review(self, uid: str) -> dict[str, Any]:
        return review(uid, self.variables["request"], self.obj, self.old)

    def applies(self, hook: dict[str, Any]) -> bool:
        """Whether ``hook`` gets this request; a match condition's error under Fail is a 500."""
        try:
            return webhook_applies(hook, self.attrs, namespace=self.namespace, obj=self.obj, old=self.old,
                                   activation=self.variables)
        except WebhookError as exc:
            raise failure(hook.get("name") or "", str(exc)) from None


class Webhooks:
    """The admission webhooks of one server, and the HTTP client that calls them."""

    def __init__(self, registry: Registry, *, enabled: bool) -> None:
        self._registry = registry
        self._enabled = enabled
        validating = registry.kinds.by_plural(GROUP, "validatingwebhookconfigurations")
        mutating = registry.kinds.by_plural(GROUP, "mutatingwebhookconfigurations")
        assert validating is not None and mutating is not None, "the admissionregistration kinds are built in"
        self._validating, self._mutating = validating, mutating
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}  # per CA bundle

    def active(self) -> bool:
        """Whether a write must go through webhooks: calling is enabled and a configuration is stored."""
        return self._enabled and (self.validating_active() or self.mutating_active())

    def validating_active(self) -> bool:
        return self._enabled and self._registry.store.count(self._validating.storage_key) > 0

    def mutating_active(self) -> bool:
        return self._enabled and self._registry.store.count(self._mutating.storage_key) > 0

    async def close(self) -> None:
        """Close the client's connections (the application's cleanup)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _request(self, rt: ResourceType, operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None,
                 subresource: str, user: UserInfo | None, dry_run: bool, options: Options) -> _Request:
        attrs = rt.admission_attributes(operation, subresource, obj, old)
        judging = attrs.judging_namespace
        namespace = self._registry.reads.find(self._registry.kinds.namespaces, "", judging) if judging else None
        return _Request(attrs, obj, old, namespace,
                        cel_variables(attrs, obj, old, namespace, api_form(user), dry_run, options))

    def _hooks(self, rt: ResourceType) -> list[dict[str, Any]]:
        """The webhooks of the stored configurations, by configuration name, then in order."""
        return [hook for config in self._registry.reads.items(rt) for hook in config.get("webhooks") or []]

    async def mutate(self, rt: ResourceType, operation: str, obj: dict[str, Any] | None,
                     old: dict[str, Any] | None, subresource: str, user: UserInfo | None,
                     dry_run: bool, options: Options = None) -> tuple[dict[str, Any] | None, list[str]]:
        """Run the mutating webhooks one after the other, each on the object as the one before left
        it; then, once, those with ``reinvocationPolicy: IfNeeded`` that ran before a later one
        changed it.  Returns the object if any webhook changed it (else None) and the warnings;
        raises the Status of a refusal.  ``options``: the request's options as it sent them."""
        hooks = self._hooks(self._mutating)
        current, changed, warnings = obj, False, []
        invoked: list[int] = []
        again: set[int] = set()
        request: _Request | None = None  # made anew only when a webhook changed the object
        for second_round in (False, True):
            for index, hook in enumerate(hooks):
                if second_round and index not in again:
                    continue
                if request is None or request.obj is not current:
                    request = self._request(rt, operation, current, old, subresource, user, dry_run, options)
                if not request.applies(hook):
                    continue
                said, operations = await self._call(hook, request, mutating=True)
                warnings += said
                if operations:
                    result = mutated(hook.get("name") or "", current, operations)
                    if result != current:
                        current, changed = result, True
                        if not second_round:  # the IfNeeded webhooks that saw the object before
                            again.update(i for i in invoked if hooks[i].get("reinvocationPolicy") == "IfNeeded")
                if not second_round:
                    invoked.append(index)
            if not again:
                break
        return (current if changed else None), warnings

    async def validate(self, rt: ResourceType, operation: str, obj: dict[str, Any] | None,
                       old: dict[str, Any] | None, subresource: str, user: UserInfo | None,
                       dry_run: bool, options: Options = None) -> list[str]:
        """Judge one write by every validating webhook at once; returns their warnings, raises the
        Status of the first refusal (in configuration and webhook order)."""
        request = self._request(rt, operation, obj, old, subresource, user, dry_run, options)
        calls = [self._call(hook, request, mutating=False) for hook in self._hooks(self._validating)
                 if request.applies(hook)]
        warnings: list[str] = []
        for result in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result
            warnings += result[0]
        return warnings

    async def _call(self, hook: dict[str, Any], request: _Request, *,
                    mutating: bool) -> tuple[list[str], list[Any] | None]:
        """One webhook's warnings and JSON patch; raises the Status of a refusal, or of a failed
        call under ``failurePolicy: Fail``."""
        name = hook.get("name") or ""
        uid = str(uuid.uuid4())
        try:
            answer = await self._post(hook, request.review(uid))
            allowed, status, warnings, operations = verdict(answer, uid, mutating=mutating)
        except WebhookError as exc:
            if hook.get("failurePolicy") == "Ignore":
                log.warning("Failed calling webhook, failing open %s: %s", name, exc)
                return [], None
            raise failure(name, str(exc)) from None
        if not allowed:
            error: StatusError = denial(name, status)
            raise error
        return warnings, operations

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
