"""Admission webhooks, called (``ServerOptions.admission_webhooks``): a real HTTPS webhook server
in this test judges creates, updates, patches and deletes, and mutates them (before validation,
reinvoked when needed, server-side apply kept); denials, failed calls, timeouts and bad answers
reach the client as upstream words them, and nothing a webhook refused is stored."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from fakeapi.auth.tls import CertificateAuthority, server_context
from fakeapi.cluster import FakeCluster
from fakeapi.config import ServerOptions

CONFIGS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@dataclass
class WebhookServer:
    """An HTTPS webhook whose answer depends on the path; it keeps the reviews it got."""

    ca_bundle: str
    port: int = 0
    reviews: list[dict[str, Any]] = field(default_factory=list)
    meddle: Callable[[], Awaitable[None]] | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"


SERVER = web.AppKey("server", WebhookServer)


async def _answer(request: web.Request) -> web.Response:
    server = request.app[SERVER]
    review = await request.json()
    server.reviews.append({"path": request.path, "query": dict(request.query), **review["request"]})
    uid = review["request"]["uid"]
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    if request.path == "/deny":
        response = {"uid": uid, "allowed": False,
                    "status": {"message": "no", "code": 403, "reason": "Forbidden"}}
    elif request.path == "/deny-bare":
        response = {"uid": uid, "allowed": False}
    elif request.path == "/warn":
        response["warnings"] = ["careful"]
    elif request.path == "/wrong-uid":
        response["uid"] = "someone-else"
    elif request.path == "/slow":
        await asyncio.sleep(2)  # past the webhook's 1 s timeout
    elif request.path == "/inject":  # a label on the object, as a sidecar injector adds its mark
        labels = ((review["request"]["object"] or {"metadata": {}})["metadata"].get("labels") or {})
        ops = [{"op": "add", "path": "/metadata/labels/injected", "value": "yes"}] if labels else \
            [{"op": "add", "path": "/metadata/labels", "value": {"injected": "yes"}}]
        response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
    elif request.path == "/ports":  # fills in what validation requires
        ops = [{"op": "add", "path": "/spec/ports", "value": [{"port": 80}]}]
        response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
    elif request.path == "/break":  # a label value validation refuses
        ops = [{"op": "add", "path": "/metadata/labels", "value": {"bad": "not a label value!"}}]
        response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
    elif request.path == "/replicas-two":  # a Scale's replicas capped
        ops = [{"op": "replace", "path": "/spec/replicas", "value": 2}]
        response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
    elif request.path == "/untyped":
        response["patch"] = base64.b64encode(b"[]").decode()
    elif request.path == "/huge":
        response["warnings"] = ["x" * (4 << 20)]  # past fakeapi's 3 MiB bound on an answer
    elif request.path == "/meddle" and server.meddle is not None:
        await server.meddle()  # another client writes the object while the webhook judges it
    return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                              "response": response})


@pytest.fixture
async def webhook() -> AsyncIterator[WebhookServer]:
    ca = CertificateAuthority()
    serving = ca.issue_server(("127.0.0.1", "judge.default.svc"))
    server = WebhookServer(base64.b64encode(ca.cert_pem).decode())
    app = web.Application()
    app[SERVER] = server
    app.router.add_post("/{tail:.*}", _answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(ca, serving))
    await site.start()
    server.port = runner.addresses[0][1]
    try:
        yield server
    finally:
        await runner.cleanup()


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(control_plane=False, options=ServerOptions(admission_webhooks=True)) as cluster:
        yield cluster


@pytest.fixture
async def http(cluster: FakeCluster) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(cluster.url) as session:
        yield session


async def send(http: aiohttp.ClientSession, method: str, path: str, body: Any = None,
               content_type: str = "application/json") -> tuple[int, Any, str]:
    async with http.request(method, path, data=None if body is None else json.dumps(body),
                            headers={"Content-Type": content_type}) as response:
        return response.status, await response.json(), response.headers.get("Warning", "")


def configuration(name: str, hooks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name}, "webhooks": hooks}


def hook(name: str, client: dict[str, Any], *, operations: tuple[str, ...] = ("*",), **extra: Any) -> dict[str, Any]:
    return {"name": name, "clientConfig": client, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "rules": [{"operations": list(operations), "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}], **extra}


def by_url(server: WebhookServer, path: str) -> dict[str, Any]:
    return {"url": server.url + path, "caBundle": server.ca_bundle}


def configmap(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels},
            "data": {"k": "v"}}


async def install(http: aiohttp.ClientSession, *hooks: dict[str, Any], name: str = "judges") -> None:
    status, body, _ = await send(http, "POST", CONFIGS, configuration(name, list(hooks)))
    assert status == 201, body


async def test_a_denial_refuses_the_create_with_the_webhooks_status(http: aiohttp.ClientSession,
                                                                     webhook: WebhookServer) -> None:
    await install(http, hook("deny.example.com", by_url(webhook, "/deny"),
                             objectSelector={"matchLabels": {"judge": "deny"}}),
                  hook("warn.example.com", by_url(webhook, "/warn")))

    refused, body, _ = await send(http, "POST", CONFIGMAPS, configmap("refused", judge="deny"))
    created, stored, warning = await send(http, "POST", CONFIGMAPS, configmap("kept"))
    missing, _, _ = await send(http, "GET", f"{CONFIGMAPS}/refused")

    assert (refused, body["reason"], body["message"]) == (
        403, "Forbidden", 'admission webhook "deny.example.com" denied the request: no')
    assert missing == 404
    assert created == 201 and warning == '299 - "careful"'
    # The webhook saw the object as it is stored, before it was: uid, timestamps, no resourceVersion.
    seen = next(r for r in webhook.reviews if r["path"] == "/warn" and r["name"] == "kept")
    assert seen["object"]["metadata"]["uid"] == stored["metadata"]["uid"]
    assert "resourceVersion" not in seen["object"]["metadata"]
    assert (seen["operation"], seen["namespace"], seen["oldObject"], seen["dryRun"]) == (
        "CREATE", "default", None, False)
    assert seen["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert seen["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert seen["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert seen["userInfo"]["username"] and seen["query"] == {"timeout": "10s"}
    # The selector kept the denying webhook away from the other object.
    assert [r["name"] for r in webhook.reviews if r["path"] == "/deny"] == ["refused"]


async def test_updates_patches_and_deletes_are_judged_with_the_old_object(http: aiohttp.ClientSession,
                                                                          webhook: WebhookServer) -> None:
    await send(http, "POST", CONFIGMAPS, configmap("settings"))
    await install(http, hook("deny.example.com", by_url(webhook, "/deny-bare"), operations=("UPDATE", "DELETE")))

    _, current, _ = await send(http, "GET", f"{CONFIGMAPS}/settings")
    put, put_body, _ = await send(http, "PUT", f"{CONFIGMAPS}/settings", {**current, "data": {"k": "changed"}})
    patch, _, _ = await send(http, "PATCH", f"{CONFIGMAPS}/settings", {"data": {"k": "patched"}},
                             "application/merge-patch+json")
    deleted, _, _ = await send(http, "DELETE", f"{CONFIGMAPS}/settings")
    _, after, _ = await send(http, "GET", f"{CONFIGMAPS}/settings")

    assert (put, patch, deleted) == (400, 400, 400)
    assert put_body["message"] == 'admission webhook "deny.example.com" denied the request without explanation'
    assert after["data"] == {"k": "v"}
    assert after["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    update, _, delete = webhook.reviews
    assert update["oldObject"]["data"] == {"k": "v"} and update["object"]["data"] == {"k": "changed"}
    assert (delete["operation"], delete["object"], delete["oldObject"]["metadata"]["name"]) == (
        "DELETE", None, "settings")
    assert delete["options"]["kind"] == "DeleteOptions"


async def test_failed_calls_follow_the_failure_policy(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"https://127.0.0.1:{probe.getsockname()[1]}/nobody"
    await install(http, hook("down.example.com", {"url": closed, "caBundle": webhook.ca_bundle},
                             objectSelector={"matchLabels": {"case": "down"}}),
                  hook("down-ignored.example.com", {"url": closed, "caBundle": webhook.ca_bundle},
                       failurePolicy="Ignore", objectSelector={"matchLabels": {"case": "ignored"}}),
                  hook("slow.example.com", by_url(webhook, "/slow"), timeoutSeconds=1,
                       objectSelector={"matchLabels": {"case": "slow"}}),
                  hook("liar.example.com", by_url(webhook, "/wrong-uid"),
                       objectSelector={"matchLabels": {"case": "liar"}}),
                  hook("huge.example.com", by_url(webhook, "/huge"),
                       objectSelector={"matchLabels": {"case": "huge"}}))

    down, down_body, _ = await send(http, "POST", CONFIGMAPS, configmap("a", case="down"))
    ignored, _, _ = await send(http, "POST", CONFIGMAPS, configmap("b", case="ignored"))
    slow, slow_body, _ = await send(http, "POST", CONFIGMAPS, configmap("c", case="slow"))
    liar, liar_body, _ = await send(http, "POST", CONFIGMAPS, configmap("d", case="liar"))
    huge, huge_body, _ = await send(http, "POST", CONFIGMAPS, configmap("e", case="huge"))

    assert (down, down_body["reason"]) == (500, "InternalError")
    assert down_body["message"].startswith(
        f'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: '
        f'Post "{closed}?timeout=10s": ')
    assert ignored == 201
    assert slow == 500 and slow_body["message"].endswith(
        f'Post "{webhook.url}/slow?timeout=1s": context deadline exceeded')
    assert liar == 500 and 'expected response.uid="' in liar_body["message"]
    assert huge == 500 and huge_body["message"].endswith("received invalid webhook response: larger than 3145728 bytes")


async def test_a_service_reference_reaches_the_webhook_through_its_endpoints(
        http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    # The serving certificate names judge.default.svc: the TLS server name is the Service's.
    await send(http, "POST", "/api/v1/namespaces/default/services", {
        "metadata": {"name": "judge"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}})
    await send(http, "POST", "/api/v1/namespaces/default/endpoints", {
        "metadata": {"name": "judge"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": webhook.port}]}]})
    await install(http, hook("svc.example.com", {"service": {"namespace": "default", "name": "judge",
                                                             "path": "/deny"}, "caBundle": webhook.ca_bundle}))
    nowhere = hook("nowhere.example.com", {"service": {"namespace": "default", "name": "missing"}},
                   objectSelector={"matchLabels": {"case": "nowhere"}})

    refused, body, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))
    await send(http, "DELETE", f"{CONFIGS}/judges")
    await install(http, nowhere, name="nowhere")
    lost, lost_body, _ = await send(http, "POST", CONFIGMAPS, configmap("y", case="nowhere"))

    assert refused == 403, body["message"]
    assert body["message"] == 'admission webhook "svc.example.com" denied the request: no'
    assert lost == 500 and lost_body["message"].endswith(
        'Post "https://missing.default.svc:443?timeout=10s": no endpoints available for service "missing"')


async def test_dry_run_and_match_conditions(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    await install(http, hook("warn.example.com", by_url(webhook, "/warn"), matchConditions=[
        {"name": "not-skipped",
         "expression": "!has(object.metadata.labels) || !('skip' in object.metadata.labels)"}]))

    dry, _, warning = await send(http, "POST", f"{CONFIGMAPS}?dryRun=All", configmap("dry"))
    stored, _, _ = await send(http, "GET", f"{CONFIGMAPS}/dry")
    skipped, _, quiet = await send(http, "POST", CONFIGMAPS, configmap("skipped", skip="yes"))

    assert (dry, stored, warning) == (201, 404, '299 - "careful"')
    assert [(r["name"], r["dryRun"], r["options"].get("dryRun")) for r in webhook.reviews] == [
        ("dry", True, ["All"])]
    assert skipped == 201 and quiet == ""


async def test_webhooks_are_not_called_unless_enabled(webhook: WebhookServer) -> None:
    async with FakeCluster(control_plane=False) as cluster, aiohttp.ClientSession(cluster.url) as http:
        await install(http, hook("deny.example.com", by_url(webhook, "/deny")))
        created, _, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))
    assert created == 201 and webhook.reviews == []


def meddle_once(webhook: WebhookServer, cluster: FakeCluster, name: str) -> None:
    """The next ``/meddle`` call patches ConfigMap ``name`` from another client while it judges."""
    async def meddle() -> None:
        webhook.meddle = None  # once
        async with aiohttp.ClientSession(cluster.url) as other:
            async with other.patch(f"{CONFIGMAPS}/{name}", json={"data": {"by": "other"}},
                                   headers={"Content-Type": "application/merge-patch+json"}) as response:
                assert response.status == 200

    webhook.meddle = meddle


async def test_the_stored_object_is_the_one_judged_or_none(http: aiohttp.ClientSession, webhook: WebhookServer,
                                                           cluster: FakeCluster) -> None:
    # A generated name and uid are the ones the webhook saw; a write the store moved past while the
    # webhook judged it is refused (409), and the other client's write stands.
    await install(http, hook("warn.example.com", by_url(webhook, "/warn"), operations=("CREATE",)),
                  hook("meddle.example.com", by_url(webhook, "/meddle"), operations=("UPDATE",)))
    status, created, _ = await send(http, "POST", CONFIGMAPS, {"metadata": {"generateName": "gen-"}, "data": {}})
    seen = webhook.reviews[-1]["object"]["metadata"]

    meddle_once(webhook, cluster, created["metadata"]["name"])
    raced, raced_body, _ = await send(http, "PATCH", f"{CONFIGMAPS}/{created['metadata']['name']}",
                                      {"data": {"by": "me"}}, "application/merge-patch+json")
    _, stored, _ = await send(http, "GET", f"{CONFIGMAPS}/{created['metadata']['name']}")

    assert status == 201
    assert (seen["name"], seen["uid"]) == (created["metadata"]["name"], created["metadata"]["uid"])
    assert seen["name"].startswith("gen-")
    assert raced == 409 and raced_body["reason"] == "Conflict"
    assert stored["data"] == {"by": "other"}


def mutating(name: str, hooks: list[dict[str, Any]]) -> dict[str, Any]:
    return {**configuration(name, hooks), "kind": "MutatingWebhookConfiguration"}


async def install_mutating(http: aiohttp.ClientSession, name: str, *hooks: dict[str, Any]) -> None:
    status, body, _ = await send(http, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                                 mutating(name, list(hooks)))
    assert status == 201, body


async def test_a_mutating_webhook_changes_what_is_stored_and_validation_sees(
        http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    # Mutation comes before validation and the validating webhooks, as upstream orders them; the
    # injected label belongs to no manager (the request's managedFields were computed before).
    await install_mutating(http, "inject", hook("inject.example.com", by_url(webhook, "/inject")))
    await install(http, hook("warn.example.com", by_url(webhook, "/warn")))

    created, stored, _ = await send(http, "POST", CONFIGMAPS, configmap("cm", app="web"))
    _, updated, _ = await send(http, "PATCH", f"{CONFIGMAPS}/cm", {"metadata": {"labels": {"injected": None}}},
                               "application/merge-patch+json")

    assert created == 201 and stored["metadata"]["labels"] == {"app": "web", "injected": "yes"}
    fields = stored["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]
    assert fields == {".": {}, "f:app": {}}
    judged = [r for r in webhook.reviews if r["path"] == "/warn"]
    assert judged[0]["object"]["metadata"]["labels"] == {"app": "web", "injected": "yes"}
    assert updated["metadata"]["labels"] == {"app": "web", "injected": "yes"}  # removed, and injected again
    first = next(r for r in webhook.reviews if r["path"] == "/inject")
    assert first["operation"] == "CREATE" and "uid" in first["object"]["metadata"]


async def test_validation_judges_the_mutated_object(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    service_rule = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["services"]}
    await install_mutating(http, "fix", {**hook("ports.example.com", by_url(webhook, "/ports")),
                                         "rules": [service_rule]})
    await install_mutating(http, "spoil", hook("break.example.com", by_url(webhook, "/break")))

    fixed, service, _ = await send(http, "POST", "/api/v1/namespaces/default/services",
                                   {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}})
    spoiled, refusal, _ = await send(http, "POST", CONFIGMAPS, configmap("cm"))
    missing, _, _ = await send(http, "GET", f"{CONFIGMAPS}/cm")

    assert fixed == 201 and service["spec"]["ports"][0]["port"] == 80  # invalid as sent: ports are required
    assert (spoiled, refusal["reason"], missing) == (422, "Invalid", 404)
    assert "metadata.labels: Invalid value" in refusal["message"]


async def test_if_needed_webhooks_run_again_after_a_later_change(http: aiohttp.ClientSession,
                                                                  webhook: WebhookServer) -> None:
    # Configurations in name order: "a-watch" sees the object first, "b-inject" changes it, so
    # "a-watch" (IfNeeded) runs once more; "a-never" (Never) does not.
    await install_mutating(http, "a-watch", {**hook("watch.example.com", by_url(webhook, "/record")),
                                             "reinvocationPolicy": "IfNeeded"},
                           hook("never.example.com", by_url(webhook, "/record-never")))
    await install_mutating(http, "b-inject", hook("inject.example.com", by_url(webhook, "/inject")))

    created, _, _ = await send(http, "POST", CONFIGMAPS, configmap("cm"))

    assert created == 201
    calls = [(r["path"], (r["object"]["metadata"].get("labels") or {}).get("injected")) for r in webhook.reviews]
    assert calls == [("/record", None), ("/record-never", None), ("/inject", None), ("/record", "yes")]


async def test_broken_mutations_fail_the_write(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    await install_mutating(http, "untyped", hook("untyped.example.com", by_url(webhook, "/untyped"),
                                                 objectSelector={"matchLabels": {"case": "untyped"}}))
    await install_mutating(http, "deletes", hook("inject.example.com", by_url(webhook, "/inject"),
                                                 operations=("DELETE",)))
    await send(http, "POST", CONFIGMAPS, configmap("kept"))

    untyped, untyped_body, _ = await send(http, "POST", CONFIGMAPS, configmap("x", case="untyped"))
    deleted, deleted_body, _ = await send(http, "DELETE", f"{CONFIGMAPS}/kept")
    still, _, _ = await send(http, "GET", f"{CONFIGMAPS}/kept")

    assert untyped == 500 and untyped_body["message"].endswith(
        "received invalid webhook response: webhook returned response.patch but not response.patchType")
    assert deleted == 500 and deleted_body["message"] == (
        'Internal error occurred: admission webhook "inject.example.com" attempted to modify the object, which is '
        "not supported for this operation")
    assert still == 200


async def test_server_side_apply_keeps_its_apply_entry_through_a_mutation(
        http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    await install_mutating(http, "inject", hook("inject.example.com", by_url(webhook, "/inject")))

    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"app": "web"}},
            "data": {"k": "v"}}
    applied, stored, _ = await send(http, "PATCH", f"{CONFIGMAPS}/applied?fieldManager=tester", body,
                                    "application/apply-patch+yaml")
    again, restored, _ = await send(http, "PATCH", f"{CONFIGMAPS}/applied?fieldManager=tester",
                                    {**body, "data": {"k": "w"}}, "application/apply-patch+yaml")

    assert (applied, again) == (201, 200)
    assert [(e["manager"], e["operation"]) for e in stored["metadata"]["managedFields"]] == [("tester", "Apply")]
    assert stored["metadata"]["labels"] == {"app": "web", "injected": "yes"}
    assert restored["data"] == {"k": "w"} and restored["metadata"]["labels"]["injected"] == "yes"
    assert [(e["manager"], e["operation"]) for e in restored["metadata"]["managedFields"]] == [("tester", "Apply")]


PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def on(group: str, resource: str, operation: str) -> list[dict[str, Any]]:
    return [{"operations": [operation], "apiGroups": [group], "apiVersions": ["v1"], "resources": [resource]}]


async def pod_and_deployment(http: aiohttp.ClientSession) -> None:
    containers = [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]
    created, _, _ = await send(http, "POST", PODS, {"metadata": {"name": "web"}, "spec": {"containers": containers}})
    assert created == 201
    labels = {"app": "web"}
    created, _, _ = await send(http, "POST", DEPLOYMENTS, {
        "metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                              "template": {"metadata": {"labels": labels},
                                                           "spec": {"containers": containers}}}})
    assert created == 201


async def test_subresources_are_judged_as_their_own_objects(http: aiohttp.ClientSession,
                                                            webhook: WebhookServer) -> None:
    # As upstream: a binding and an eviction are creates of a Binding and an Eviction, a scale an
    # update of a Scale; the rules name the subresource.
    await pod_and_deployment(http)
    await install(http, {**hook("bindings.example.com", by_url(webhook, "/warn")), "rules": on("", "pods/binding",
                                                                                                "CREATE")},
                  {**hook("evictions.example.com", by_url(webhook, "/deny")), "rules": on("", "pods/eviction",
                                                                                           "CREATE")},
                  {**hook("scales.example.com", by_url(webhook, "/deny")), "rules": on("apps", "deployments/scale",
                                                                                        "UPDATE")})

    bound, _, warning = await send(http, "POST", f"{PODS}/web/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"}, "target": {"kind": "Node", "name": "n1"}})
    evicted, refusal, _ = await send(http, "POST", f"{PODS}/web/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}})
    scaled, scale_refusal, _ = await send(http, "PUT", f"{DEPLOYMENTS}/web/scale", {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 3}})
    _, pod, _ = await send(http, "GET", f"{PODS}/web")
    _, deployment, _ = await send(http, "GET", f"{DEPLOYMENTS}/web")

    assert (bound, warning, pod["spec"]["nodeName"]) == (201, '299 - "careful"', "n1")
    assert (evicted, refusal["message"]) == (403, 'admission webhook "evictions.example.com" denied the request: no')
    assert "deletionTimestamp" not in pod["metadata"]
    assert (scaled, scale_refusal["message"]) == (403, 'admission webhook "scales.example.com" denied the request: no')
    assert deployment["spec"]["replicas"] == 1
    seen = {r["subResource"]: r for r in webhook.reviews}
    assert {sub: (r["operation"], r["kind"], r["resource"]["resource"], r["name"], r["namespace"])
            for sub, r in seen.items()} == {
        "binding": ("CREATE", {"group": "", "version": "v1", "kind": "Binding"}, "pods", "web", "default"),
        "eviction": ("CREATE", {"group": "policy", "version": "v1", "kind": "Eviction"}, "pods", "web", "default"),
        "scale": ("UPDATE", {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "deployments", "web",
                  "default")}
    assert seen["binding"]["object"]["target"]["name"] == "n1" and seen["binding"]["oldObject"] is None
    assert (seen["scale"]["oldObject"]["spec"]["replicas"], seen["scale"]["object"]["spec"]["replicas"]) == (1, 3)


async def test_a_mutating_webhook_changes_a_scale(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    await pod_and_deployment(http)
    await install_mutating(http, "cap", {**hook("cap.example.com", by_url(webhook, "/replicas-two")),
                                         "rules": on("apps", "deployments/scale", "UPDATE")})

    scaled, scale, _ = await send(http, "PATCH", f"{DEPLOYMENTS}/web/scale", {"spec": {"replicas": 5}},
                                  "application/merge-patch+json")
    _, deployment, _ = await send(http, "GET", f"{DEPLOYMENTS}/web")

    assert (scaled, scale["spec"]["replicas"], deployment["spec"]["replicas"]) == (200, 2, 2)


async def install_policy(http: aiohttp.ClientSession, name: str, rule: dict[str, Any], expression: str,
                         message: str) -> None:
    """A ValidatingAdmissionPolicy of one validation, and its Deny binding."""
    group = "/apis/admissionregistration.k8s.io/v1"
    for plural, kind, spec in (
            ("validatingadmissionpolicies", "ValidatingAdmissionPolicy",
             {"matchConstraints": {"resourceRules": [rule]},
              "validations": [{"expression": expression, "message": message}]}),
            ("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding",
             {"policyName": name, "validationActions": ["Deny"]})):
        status, body, _ = await send(http, "POST", f"{group}/{plural}", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "spec": spec})
        assert status == 201, body


async def keep_pinned(http: aiohttp.ClientSession) -> None:
    """A policy refusing deletes of ConfigMaps labelled ``pinned``."""
    await install_policy(http, "keep", on("", "configmaps", "DELETE")[0],
                         "!has(oldObject.metadata.labels) || !('pinned' in oldObject.metadata.labels)",
                         "pinned configmaps stay")


async def test_a_delete_is_judged_after_its_own_checks_and_the_policies(http: aiohttp.ClientSession,
                                                                        webhook: WebhookServer) -> None:
    # Upstream's order: the delete's preconditions and options first, then the policies, then the
    # validating webhooks; a delete refused before them never reaches the webhook.
    await keep_pinned(http)
    await send(http, "POST", CONFIGMAPS, configmap("pinned", pinned="yes"))
    await send(http, "POST", CONFIGMAPS, configmap("free"))
    await install(http, hook("warn.example.com", by_url(webhook, "/warn"), operations=("DELETE",)))

    stale, stale_body, _ = await send(http, "DELETE", f"{CONFIGMAPS}/free",
                                      {"preconditions": {"uid": "not-the-uid"}})
    bad_policy, bad_body, _ = await send(http, "DELETE", f"{CONFIGMAPS}/free?propagationPolicy=Sometimes")
    pinned, pinned_body, _ = await send(http, "DELETE", f"{CONFIGMAPS}/pinned")
    assert [r["name"] for r in webhook.reviews] == []

    freed, _, warning = await send(http, "DELETE", f"{CONFIGMAPS}/free")
    left, _, _ = await send(http, "GET", f"{CONFIGMAPS}/pinned")

    assert (stale, stale_body["reason"]) == (409, "Conflict")
    assert "Precondition failed: UID in precondition: not-the-uid" in stale_body["message"]
    assert (bad_policy, bad_body["reason"]) == (422, "Invalid")
    assert (pinned, pinned_body["reason"], left) == (422, "Invalid", 200)
    assert "pinned configmaps stay" in pinned_body["message"]
    assert (freed, warning) == (200, '299 - "careful"')
    assert [(r["operation"], r["name"], r["oldObject"]["metadata"]["name"]) for r in webhook.reviews] == [
        ("DELETE", "free", "free")]


async def test_a_delete_is_judged_again_when_its_object_changed_meanwhile(
        http: aiohttp.ClientSession, webhook: WebhookServer, cluster: FakeCluster) -> None:
    # As upstream's guaranteed update retries: the webhook judges the object that is deleted.
    await send(http, "POST", CONFIGMAPS, configmap("moving"))
    await install(http, hook("meddle.example.com", by_url(webhook, "/meddle"), operations=("DELETE",)))

    meddle_once(webhook, cluster, "moving")
    deleted, _, _ = await send(http, "DELETE", f"{CONFIGMAPS}/moving")
    missing, _, _ = await send(http, "GET", f"{CONFIGMAPS}/moving")

    assert (deleted, missing) == (200, 404)
    assert [r["oldObject"]["data"] for r in webhook.reviews] == [{"k": "v"}, {"k": "v", "by": "other"}]


async def test_a_collection_delete_judges_every_object(http: aiohttp.ClientSession, webhook: WebhookServer) -> None:
    # Each object is a DELETE of its own for the webhooks and the policies (who asked included); a
    # refusal answers the request and keeps its object, and the others go all the same.
    await keep_pinned(http)
    for name, labels in (("a", {}), ("b", {"judge": "deny"}), ("c", {}), ("d", {"pinned": "yes"})):
        await send(http, "POST", CONFIGMAPS, configmap(name, **labels))
    await install(http, hook("deny.example.com", by_url(webhook, "/deny"), operations=("DELETE",),
                             objectSelector={"matchLabels": {"judge": "deny"}}),
                  hook("warn.example.com", by_url(webhook, "/warn"), operations=("DELETE",)))

    refused, body, _ = await send(http, "DELETE", CONFIGMAPS)
    _, left, _ = await send(http, "GET", CONFIGMAPS)
    allowed, _, warning = await send(http, "DELETE", f"{CONFIGMAPS}?labelSelector=judge!%3Ddeny,pinned!%3Dyes")

    assert (refused, body["message"]) == (403, 'admission webhook "deny.example.com" denied the request: no')
    assert sorted(item["metadata"]["name"] for item in left["items"]) == ["b", "d"]
    assert (allowed, warning) == (200, "")
    judged = {(r["path"], r["name"]) for r in webhook.reviews}
    # The policy refused d before the webhooks; b reached both.
    assert judged == {("/warn", "a"), ("/deny", "b"), ("/warn", "b"), ("/warn", "c")}
    assert all(r["operation"] == "DELETE" and r["oldObject"]["metadata"]["name"] == r["name"]
               and r["userInfo"]["username"] for r in webhook.reviews)


async def test_subresources_are_judged_by_the_policies_before_the_webhooks(http: aiohttp.ClientSession,
                                                                           webhook: WebhookServer) -> None:
    # Upstream's order on a subresource too: a policy's refusal spares the webhook the call; a
    # Scale is judged as the parent's scale would become (its status from the parent), a
    # TokenRequest as what was posted.
    await pod_and_deployment(http)
    await send(http, "POST", "/api/v1/namespaces/default/serviceaccounts",
               {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    await install_policy(http, "no-evictions", on("", "pods/eviction", "CREATE")[0], "false", "evictions are off")
    await install_policy(http, "small", on("apps", "deployments/scale", "UPDATE")[0],
                         "object.spec.replicas <= 5 && object.status.selector == oldObject.status.selector",
                         "at most 5")
    await install_policy(http, "audiences", on("", "serviceaccounts/token", "CREATE")[0],
                         "object.spec.audiences.all(a, a != 'forbidden')", "no such audience")
    await install(http, *({**hook(f"{sub.split('/')[1]}.example.com", by_url(webhook, "/warn")),
                           "rules": on(group, sub, operation)}
                          for group, sub, operation in (("", "pods/eviction", "CREATE"),
                                                        ("apps", "deployments/scale", "UPDATE"),
                                                        ("", "serviceaccounts/token", "CREATE"))))
    tokens = "/api/v1/namespaces/default/serviceaccounts/robot/token"

    evicted, eviction_refusal, _ = await send(http, "POST", f"{PODS}/web/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}})
    too_big, scale_refusal, _ = await send(http, "PUT", f"{DEPLOYMENTS}/web/scale", {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 7}})
    scaled, _, scale_warning = await send(http, "PUT", f"{DEPLOYMENTS}/web/scale", {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 3}})
    refused_token, token_refusal, _ = await send(http, "POST", tokens, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": ["forbidden"]}})
    issued, _, token_warning = await send(http, "POST", tokens, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": ["api"]}})
    pod_status, _, _ = await send(http, "GET", f"{PODS}/web")
    _, deployment, _ = await send(http, "GET", f"{DEPLOYMENTS}/web")

    assert (evicted, pod_status) == (422, 200) and "evictions are off" in eviction_refusal["message"]
    assert too_big == 422 and "at most 5" in scale_refusal["message"]
    assert refused_token == 422 and "no such audience" in token_refusal["message"]
    assert (scaled, scale_warning, deployment["spec"]["replicas"]) == (200, '299 - "careful"', 3)
    assert (issued, token_warning) == (201, '299 - "careful"')
    assert [(r["subResource"], r["object"]["spec"]) for r in webhook.reviews] == [
        ("scale", {"replicas": 3}), ("token", {"audiences": ["api"]})]
    assert webhook.reviews[0]["object"]["status"] == webhook.reviews[0]["oldObject"]["status"]


async def test_request_options_are_the_ones_the_request_sent(http: aiohttp.ClientSession,
                                                             webhook: WebhookServer) -> None:
    # As upstream's AdmissionReview: CreateOptions and UpdateOptions with the fieldManager and
    # fieldValidation the query set, DeleteOptions with what the delete set; policies read the same.
    await install_policy(http, "foreground", on("", "configmaps", "DELETE")[0],
                         "has(request.options.propagationPolicy) && request.options.propagationPolicy == 'Foreground'",
                         "delete in the foreground")
    await install(http, hook("warn.example.com", by_url(webhook, "/warn")))

    created, _, _ = await send(http, "POST", f"{CONFIGMAPS}?fieldManager=builder&fieldValidation=Strict",
                               configmap("opts"))
    patched, _, _ = await send(http, "PATCH", f"{CONFIGMAPS}/opts?fieldManager=patcher&dryRun=All",
                               {"data": {"k": "w"}}, "application/merge-patch+json")
    refused, refusal, _ = await send(http, "DELETE", f"{CONFIGMAPS}/opts")
    deleted, _, _ = await send(http, "DELETE", f"{CONFIGMAPS}/opts",
                               {"propagationPolicy": "Foreground", "gracePeriodSeconds": 0})

    assert (created, patched, refused, deleted) == (201, 200, 422, 200)
    assert "delete in the foreground" in refusal["message"]
    meta = {"apiVersion": "meta.k8s.io/v1"}
    assert [r["options"] for r in webhook.reviews] == [
        {**meta, "kind": "CreateOptions", "fieldManager": "builder", "fieldValidation": "Strict"},
        {**meta, "kind": "UpdateOptions", "fieldManager": "patcher", "dryRun": ["All"]},
        {**meta, "kind": "DeleteOptions", "propagationPolicy": "Foreground", "gracePeriodSeconds": 0}]
