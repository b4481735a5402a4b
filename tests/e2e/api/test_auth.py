"""Authentication and authorization as clients see them, in both modes.

Open mode (the default): nobody is authenticated and everything is allowed; ``auth whoami``
says so truthfully (upstream's insecure superuser).  Secure mode: TLS with the generated CA,
the kubeconfig's client certificate (``kubernetes-admin``, ``system:masters``), ServiceAccount
tokens, RBAC from the stored objects, 401/403 Status errors as upstream.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import aiohttp
import pytest
import yaml
from fakeapi.fixtures.plugin import Kubectl, wait_for
from kubernetes import client, config

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call, pod, table, to_yaml

SECURE = pytest.mark.fakeapi(secure=True)
SA_USER = "system:serviceaccount:default:robot"
FORBIDDEN_LIST_PODS = (f'pods is forbidden: User "{SA_USER}" cannot list resource "pods" in API group "" in the '
                       f'namespace "default"')


def ready_node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _kubeconfig(cluster: FakeCluster) -> dict[str, Any]:
    return yaml.safe_load(cluster.kubeconfig_path.read_text())


def ca_context(cluster: FakeCluster) -> ssl.SSLContext:
    """Trust the cluster's CA, as a client given only the kubeconfig's cluster entry would."""
    ca = base64.b64decode(_kubeconfig(cluster)["clusters"][0]["cluster"]["certificate-authority-data"])
    return ssl.create_default_context(cadata=ca.decode())


def token_kubeconfig(cluster: FakeCluster, token: str, path: Path) -> Path:
    """The cluster's kubeconfig with its user replaced by a bearer token."""
    doc = _kubeconfig(cluster)
    doc["users"][0]["user"] = {"token": token}
    path.write_text(yaml.safe_dump(doc))
    return path


async def get_status(cluster: FakeCluster, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, \
            session.get(cluster.url + path, headers=headers or {}, ssl=ca_context(cluster)) as resp:
        return resp.status, await resp.json(content_type=None)


# -- open mode --------------------------------------------------------------------------------------


async def test_open_mode_whoami_and_can_i_tell_the_truth(kubectl: Kubectl) -> None:
    whoami = table((await kubectl.run("auth", "whoami")).stdout)
    assert whoami["Username"] == ["Username", "system:unsecured"]
    assert whoami["Groups"] == ["Groups", "[system:masters system:authenticated]"]
    assert (await kubectl.run("auth", "can-i", "delete", "nodes")).stdout.strip() == "yes"
    listed = table((await kubectl.run("auth", "can-i", "--list", "-n", "default")).stdout)
    assert listed["*.*"] == ["*.*", "[]", "[]", "[*]"]


async def test_open_mode_reviews_through_the_official_client(api_client: client.ApiClient) -> None:
    authz = client.AuthorizationV1Api(api_client)
    review = await call(authz.create_subject_access_review, {
        "spec": {"user": "anyone", "resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert review.status.allowed is True
    tokens = await call(client.AuthenticationV1Api(api_client).create_token_review, {"spec": {"token": "nonsense"}})
    assert tokens.status.authenticated is None and "invalid bearer token" in tokens.status.error


async def test_review_kinds_are_create_only(fake_api: FakeCluster) -> None:
    async with aiohttp.ClientSession(base_url=fake_api.url) as session:
        async with session.get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") as resp:
            assert resp.status == 405
        async with session.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                json={"spec": {}}) as resp:
            body = await resp.json()
    assert resp.status == 422
    assert body["message"] == ('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                               "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must "
                               "be specified")


async def test_rbac_objects_validate_and_print_as_upstream(kubectl: Kubectl) -> None:
    await kubectl.run("create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    await kubectl.run("create", "rolebinding", "read-pods", "--role=pod-reader", "--serviceaccount=default:robot",
                      "--user=alice", "--group=devs")
    rows = table((await kubectl.run("get", "rolebindings", "-o", "wide")).stdout)
    assert rows["read-pods"][1] == "Role/pod-reader"
    assert rows["read-pods"][3:] == ["alice", "devs", "default/robot"]
    assert table((await kubectl.run("get", "roles")).stdout)["NAME"] == ["NAME", "CREATED AT"]
    bad = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "bad"},
           "rules": [{"verbs": [], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}]}
    result = await kubectl.run("apply", "-f", "-", input=to_yaml(bad), check=False)
    assert result.returncode == 1
    assert result.stderr.startswith('The ClusterRole "bad" is invalid: \n'
                                    "* rules[0].verbs: Required value: verbs must contain at least one value\n"
                                    "* rules[0].nonResourceURLs: Invalid value: ")
    assert result.stderr.endswith(": rules cannot apply to both regular resources and non-resource URLs\n")
    changed = await kubectl.run("patch", "rolebinding", "read-pods", "--type=merge",
                                "-p", '{"roleRef":{"name":"other"}}', check=False)
    assert "cannot change roleRef" in changed.stderr


@pytest.mark.fakeapi(control_plane=True)
async def test_aggregated_cluster_roles_follow_labelled_roles(fake_cluster: FakeCluster,
                                                              kubectl_for: Callable[[FakeCluster], Kubectl]) -> None:
    kubectl = kubectl_for(fake_cluster)
    aggregated = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "widgets"},
                  "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/widgets": "true"}}]}}
    part = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "widget-reader", "labels": {"example.com/widgets": "true"}},
            "rules": [{"verbs": ["get"], "apiGroups": ["example.com"], "resources": ["widgets"]}]}
    await kubectl.run("apply", "-f", "-", input=to_yaml(aggregated, part))
    rbac = client.RbacAuthorizationV1Api(config.new_client_from_config(str(fake_cluster.kubeconfig_path)))

    async def aggregated_rules() -> list[Any] | None:
        role = await call(rbac.read_cluster_role, "widgets")
        return role.rules or None

    rules = await wait_for(aggregated_rules, timeout=10, message="the aggregated rules")
    assert [(r.verbs, r.api_groups, r.resources) for r in rules] == [(["get"], ["example.com"], ["widgets"])]


