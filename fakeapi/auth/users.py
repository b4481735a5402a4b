"""Who a request is: upstream's ``user.Info`` and the well-known users and groups.

Identities come from client certificates (CN is the user, each O a group), from ServiceAccount
tokens (``system:serviceaccount:<namespace>:<name>``, see :mod:`fakeapi.machinery.tokens`), or
are fixed: the anonymous user of unauthenticated health checks, and — when the server runs
without authentication — the insecure superuser upstream's old insecure port used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakeapi.machinery.tokens import TokenClaims

SYSTEM_MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
# Upstream puts the token's ID (and the pod a token is bound to) in the user's extra, so audit
# logs and node authorization can tell credentials apart.
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"


@dataclass(frozen=True)
class UserInfo:
    """A user name, uid, groups and extra values (``authentication.k8s.io/v1`` UserInfo)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        """The wire form (empty fields omitted, as upstream)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


def api_form(user: UserInfo | None) -> dict[str, Any]:
    """``user``'s wire form; an empty username for a write nobody sent (an in-server one)."""
    return user.to_api() if user is not None else {"username": ""}


ANONYMOUS = UserInfo("system:anonymous", groups=(UNAUTHENTICATED,))
# Who a secure server's kubeconfig is (a client certificate, as kubeadm's admin.conf), and who its
# control plane is (a bearer token): both in system:masters, which RBAC never restricts.
ADMIN = UserInfo("kubernetes-admin", groups=(SYSTEM_MASTERS, AUTHENTICATED))
CONTROL_PLANE = UserInfo("system:fakeapi:control-plane", groups=(SYSTEM_MASTERS, AUTHENTICATED))
# Upstream's insecure port (``InsecureSuperuser``): what a server without authentication
# treats every request as.
INSECURE_SUPERUSER = UserInfo("system:unsecured", groups=(SYSTEM_MASTERS, AUTHENTICATED))


def token_user(claims: TokenClaims) -> UserInfo:
    """The identity a verified ServiceAccount token authenticates as, with upstream's extra
    values: the token's ID and the pod it is bound to."""
    extra = {CREDENTIAL_ID: (f"JTI={claims.raw['jti']}",)} if claims.raw.get("jti") else {}
    bound = claims.bound_object
    if bound is not None and bound.kind == "Pod":
        extra |= {POD_NAME: (bound.name,), POD_UID: (bound.uid,)}
    return UserInfo(claims.username, claims.service_account_uid, claims.groups, extra)


def certificate_user(subject: tuple[tuple[tuple[str, str], ...], ...]) -> UserInfo | None:
    """The identity of a verified client certificate, from :meth:`ssl.SSLSocket.getpeercert`'s
    ``subject``; None without a common name (upstream refuses such certificates)."""
    name, groups = "", []
    for rdn in subject:
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:
        return None
    return UserInfo(name, groups=(*groups, AUTHENTICATED))
