"""ServiceAccount tokens: signed JWTs shaped like the apiserver's (``pkg/serviceaccount/claims.go``).

``TokenRequest`` (``serviceaccounts/{name}/token``, ``kubectl create token``) gets one from
:meth:`TokenIssuer.issue_token`; bearer authentication and ``TokenReview`` check one with
:meth:`TokenIssuer.verify_token`.  Each API server owns one issuer, whose ES256 key is made when
the issuer is (a P-256 key takes about a millisecond, so a cluster per test stays cheap); tokens
are therefore valid only for the server that issued them, and only while it runs.

Whether the service account (and a bound object) still exist is for the caller to check against
the store: the claims carry their names and uids for that.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from fakeapi.machinery.es256 import ES256Key

# kube-apiserver's --service-account-issuer and default --api-audiences as kind and kubeadm set them.
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = (DEFAULT_ISSUER,)
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


class InvalidToken(Exception):
    """A token that is malformed, not signed by this issuer, expired or for another audience."""


@dataclass(frozen=True)
class BoundObject:
    """The object a token is bound to (``TokenRequest.spec.boundObjectRef``): Pod, Secret or Node."""

    kind: str
    name: str
    uid: str
    api_version: str = "v1"


@dataclass(frozen=True)
class TokenClaims:
    """What a verified token says about its holder."""

    namespace: str
    service_account: str
    service_account_uid: str
    audiences: tuple[str, ...]
    expiration: datetime
    bound_object: BoundObject | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def username(self) -> str:
        """``system:serviceaccount:<namespace>:<name>``, the identity RBAC sees."""
        return service_account_username(self.namespace, self.service_account)

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups the apiserver gives every service account token."""
        return ("system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated")


def service_account_username(namespace: str, name: str) -> str:
    """The user name of a service account (``serviceaccount.MakeUsername``)."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenIssuer:
    """Signs and verifies one API server's service account tokens (ES256 JWTs)."""

    def __init__(self, issuer: str = DEFAULT_ISSUER, audiences: Sequence[str] = DEFAULT_AUDIENCES) -> None:
        self.issuer = issuer
        self.audiences = tuple(audiences)

    # The key is made when first needed: most servers (every test's cluster) never see a token,
    # and most processes never load cryptography (see fakeapi.machinery.es256).
    @cached_property
    def _key(self) -> ES256Key:
        from fakeapi.machinery.es256 import ES256Key
        return ES256Key()

    @cached_property
    def key_id(self) -> str:
        """The apiserver's key id: the unpadded base64url SHA-256 of the DER public key."""
        return _b64(hashlib.sha256(self._key.public_der()).digest())

    def issue_token(self, namespace: str, service_account: str, audiences: Sequence[str],
                    expiration_seconds: int, bound_object: BoundObject | None = None, *,
                    service_account_uid: str = "", now: float | None = None) -> tuple[str, datetime]:
        """A token for ``system:serviceaccount:<namespace>:<service_account>``; returns
        (token, expiration).  Empty ``audiences`` means the issuer's default audiences."""
        issued = int(time.time() if now is None else now)
        expires = issued + int(expiration_seconds)
        private: dict[str, Any] = {"namespace": namespace,
                                   "serviceaccount": {"name": service_account, "uid": service_account_uid}}
        if bound_object is not None:
            private[bound_object.kind.lower()] = {"name": bound_object.name, "uid": bound_object.uid}
        claims = {"aud": list(audiences or self.audiences), "exp": expires, "iat": issued, "iss": self.issuer,
                  "jti": str(uuid.uuid4()), "kubernetes.io": private, "nbf": issued,
                  "sub": service_account_username(namespace, service_account)}
        header = {"alg": "ES256", "kid": self.key_id}
        signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}"
        signature = self._key.sign(signing_input.encode())
        return f"{signing_input}.{_b64(signature)}", datetime.fromtimestamp(expires, UTC)

    def verify_token(self, token: str, audiences: Sequence[str] = (), *, now: float | None = None) -> TokenClaims:
        """The claims of a token this issuer signed; raises :class:`InvalidToken` otherwise.

        ``audiences`` the caller accepts (empty: the issuer's defaults); the token must name one.
        """
        parts = token.split(".")
        if len(parts) != 3:
            raise InvalidToken("not a JWT")
        try:
            header = orjson.loads(_unb64(parts[0]))
            claims = orjson.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
        except (ValueError, orjson.JSONDecodeError) as exc:
            raise InvalidToken("malformed token") from exc
        if not isinstance(header, dict) or header.get("alg") != "ES256" or header.get("kid") != self.key_id:
            raise InvalidToken("token was not signed by this server")
        if not self._key.verify(f"{parts[0]}.{parts[1]}".encode(), signature):
            raise InvalidToken("invalid signature")
        return self._claims(claims, audiences, time.time() if now is None else now)

    def _claims(self, claims: Any, audiences: Sequence[str], now: float) -> TokenClaims:
        private = claims.get("kubernetes.io") if isinstance(claims, dict) else None
        if not isinstance(private, dict) or claims.get("iss") != self.issuer:
            raise InvalidToken("token is not a service account token of this issuer")
        if not isinstance(claims.get("exp"), int) or now >= claims["exp"]:
            raise InvalidToken("token has expired")
        if isinstance(claims.get("nbf"), int) and now < claims["nbf"]:
            raise InvalidToken("token is not valid yet")
        token_audiences = tuple(claims.get("aud") or ())
        if not set(token_audiences) & set(audiences or self.audiences):
            raise InvalidToken("token audiences do not match")
        account = private.get("serviceaccount") or {}
        bound = next(((kind, private[kind]) for kind in ("pod", "secret", "node")
                      if isinstance(private.get(kind), dict)), None)
        return TokenClaims(
            namespace=str(private.get("namespace", "")), service_account=str(account.get("name", "")),
            service_account_uid=str(account.get("uid", "")), audiences=token_audiences,
            expiration=datetime.fromtimestamp(claims["exp"], UTC),
            bound_object=None if bound is None else BoundObject(bound[0].capitalize(), str(bound[1].get("name", "")),
                                                                str(bound[1].get("uid", ""))),
            raw=claims)