# -- secure mode ------------------------------------------------------------------------------------


@SECURE
async def test_secure_admin_is_the_kubeconfigs_client_certificate(fake_api: FakeCluster, kubectl: Kubectl,
                                                                  core: client.CoreV1Api) -> None:
    assert fake_api.url.startswith("https://")
    whoami = table((await kubectl.run("auth", "whoami")).stdout)
    assert whoami["Username"] == ["Username", "kubernetes-admin"]
    assert whoami["Groups"] == ["Groups", "[system:masters system:authenticated]"]
    assert {ns.metadata.name for ns in (await call(core.list_namespace)).items} >= {"default", "kube-system"}
    roles = table((await kubectl.run("get", "clusterroles")).stdout)
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user"} <= roles.keys()


@SECURE
async def test_secure_refuses_missing_and_bad_credentials_with_401(fake_api: FakeCluster) -> None:
    unauthorized = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert await get_status(fake_api, "/api/v1/namespaces/default/pods") == (401, unauthorized)
    bad = {"Authorization": "Bearer not-a-token"}
    assert await get_status(fake_api, "/api/v1/namespaces/default/pods", bad) == (401, unauthorized)
    assert await get_status(fake_api, "/version") == (401, unauthorized)
    # Health checks stay open to anyone (anonymous, as upstream's AuthenticationConfiguration allows).
    async with aiohttp.ClientSession() as session, session.get(fake_api.url + "/readyz", ssl=ca_context(fake_api)) as r:
        assert (r.status, await r.text()) == (200, "ok")


@pytest.mark.parametrize("control_plane", [True, "process"], ids=["in-process", "child-process"])
async def test_secure_control_plane_schedules_and_runs_pods(control_plane: bool | Literal["process"],
                                                            tmp_path: Path) -> None:
    async with FakeCluster(secure=True, control_plane=control_plane) as cluster:
        kubectl = Kubectl(cluster.kubeconfig_path, tmp_path)
        await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("node-1"), pod("p")))
        await kubectl.run("wait", "--for=jsonpath={.status.phase}=Running", "pod/p", "--timeout=20s")
        assert (await kubectl.run("get", "pod", "p", "-o", "jsonpath={.spec.nodeName}")).stdout == "node-1"


@SECURE
async def test_service_account_gets_exactly_what_its_role_binding_grants(
        fake_api: FakeCluster, kubectl: Kubectl, tmp_path: Path) -> None:
    await kubectl.run("create", "serviceaccount", "robot")
    token = (await kubectl.run("create", "token", "robot")).stdout.strip()
    robot = Kubectl(token_kubeconfig(fake_api, token, tmp_path / "robot.kubeconfig"), tmp_path / "robot")
    whoami = table((await robot.run("auth", "whoami")).stdout)
    assert whoami["Username"] == ["Username", SA_USER]
    assert (await robot.run("auth", "can-i", "list", "pods", check=False)).stdout.strip() == "no"
    denied = await robot.run("get", "pods", check=False)
    assert denied.returncode == 1 and f"Error from server (Forbidden): {FORBIDDEN_LIST_PODS}" in denied.stderr
    sa_client = config.new_client_from_config(str(robot.kubeconfig))
    with pytest.raises(client.ApiException) as raised:
        await call(client.CoreV1Api(sa_client).list_namespaced_pod, "default")
    assert raised.value.status == 403
    assert yaml.safe_load(raised.value.body)["message"] == FORBIDDEN_LIST_PODS

    await kubectl.run("create", "rolebinding", "robot-views", "--clusterrole=view", "--serviceaccount=default:robot")
    assert (await robot.run("auth", "can-i", "list", "pods")).stdout.strip() == "yes"
    assert (await robot.run("get", "pods")).returncode == 0
    assert (await call(client.CoreV1Api(sa_client).list_namespaced_pod, "default")).items == []
    # The binding is namespaced and view is read-only: nothing more.
    assert (await robot.run("auth", "can-i", "list", "pods", "-n", "kube-system", check=False)).stdout.strip() == "no"
    assert (await robot.run("auth", "can-i", "create", "pods", check=False)).stdout.strip() == "no"
    assert (await robot.run("auth", "can-i", "get", "secrets", check=False)).stdout.strip() == "no"
    # A deleted ServiceAccount's tokens stop working.
    await kubectl.run("delete", "serviceaccount", "robot")
    assert (await get_status(fake_api, "/api/v1/namespaces/default/pods",
                             {"Authorization": f"Bearer {token}"}))[0] == 401


@SECURE
async def test_secure_token_review_names_the_service_account(fake_api: FakeCluster, kubectl: Kubectl) -> None:
    await kubectl.run("create", "serviceaccount", "robot")
    token = (await kubectl.run("create", "token", "robot")).stdout.strip()
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    answer = yaml.safe_load((await kubectl.run("create", "-f", "-", "-o", "yaml", input=to_yaml(review))).stdout)
    assert answer["status"]["authenticated"] is True
    user = answer["status"]["user"]
    assert user["username"] == SA_USER
    assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
