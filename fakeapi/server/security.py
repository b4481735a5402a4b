"""Authentication and authorization of every request (called by the server's middleware).

Open mode (the default) authenticates nobody and allows everything: each request is upstream's
insecure superuser.  Secure mode (``--secure``) authenticates as upstream's union of
authenticators — a verified client certificate first, then a ServiceAccount bearer token — and
answers 401 when neither is there (health checks aside, which anyone may call, as with an
``AuthenticationConfiguration`` whose ``anonymous.conditions`` name ``/healthz``, ``/livez`` and
``/readyz``); then it asks :class:`~fakeapi.registry.access.Access` and answers 403 with
upstream's message when RBAC grants nothing.
"""

from __future__ import annotations

from aiohttp import web

from fakeapi.auth import rbac
from fakeapi.auth.attributes import Attributes, request_attributes
from fakeapi.auth.users import ANONYMOUS, INSECURE_SUPERUSER, UserInfo, certificate_user
from fakeapi.errors import Forbidden, Unauthorized, resource_name
from fakeapi.machinery.tokens import InvalidToken
from fakeapi.registry.access import Access

ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz"})


def _bearer_token(request: web.Request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authenticate(request: web.Request, access: Access) -> UserInfo:
    """Who sent ``request``; raises :class:`Unauthorized` in secure mode when nobody did."""
    if not access.secure:
        return INSECURE_SUPERUSER
    peer = request.transport.get_extra_info("peercert") if request.transport is not None else None
    user = certificate_user(peer.get("subject", ())) if peer else None
    if user is not None:
        return user
    token = _bearer_token(request)
    if token:
        try:
            return access.authenticate_token(token)[0]
        except InvalidToken as exc:
            raise Unauthorized("Unauthorized") from exc
    if request.path in ANONYMOUS_PATHS:
        return ANONYMOUS
    raise Unauthorized("Unauthorized")


def forbidden(attrs: Attributes, reason: str) -> Forbidden:
    """The 403 upstream's authorization filter answers (``responsewriters.Forbidden``)."""
    message = rbac.forbidden_message(attrs) + (f": {reason}" if reason else "")
    if not attrs.resource_request:
        return Forbidden(f"forbidden: {message}", details={})
    what = resource_name(attrs.resource, attrs.api_group)
    subject = f'{what} "{attrs.name}"' if attrs.name else what
    details = {key: value for key, value in (("name", attrs.name), ("group", attrs.api_group),
                                             ("kind", attrs.resource)) if value}
    return Forbidden(f"{subject} is forbidden: {message}", details=details)


def authorize(request: web.Request, access: Access) -> None:
    """Refuse requests from nobody, and what the sender's permissions do not cover (secure mode;
    the server's middleware calls this only there)."""
    user = authenticate(request, access)
    if access.secure:
        attrs = request_attributes(user, request.method, request.path, request.query)
        decision = access.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)
