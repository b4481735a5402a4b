"""Access over a registry without HTTP: open and secure decisions, rules reviews, and bearer
tokens that stop working with their ServiceAccount or bound pod."""

from __future__ import annotations

import pytest

from fakeapi.auth.attributes import Attributes
from fakeapi.auth.rbac import GROUP
from fakeapi.auth.users import ANONYMOUS, INSECURE_SUPERUSER, UserInfo
from fakeapi.machinery.tokens import BoundObject, InvalidToken, TokenIssuer
from fakeapi.registry.access import ALLOW_ALL_RESOURCES, ALLOW_ALL_URLS, Access
from fakeapi.registry.rest import Registry
from tests.unit.registry.builders import OPTS, kind, new_registry, pod

ROBOT = UserInfo("system:serviceaccount:default:robot", groups=("system:serviceaccounts", "system:authenticated"))


def list_pods(user: UserInfo, namespace: str = "default") -> Attributes:
    return Attributes(user, "list", namespace=namespace, api_version="v1", resource="pods")


def create(registry: Registry, plural: str, obj: dict, namespace: str = "", group: str = "") -> dict:
    return registry.writes.create(kind(registry, plural, group), namespace, obj, OPTS)[0]


def access(registry: Registry, *, secure: bool = True) -> Access:
    return Access(registry.reads, registry.kinds, TokenIssuer(), secure=secure)


def test_open_mode_allows_everyone_everything() -> None:
    open_access = access(new_registry(), secure=False)
    assert open_access.authorize(list_pods(ANONYMOUS)).allowed
    review = open_access.rules_review(INSECURE_SUPERUSER, "default")
    assert review == {"resourceRules": [ALLOW_ALL_RESOURCES], "nonResourceRules": [ALLOW_ALL_URLS],
                      "incomplete": False}


def test_secure_mode_follows_role_bindings() -> None:
    registry = new_registry(namespaces=("default", "other"))
    secure = access(registry)
    assert not secure.authorize(list_pods(ROBOT)).allowed
    assert secure.authorize(list_pods(UserInfo("admin", groups=("system:masters",)))).allowed
    create(registry, "clusterroles", {"metadata": {"name": "pod-reader"},
                                      "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]},
           group=GROUP)
    create(registry, "rolebindings", {"metadata": {"name": "robot-reads"},
                                      "roleRef": {"kind": "ClusterRole", "name": "pod-reader"},
                                      "subjects": [{"kind": "ServiceAccount", "name": "robot"}]},
           namespace="default", group=GROUP)
    assert secure.authorize(list_pods(ROBOT)).allowed
    assert not secure.authorize(list_pods(ROBOT, "other")).allowed
    review = secure.rules_review(ROBOT, "default")
    assert review["resourceRules"] == [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]


def test_tokens_live_as_long_as_their_service_account_and_pod() -> None:
    registry = new_registry()
    secure = access(registry)
    account = create(registry, "serviceaccounts", {"metadata": {"name": "robot"}}, namespace="default")
    bound = create(registry, "pods", pod("worker"), namespace="default")
    token, _ = secure.tokens.issue_token("default", "robot", (), 600,
                                         BoundObject("Pod", "worker", bound["metadata"]["uid"]),
                                         service_account_uid=account["metadata"]["uid"])
    user, audiences = secure.authenticate_token(token)
    assert user.name == ROBOT.name and user.uid == account["metadata"]["uid"]
    assert user.extra["authentication.kubernetes.io/pod-name"] == ("worker",)
    assert audiences == secure.tokens.audiences
    registry.writes.delete(kind(registry, "pods"), "default", "worker", {"gracePeriodSeconds": 0})
    with pytest.raises(InvalidToken, match='pod "worker" not found'):
        secure.authenticate_token(token)


def test_a_recreated_service_account_does_not_honour_old_tokens() -> None:
    registry = new_registry()
    secure = access(registry)
    account = create(registry, "serviceaccounts", {"metadata": {"name": "robot"}}, namespace="default")
    token, _ = secure.tokens.issue_token("default", "robot", (), 600, service_account_uid=account["metadata"]["uid"])
    registry.writes.delete(kind(registry, "serviceaccounts"), "default", "robot", {})
    create(registry, "serviceaccounts", {"metadata": {"name": "robot"}}, namespace="default")
    with pytest.raises(InvalidToken, match=r"service account UID \(.*\) does not match claim"):
        secure.authenticate_token(token)


def test_static_tokens_have_fixed_identities() -> None:
    registry = new_registry()
    control_plane = UserInfo("system:fakeapi:control-plane", groups=("system:masters",))
    secure = Access(registry.reads, registry.kinds, TokenIssuer(), secure=True, static_tokens={"s3cret": control_plane})
    assert secure.authenticate_token("s3cret")[0] == control_plane
    with pytest.raises(InvalidToken):
        secure.authenticate_token("guess")
