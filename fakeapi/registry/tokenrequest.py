"""``serviceaccounts/{name}/token``: TokenRequest answers a signed JWT for the account (upstream's
``TokenREST``; ``kubectl create token``).  Nothing is stored; the token is signed by the
server's :class:`~fakeapi.machinery.tokens.TokenIssuer`, so the server's authentication and
TokenReview accept it while the account (and a bound object) exists.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import BadRequest, conflict, invalid, invalid_object
from fakeapi.machinery.timestamps import format_rfc3339
from fakeapi.machinery.tokens import BoundObject
from fakeapi.registry.resource import ResourceType, Subresource
from fakeapi.registry.writes import WriteOptions, Writer

GROUP, VERSION = "authentication.k8s.io", "v1"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
# Kinds a token may be bound to, by the plural their objects are stored under.
BINDABLE = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}


def _expiration_errors(seconds: int) -> list[Any]:
    if seconds < MIN_EXPIRATION_SECONDS:
        return [invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")]
    if seconds > MAX_EXPIRATION_SECONDS:
        return [invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds")]
    return []


def _bound_object(writer: Writer, namespace: str, account: str, ref: dict[str, Any]) -> BoundObject:
    """The object a token is bound to, checked as upstream does: a Pod, Secret or Node that exists
    (404 otherwise), a pod of this account, the uid if one is given."""
    api_version, kind, name = ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", "")
    group, _, version = api_version.rpartition("/")
    plural = BINDABLE.get(kind) if group == "" else None
    target = writer.kinds.by_plural("", plural) if plural else None
    if target is None:
        raise BadRequest(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    obj = writer.reads.get(target, namespace, name)
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName") != account:
        raise BadRequest(f'cannot bind token for serviceaccount "{account}" to pod running with different '
                         "serviceaccount name.")
    uid = obj["metadata"]["uid"]
    if ref.get("uid") and ref["uid"] != uid:
        raise conflict(kind, group, name, f"the UID in the bound object reference ({ref['uid']}) does not match "
                                          "the UID in record. The object might have been deleted and then recreated")
    return BoundObject(kind, name, uid)


def create_token(writer: Writer, rt: ResourceType, namespace: str, name: str, request: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """``POST serviceaccounts/{name}/token``: the request with ``status.token`` filled in."""
    spec = dict(request.get("spec") or {})
    expiration = spec.get("expirationSeconds")
    expiration = DEFAULT_EXPIRATION_SECONDS if expiration is None else expiration
    if errs := _expiration_errors(expiration):
        raise invalid_object("TokenRequest", GROUP, "", errs)
    account = writer.reads.get(rt, namespace, name)
    ref = spec.get("boundObjectRef")
    bound = _bound_object(writer, namespace, name, ref) if ref else None
    audiences = list(spec.get("audiences") or writer.tokens.audiences)
    token, expires = writer.tokens.issue_token(namespace, name, audiences, expiration, bound,
                                               service_account_uid=account["metadata"]["uid"])
    return {"kind": "TokenRequest", "apiVersion": f"{GROUP}/{VERSION}", "metadata": request.get("metadata") or {},
            "spec": {**spec, "audiences": audiences, "expirationSeconds": expiration},
            "status": {"token": token, "expirationTimestamp": format_rfc3339(expires)}}


TOKEN = Subresource("token", ("create",), kind="TokenRequest", handler=create_token, api_version=f"{GROUP}/{VERSION}")
