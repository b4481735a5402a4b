"""ValidatingAdmissionPolicy, enforced: a policy and its binding applied with kubectl refuse the
writes they should with upstream's message and code, parameters come from the objects a binding
names, Warn actions reach the client as warnings, failurePolicy decides what an evaluation error
does, and bad policies are refused when created."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from fakeapi.fixtures.plugin import Kubectl
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call, configmap, table, to_yaml

GROUP = "/apis/admissionregistration.k8s.io/v1"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"

MAX_REPLICAS = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  variables:
  - name: limit
    expression: int(params.data.maxReplicas)
  validations:
  - expression: object.spec.replicas <= variables.limit
    messageExpression: "'replicas must be no greater than ' + string(variables.limit)"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-prod
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef: {name: replica-limits, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchLabels: {environment: prod}
"""


def deployment(name: str, replicas: int, **labels: str) -> dict[str, Any]:
    selector = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": selector},
                                  "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}


def policy(name: str, validations: list[dict[str, Any]], *, resources: tuple[str, ...] = ("configmaps",),
           operations: tuple[str, ...] = ("CREATE", "UPDATE"), **spec: Any) -> dict[str, Any]:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": list(operations), "resources": list(resources)}]
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": rules}, "validations": validations, **spec}}


def binding(name: str, policy_name: str, actions: tuple[str, ...] = ("Deny",), **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": policy_name, "validationActions": list(actions), **spec}}


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


@pytest.fixture
async def http(fake_api: FakeCluster) -> Any:
    async with aiohttp.ClientSession(fake_api.url) as session:
        yield session


async def send(http: aiohttp.ClientSession, method: str, path: str, body: Any = None) -> tuple[int, Any, str]:
    """(status, JSON answer, Warning header)."""
    async with http.request(method, path, json=body) as response:
        return response.status, await response.json(), response.headers.get("Warning", "")


async def install(http: aiohttp.ClientSession, *objects: dict[str, Any]) -> None:
    """Create policies and bindings, each of which must be accepted."""
    for obj in objects:
        plural = "validatingadmissionpolicies" if obj["kind"] == "ValidatingAdmissionPolicy" \
            else "validatingadmissionpolicybindings"
        status, body, _ = await send(http, "POST", f"{GROUP}/{plural}", obj)
        assert status == 201, body


async def test_a_policy_applied_with_kubectl_refuses_what_it_should(kubectl: Kubectl) -> None:
    await kubectl.run("create", "namespace", "prod")
    await kubectl.run("label", "namespace", "prod", "environment=prod")
    await kubectl.run("apply", "-f", "-", input=MAX_REPLICAS)
    # No parameter yet, and the binding says Deny: every matched write is refused.
    missing = await kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=3", "-n", "prod",
                                check=False)
    await kubectl.run("create", "configmap", "replica-limits", "--from-literal=maxReplicas=5", "-n", "prod")
    too_many = await kubectl.run("apply", "-n", "prod", "-f", "-", input=to_yaml(deployment("web", 7)), check=False)
    allowed = await kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=3", "-n", "prod")
    scaled = await kubectl.run("scale", "deployment", "web", "--replicas=9", "-n", "prod", check=False)
    elsewhere = await kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=9")  # not prod
    policies = table((await kubectl.run("get", "validatingadmissionpolicies")).stdout)
    bindings = table((await kubectl.run("get", "validatingadmissionpolicybindings")).stdout)

    assert missing.returncode == 1 and (
        'deployments.apps "web" is forbidden: ValidatingAdmissionPolicy \'max-replicas\' with binding '
        "'max-replicas-prod' denied request: failed to configure binding: no params found for policy binding "
        "with `Deny` parameterNotFoundAction") in missing.stderr
    assert too_many.returncode == 1 and (
        'Error from server (Forbidden): error when creating "STDIN": deployments.apps "web" is forbidden: '
        "ValidatingAdmissionPolicy 'max-replicas' with binding "
        "'max-replicas-prod' denied request: replicas must be no greater than 5") in too_many.stderr
    assert allowed.stdout.strip() == "deployment.apps/web created"
    # scale is an update of the deployments/scale subresource, which the rule (deployments) does not name
    assert scaled.returncode == 0
    assert elsewhere.returncode == 0
    assert policies["NAME"] == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert policies["max-replicas"][1:3] == ["1", "v1/ConfigMap"]
    assert bindings["NAME"] == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert bindings["max-replicas-prod"][1:3] == ["max-replicas", "*/replica-limits"]


