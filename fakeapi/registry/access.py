"""Who may do what, for one registry: bearer-token authentication against the server's
ServiceAccount token issuer, and authorization decisions.

Two modes, chosen at start:

- open (the default): no authentication; every request is upstream's insecure superuser and
  everything is allowed (``AlwaysAllow``).
- secure: ``system:masters`` may do anything (upstream's privileged-group authorizer); everyone
  else gets what the stored RBAC objects grant (:mod:`fakeapi.auth.rbac`).

The access-review kinds (:mod:`.reviews`) and the server's request middleware both ask here,
so ``kubectl auth can-i`` answers exactly what a request would meet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fakeapi.auth import rbac
from fakeapi.auth.attributes import Attributes
from fakeapi.auth.users import SYSTEM_MASTERS, UserInfo, token_user
from fakeapi.machinery.tokens import InvalidToken, TokenIssuer
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import KindTable, ResourceType

ALLOW_ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
ALLOW_ALL_URLS = {"verbs": ["*"], "nonResourceURLs": ["*"]}


class _StoredPolicy:
    """The RBAC objects of the registry, as :class:`fakeapi.auth.rbac.PolicySource`."""

    def __init__(self, reads: Reader, kinds: KindTable) -> None:
        self._reads = reads

        def kind(plural: str) -> ResourceType:
            rt = kinds.by_plural(rbac.GROUP, plural)
            assert rt is not None, plural
            return rt

        self._roles, self._cluster_roles = kind("roles"), kind("clusterroles")
        self._bindings, self._cluster_bindings = kind("rolebindings"), kind("clusterrolebindings")

    def cluster_role_bindings(self) -> Iterable[dict[str, Any]]:
        return self._reads.items(self._cluster_bindings)

    def role_bindings(self, namespace: str) -> Iterable[dict[str, Any]]:
        return self._reads.items(self._bindings, namespace)

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        return self._reads.find(self._cluster_roles, "", name)

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._reads.find(self._roles, namespace, name)


class Access:
    """Authentication and authorization of one registry, in open or secure mode."""

    def __init__(self, reads: Reader, kinds: KindTable, tokens: TokenIssuer, *, secure: bool,
                 static_tokens: Mapping[str, UserInfo] | None = None) -> None:
        """``static_tokens``: bearer tokens with fixed identities (upstream's ``--token-auth-file``)."""
        self.secure = secure
        self.tokens = tokens
        self._static_tokens = dict(static_tokens or {})
        self._reads = reads
        service_accounts, pods = kinds.by_plural("", "serviceaccounts"), kinds.by_plural("", "pods")
        assert service_accounts is not None and pods is not None
        self._service_accounts, self._pods = service_accounts, pods
        self._policy = _StoredPolicy(reads, kinds)

    # -- authentication ------------------------------------------------------------------------

    def authenticate_token(self, token: str, audiences: Sequence[str] = ()) -> tuple[UserInfo, tuple[str, ...]]:
        """The user a ServiceAccount token stands for and the audiences it is valid for; raises
        :class:`InvalidToken` for a bad token, or one whose ServiceAccount or bound pod is gone."""
        static = self._static_tokens.get(token)
        if static is not None:
            return static, tuple(audiences or self.tokens.audiences)
        claims = self.tokens.verify_token(token, audiences)
        self._check_live(self._service_accounts, claims.namespace, claims.service_account,
                         claims.service_account_uid, "service account")
        bound = claims.bound_object
        if bound is not None and bound.kind == "Pod":
            self._check_live(self._pods, claims.namespace, bound.name, bound.uid, "pod")
        wanted = set(audiences or self.tokens.audiences)
        return token_user(claims), tuple(a for a in claims.audiences if a in wanted)

    def _check_live(self, rt: ResourceType, namespace: str, name: str, uid: str, what: str) -> None:
        # Upstream's token validator: a token outlives neither its ServiceAccount nor its pod.
        obj = self._reads.find(rt, namespace, name)
        if obj is None:
            raise InvalidToken(f'{rt.singular} "{name}" not found')
        if uid and obj["metadata"]["uid"] != uid:
            raise InvalidToken(f"{what} UID ({obj['metadata']['uid']}) does not match claim ({uid})")

    # -- authorization -------------------------------------------------------------------------

    def authorize(self, attrs: Attributes) -> rbac.Decision:
        """Allowed or not, with the authorizer's reason."""
        if not self.secure or SYSTEM_MASTERS in attrs.user.groups:
            return rbac.Decision(True)
        return rbac.authorize(self._policy, attrs)

    def rules_review(self, user: UserInfo, namespace: str) -> dict[str, Any]:
        """``SubjectRulesReviewStatus``: the rules ``user`` holds in ``namespace``."""
        rules: list[dict[str, Any]] = []
        errors: list[str] = []
        if not self.secure or SYSTEM_MASTERS in user.groups:
            rules += [ALLOW_ALL_RESOURCES, ALLOW_ALL_URLS]
        if self.secure:
            granted, errors = rbac.rules_for(self._policy, user, namespace)
            rules += granted
        status: dict[str, Any] = {
            "resourceRules": [_resource_rule(r) for r in rules if r.get("resources")],
            "nonResourceRules": [{"verbs": list(r.get("verbs") or []), "nonResourceURLs": list(r["nonResourceURLs"])}
                                 for r in rules if r.get("nonResourceURLs")],
            "incomplete": False,
        }
        if errors:
            status["evaluationError"] = rbac.aggregate(errors)
        return status


def _resource_rule(rule: dict[str, Any]) -> dict[str, Any]:
    out = {"verbs": list(rule.get("verbs") or []), "apiGroups": list(rule.get("apiGroups") or []),
           "resources": list(rule.get("resources") or [])}
    if rule.get("resourceNames"):
        out["resourceNames"] = list(rule["resourceNames"])
    return out