async def test_the_official_client_creates_policies_and_sees_denials(api_client: client.ApiClient) -> None:
    admission = client.AdmissionregistrationV1Api(api_client)
    core = client.CoreV1Api(api_client)
    await call(admission.create_validating_admission_policy, policy("labelled", [
        {"expression": "has(object.metadata.labels) && 'team' in object.metadata.labels",
         "message": "every ConfigMap needs a team label"}]))
    await call(admission.create_validating_admission_policy_binding, binding("labelled", "labelled"))

    with pytest.raises(ApiException) as refused:
        await call(core.create_namespaced_config_map, "default", configmap("anonymous"))
    created = await call(core.create_namespaced_config_map, "default", configmap("owned", labels={"team": "a"}))
    stored = await call(admission.read_validating_admission_policy, "labelled")

    assert refused.value.status == 422
    assert '"reason":"Invalid"' in refused.value.body.replace(" ", "")
    assert "ValidatingAdmissionPolicy 'labelled' with binding 'labelled' denied request: every ConfigMap needs a " \
           "team label" in refused.value.body
    assert created.metadata.name == "owned"
    assert stored.spec.failure_policy == "Fail"  # defaulted
    assert stored.spec.match_constraints.match_policy == "Equivalent"
    assert stored.spec.match_constraints.resource_rules[0].scope == "*"


async def test_warn_and_audit_actions_let_the_write_through(http: aiohttp.ClientSession) -> None:
    await install(http, policy("small", [
        {"expression": "size(object.data) <= 1", "message": "at most one key"}]))
    await install(http, binding("small", "small", ("Warn", "Audit")))

    status, body, warning = await send(http, "POST", CONFIGMAPS, configmap("big", {"a": "1", "b": "2"}))
    _, _, quiet = await send(http, "POST", CONFIGMAPS, configmap("fine", {"a": "1"}))

    assert status == 201 and body["metadata"]["name"] == "big"
    assert warning == ('299 - "Validation failed for ValidatingAdmissionPolicy \'small\' with binding \'small\': '
                       'at most one key"')
    assert quiet == ""


async def test_failure_policy_decides_what_an_evaluation_error_does(http: aiohttp.ClientSession) -> None:
    reads_a_missing_key = [{"expression": "object.data.required == 'yes'"}]
    no_key = configmap("no-key", {"other": "x"})
    await install(http, policy("strict", reads_a_missing_key))
    await install(http, policy("lenient", reads_a_missing_key, failurePolicy="Ignore", resources=("secrets",)))
    for name in ("strict", "lenient"):
        await install(http, binding(name, name))

    status, body, _ = await send(http, "POST", CONFIGMAPS, no_key)
    ignored, _, _ = await send(http, "POST", "/api/v1/namespaces/default/secrets",
                               {"metadata": {"name": "no-key"}, "data": {}})

    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == ('configmaps "no-key" is forbidden: ValidatingAdmissionPolicy \'strict\' with binding '
                               "'strict' denied request: expression 'object.data.required == 'yes'' resulted in "
                               "error: no such key: required")
    assert ignored == 201


async def test_params_by_selector_are_each_checked_and_deletes_see_the_old_object(http: aiohttp.ClientSession) -> None:
    # One evaluation per parameter the selector finds; a DELETE has only oldObject.
    await install(http, policy(
        "forbidden-words", [{"expression": "!object.data.exists(k, object.data[k].contains(params.data.word))",
                             "messageExpression": "'the word ' + params.data.word + ' is not allowed'"}],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        matchConditions=[{"name": "not-a-word", "expression": "!has(object.metadata.labels) || "
                                                              "!('word' in object.metadata.labels)"}]))
    await install(http, binding(
        "forbidden-words", "forbidden-words",
        paramRef={"selector": {"matchLabels": {"word": "true"}}, "parameterNotFoundAction": "Allow"}))
    await install(http, policy(
        "keep-protected", [{"expression": "!has(oldObject.metadata.labels) || "
                                          "!('protected' in oldObject.metadata.labels)",
                            "message": "protected"}], operations=("DELETE",)))
    await install(http, binding("keep-protected", "keep-protected"))

    before_words, _, _ = await send(http, "POST", CONFIGMAPS, configmap("early", {"k": "foo"}))
    for word in ("foo", "bar"):
        await send(http, "POST", CONFIGMAPS, configmap(f"word-{word}", {"word": word}, labels={"word": "true"}))
    foo, foo_body, _ = await send(http, "POST", CONFIGMAPS, configmap("one", {"k": "a foo"}))
    bar, bar_body, _ = await send(http, "POST", CONFIGMAPS, configmap("two", {"k": "a bar"}))
    fine, _, _ = await send(http, "POST", CONFIGMAPS, configmap("three", {"k": "baz"}, labels={"protected": "yes"}))
    kept, kept_body, _ = await send(http, "DELETE", f"{CONFIGMAPS}/three")
    gone, _, _ = await send(http, "DELETE", f"{CONFIGMAPS}/early")

    assert before_words == 201 and fine == 201 and gone == 200
    assert (foo, bar) == (422, 422)
    assert foo_body["message"].endswith("denied request: the word foo is not allowed")
    assert bar_body["message"].endswith("denied request: the word bar is not allowed")
    assert kept == 422 and kept_body["message"] == (
        "configmaps \"three\" is forbidden: ValidatingAdmissionPolicy 'keep-protected' with binding "
        "'keep-protected' denied request: protected")


async def test_dry_run_is_refused_alike_and_nothing_is_stored(http: aiohttp.ClientSession) -> None:
    await install(http, policy("never", [{"expression": "false"}]))
    await install(http, binding("never", "never"))

    dry, _, _ = await send(http, "POST", f"{CONFIGMAPS}?dryRun=All", configmap("x"))
    real, _, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))
    _, body, _ = await send(http, "GET", CONFIGMAPS)

    assert (dry, real) == (422, 422)
    assert [c["metadata"]["name"] for c in body["items"] if c["metadata"]["name"] == "x"] == []


async def test_bad_policies_and_bindings_are_refused_with_upstream_messages(http: aiohttp.ClientSession) -> None:
    status, body, _ = await send(http, "POST", f"{GROUP}/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bad"},
        "spec": {"matchConstraints": {"resourceRules": []},
                 "validations": [{"expression": "object.spec.paused"}, {"expression": "1 +"},
                                 {"expression": "true", "reason": "Unauthorized", "message": " "}],
                 "variables": [{"name": "1st", "expression": "true"}]}})
    missing_params, params_body, _ = await send(http, "POST", f"{GROUP}/validatingadmissionpolicies",
                                                policy("no-params", [{"expression": "params.x == 1"}]))
    b_status, b_body, _ = await send(http, "POST", f"{GROUP}/validatingadmissionpolicybindings", binding(
        "bad", "bad", ("Deny", "Warn", "Deny"), paramRef={"name": "a", "selector": {}}))

    assert status == 422
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("spec.matchConstraints.resourceRules", "Required value") in causes
    assert any(f == "spec.validations[0].expression" and m.endswith("must evaluate to bool but got dyn")
               for f, m in causes)
    assert any(f == "spec.validations[1].expression" and "compilation failed" in m for f, m in causes)
    assert any(f == "spec.validations[2].reason" and 'Unsupported value: "Unauthorized"' in m for f, m in causes)
    assert any(f == "spec.validations[2].message" and "message must be non-empty if specified" in m
               for f, m in causes)
    assert any(f == "spec.variables[0].name" and "name is not a valid CEL identifier" in m for f, m in causes)
    # params exists only for a policy with a paramKind, as upstream's compiler declares it
    assert missing_params == 422 and "undeclared reference to 'params" in params_body["message"]
    assert b_status == 422
    b_causes = {c["field"]: c["message"] for c in b_body["details"]["causes"]}
    assert "Duplicate value" in b_causes["spec.validationActions[2]"]
    assert "must not contain both Deny and Warn" in b_causes["spec.validationActions"]
    assert "name and selector are mutually exclusive" in b_causes["spec.paramRef.name"]
    assert "Required value" in b_causes["spec.paramRef.parameterNotFoundAction"]


async def test_policies_never_judge_policies(http: aiohttp.ClientSession) -> None:
    everything = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    locked = policy("lock-all", [{"expression": "false"}])
    locked["spec"]["matchConstraints"]["resourceRules"] = [everything]
    await install(http, locked)
    await install(http, binding("lock-all", "lock-all"))

    refused, _, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))
    # The way out stays open: the policy and its binding are exempt.
    unbound, _, _ = await send(http, "DELETE", f"{GROUP}/validatingadmissionpolicybindings/lock-all")
    allowed, _, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))

    assert (refused, unbound, allowed) == (422, 200, 201)


async def test_kubectl_apply_of_a_manifest_with_both_kinds(kubectl: Kubectl) -> None:
    manifest = to_yaml(policy("ro", [{"expression": "false", "message": "read only"}], operations=("UPDATE",)),
                       binding("ro", "ro"))
    await kubectl.run("create", "configmap", "settings", "--from-literal=a=1")
    await kubectl.run("apply", "-f", "-", input=manifest)
    edit = await kubectl.run("patch", "configmap", "settings", "-p", '{"data":{"a":"2"}}', check=False)
    data = await kubectl.run("get", "configmap", "settings", "-o", "jsonpath={.data.a}")

    assert edit.returncode == 1 and "denied request: read only" in edit.stderr
    assert data.stdout == "1"


async def test_subresource_creates_and_deletes_are_judged_as_upstream_judges_them(http: aiohttp.ClientSession) -> None:
    # An eviction is a create of pods/eviction (the Eviction is the object); the delete it then makes
    # bypasses admission, so a policy on pod deletes does not stop it.  A delete's Warn warning
    # reaches the client.
    await install(http, policy(
        "no-evictions", [{"expression": "object.metadata.name != 'pinned'", "message": "pinned stays"}],
        resources=("pods/eviction",), operations=("CREATE",)))
    await install(http, policy(
        "warn-deletes", [{"expression": "false", "messageExpression": "'deleting ' + oldObject.metadata.name",
                          "message": "deleting a pod"}], resources=("pods",), operations=("DELETE",)))
    await install(http, binding("no-evictions", "no-evictions"))
    await install(http, binding("warn-deletes", "warn-deletes", ("Warn",)))
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    for name in ("pinned", "free", "plain"):
        await send(http, "POST", "/api/v1/namespaces/default/pods", {**pod, "metadata": {"name": name}})

    def eviction(name: str) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}

    refused, refused_body, _ = await send(http, "POST", "/api/v1/namespaces/default/pods/pinned/eviction",
                                          eviction("pinned"))
    evicted, _, evicted_warning = await send(http, "POST", "/api/v1/namespaces/default/pods/free/eviction",
                                             eviction("free"))
    deleted, _, warning = await send(http, "DELETE", "/api/v1/namespaces/default/pods/plain")

    assert refused == 422 and refused_body["message"].endswith("denied request: pinned stays")
    assert evicted == 201 and evicted_warning == ""
    assert deleted == 200
    assert warning == ('299 - "Validation failed for ValidatingAdmissionPolicy \'warn-deletes\' with binding '
                       '\'warn-deletes\': deleting plain"')


async def test_a_message_expression_that_fails_falls_back_to_the_message(http: aiohttp.ClientSession) -> None:
    await install(http, policy("fallback", [
        {"expression": "false", "messageExpression": "string(object.data.missing)", "message": "the plain message",
         "reason": "RequestEntityTooLarge"}]))
    await install(http, binding("fallback", "fallback"))

    status, body, _ = await send(http, "POST", CONFIGMAPS, configmap("x", {"a": "1"}))

    assert (status, body["reason"]) == (413, "RequestEntityTooLarge")
    assert body["message"].endswith("denied request: the plain message")


async def test_a_parameter_kind_nobody_serves_refuses_what_the_policy_matches(http: aiohttp.ClientSession) -> None:
    await install(http, policy("unknown-params", [{"expression": "params != null"}],
                               paramKind={"apiVersion": "example.com/v1", "kind": "Limits"}),
                  binding("unknown-params", "unknown-params",
                          paramRef={"name": "limits", "parameterNotFoundAction": "Allow"}))

    status, body, _ = await send(http, "POST", CONFIGMAPS, configmap("x"))

    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == ('configmaps "x" is forbidden: ValidatingAdmissionPolicy \'unknown-params\' denied '
                               "request: failed to configure policy: failed to find resource referenced by "
                               "paramKind: 'example.com/v1, Kind=Limits'")


async def test_an_eviction_is_judged_as_the_eviction_it_is(http: aiohttp.ClientSession) -> None:
    # request.kind is the Eviction's own (policy/v1), and the requester is known, as upstream.
    await install(http, policy("no-evictions", [{
        "expression": "false",
        "messageExpression": "request.kind.group + '/' + request.kind.version + ' ' + request.kind.kind + ' of ' + "
                             "object.metadata.name + ' by ' + request.userInfo.username"}],
        resources=("pods/eviction",), operations=("CREATE",)))
    await install(http, binding("no-evictions", "no-evictions"))
    pods = "/api/v1/namespaces/default/pods"
    created, _, _ = await send(http, "POST", pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                                                    "spec": {"containers": [{"name": "main", "image": "nginx"}]}})

    evicted, body, _ = await send(http, "POST", f"{pods}/web/eviction",
                                  {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}})
    found, pod, _ = await send(http, "GET", f"{pods}/web")

    assert (created, evicted, found) == (201, 422, 200)
    prefix = ("pods \"web\" is forbidden: ValidatingAdmissionPolicy 'no-evictions' with binding 'no-evictions' "
              "denied request: policy/v1 Eviction of web by ")
    assert body["message"].startswith(prefix) and body["message"] != prefix, body["message"]
    assert "deletionTimestamp" not in pod["metadata"]
