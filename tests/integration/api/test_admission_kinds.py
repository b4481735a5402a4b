"""admissionregistration.k8s.io/v1 over HTTP: webhook configurations' defaults, validation messages
and causes as a 1.37 apiserver answers, match conditions compiled, a controller patching caBundle,
the Table columns; the webhooks are stored (and called only when the server is told to:
test_admission_webhooks.py)."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from tests.integration.api.conftest import Api

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
VALIDATING, MUTATING = f"{ADMISSION}/validatingwebhookconfigurations", f"{ADMISSION}/mutatingwebhookconfigurations"
MERGE, STRATEGIC = "application/merge-patch+json", "application/strategic-merge-patch+json"
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()


def webhook(name: str = "validate.trainer.example.com", **fields: Any) -> dict[str, Any]:
    return {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "trainer-system", "name": "trainer-webhook",
                                         "path": "/validate-trainer-example-com-v1-job"}},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["trainer.example.com"],
                       "apiVersions": ["v1"], "resources": ["jobs"]}], **fields}


def configuration(name: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "webhooks": list(hooks) or [webhook()]}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


async def refused(api: Api, hook: dict[str, Any], path: str = VALIDATING) -> list[tuple[str, str]]:
    status, out = await api.request("POST", path, configuration("refused", hook))
    assert status == 422, out
    kind = "MutatingWebhookConfiguration" if path == MUTATING else "ValidatingWebhookConfiguration"
    assert (out["reason"], out["details"]["kind"], out["details"]["group"]) == (
        "Invalid", kind, "admissionregistration.k8s.io")
    return causes(out)


# --- defaults ----------------------------------------------------------------------------------

async def test_a_validating_webhook_gets_upstream_defaults(api: Api) -> None:
    stored = await api.ok("POST", VALIDATING, configuration("trainer-validating"))

    hook = stored["webhooks"][0]
    assert {k: hook[k] for k in ("failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector",
                                 "timeoutSeconds")} == {"failurePolicy": "Fail", "matchPolicy": "Equivalent",
                                                         "namespaceSelector": {}, "objectSelector": {},
                                                         "timeoutSeconds": 10}
    assert hook["rules"][0]["scope"] == "*" and hook["clientConfig"]["service"]["port"] == 443
    assert "reinvocationPolicy" not in hook and stored["metadata"]["generation"] == 1


async def test_a_mutating_webhook_also_defaults_its_reinvocation_policy_and_keeps_what_is_set(api: Api) -> None:
    hook = webhook("mutate.trainer.example.com", failurePolicy="Ignore", timeoutSeconds=5,
                   clientConfig={"url": "https://webhook.example.com:8443/mutate"})
    stored = await api.ok("POST", MUTATING, configuration("trainer-mutating", hook))

    out = stored["webhooks"][0]
    assert (out["reinvocationPolicy"], out["failurePolicy"], out["timeoutSeconds"]) == ("Never", "Ignore", 5)
    assert out["clientConfig"] == {"url": "https://webhook.example.com:8443/mutate"}


# --- validation --------------------------------------------------------------------------------

FORM = "; desired format: https://host[/path]"


@pytest.mark.parametrize(("fields", "expected"), [
    ({"name": "validate"}, [("webhooks[0].name", 'Invalid value: "validate": should be a domain with at least '
                                                 "three segments separated by dots")]),
    ({"name": ""}, [("webhooks[0].name", "Required value")]),
    ({"sideEffects": None}, [("webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun")]),
    ({"sideEffects": "Some"}, [("webhooks[0].sideEffects",
                                'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"')]),
    ({"failurePolicy": "Retry"}, [("webhooks[0].failurePolicy",
                                   'Unsupported value: "Retry": supported values: "Fail", "Ignore"')]),
    ({"matchPolicy": "Loose"}, [("webhooks[0].matchPolicy",
                                 'Unsupported value: "Loose": supported values: "Equivalent", "Exact"')]),
    ({"timeoutSeconds": 31}, [("webhooks[0].timeoutSeconds",
                               "Invalid value: 31: the timeout value must be between 1 and 30 seconds")]),
    ({"admissionReviewVersions": []}, [("webhooks[0].admissionReviewVersions",
                                        "Required value: must specify one of v1, v1beta1")]),
    ({"admissionReviewVersions": ["v2", "v2"]}, [
        ("webhooks[0].admissionReviewVersions[1]", 'Invalid value: "v2": duplicate version'),
        ("webhooks[0].admissionReviewVersions",
         'Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1')]),
    ({"clientConfig": {}}, [("webhooks[0].clientConfig", "Required value: exactly one of url or service is required")]),
    ({"clientConfig": {"url": "http://user:pw@hook.example.com/x?a=1#frag"}}, [
        ("webhooks[0].clientConfig.url", f'Invalid value: "http": \'https\' is the only allowed URL scheme{FORM}'),
        ("webhooks[0].clientConfig.url", 'Invalid value: "user:pw": user information is not permitted in the URL'),
        ("webhooks[0].clientConfig.url", 'Invalid value: "frag": fragments are not permitted in the URL'),
        ("webhooks[0].clientConfig.url", 'Invalid value: "a=1": query parameters are not permitted in the URL')]),
    ({"clientConfig": {"url": "https://hook.example.com:port/"}}, [
        ("webhooks[0].clientConfig.url", 'Required value: url must be a valid URL: parse '
                                         '"https://hook.example.com:port/": invalid port ":port" after host' + FORM)]),
    ({"clientConfig": {"url": "https:///path"}}, [
        ("webhooks[0].clientConfig.url", f'Invalid value: "": host must be provided{FORM}')]),
    ({"clientConfig": {"service": {"namespace": "", "name": "", "port": 0, "path": "/a//B_"}}}, [
        ("webhooks[0].clientConfig.service.name", "Required value: service name is required"),
        ("webhooks[0].clientConfig.service.namespace", "Required value: service namespace is required"),
        ("webhooks[0].clientConfig.service.port",
         "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"),
        ("webhooks[0].clientConfig.service.path", 'Invalid value: "/a//B_": segment[1] may not be empty'),
        ("webhooks[0].clientConfig.service.path",
         'Invalid value: "/a//B_": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case '
         "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
         "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
         "[a-z0-9])?)*')")]),
    ({"rules": [{"operations": ["*", "PATCH"], "apiGroups": ["*", "apps"], "apiVersions": [""],
                 "resources": ["*", "pods", "pods/*", "pods/log"], "scope": "Global"}]}, [
        ("webhooks[0].rules[0].operations",
         'Invalid value: []admissionregistration.OperationType{"*", "PATCH"}: if \'*\' is present, must not '
         "specify other operations"),
        ("webhooks[0].rules[0].operations[1]", 'Unsupported value: "PATCH": supported values: "*", "CONNECT", '
                                               '"CREATE", "DELETE", "UPDATE"'),
        ("webhooks[0].rules[0].apiGroups",
         'Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups'),
        ("webhooks[0].rules[0].apiVersions[0]", "Required value"),
        ("webhooks[0].rules[0].resources[3]", "Invalid value: \"pods/log\": if 'pods/*' is present, must not "
                                              "specify pods/log"),
        ("webhooks[0].rules[0].resources",
         'Invalid value: []string{"*", "pods", "pods/*", "pods/log"}: if \'*\' is present, must not specify '
         "other resources without subresources"),
        ("webhooks[0].rules[0].scope",
         'Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"')]),
    ({"rules": [{}]}, [("webhooks[0].rules[0].operations", "Required value"),
                       ("webhooks[0].rules[0].apiGroups", "Required value"),
                       ("webhooks[0].rules[0].apiVersions", "Required value"),
                       ("webhooks[0].rules[0].resources", "Required value")]),
    ({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "In"}]}}, [
        ("webhooks[0].namespaceSelector.matchExpressions[0].values",
         "Required value: must be specified when `operator` is 'In' or 'NotIn'")]),
])
async def test_invalid_webhooks_are_refused_with_upstream_causes(api: Api, fields: dict[str, Any],
                                                                 expected: list[tuple[str, str]]) -> None:
    assert await refused(api, webhook(**fields)) == expected


async def test_a_mutating_webhook_checks_its_reinvocation_policy(api: Api) -> None:
    assert await refused(api, webhook(reinvocationPolicy="Always"), MUTATING) == [
        ("webhooks[0].reinvocationPolicy", 'Unsupported value: "Always": supported values: "IfNeeded", "Never"')]


async def test_webhook_names_are_unique_within_a_configuration(api: Api) -> None:
    status, out = await api.request("POST", VALIDATING, configuration("twice", webhook(), webhook()))

    assert status == 422
    assert causes(out) == [("webhooks[1].name", 'Duplicate value: "validate.trainer.example.com"')]


# --- match conditions --------------------------------------------------------------------------

async def test_match_conditions_that_compile_are_stored(api: Api) -> None:
    conditions = [
        {"name": "exclude-leases", "expression": '!(request.resource.group == "coordination.k8s.io" && '
                                                 'request.resource.resource == "leases")'},
        {"name": "exclude-kubelet-requests", "expression": '!("system:nodes" in request.userInfo.groups)'},
        {"name": "breakglass", "expression": "!authorizer.group('admissionregistration.k8s.io')"
                                             ".resource('validatingwebhookconfigurations').name('my-webhook')"
                                             ".check('breakglass').allowed()"},
        {"name": "labelled", "expression": "has(object.metadata.labels) && 'app' in object.metadata.labels"},
    ]
    stored = await api.ok("POST", VALIDATING, configuration("conditions", webhook(matchConditions=conditions)))

    assert stored["webhooks"][0]["matchConditions"] == conditions


async def test_match_conditions_are_checked_as_upstream(api: Api) -> None:
    conditions = [{"name": "not-bool", "expression": "1 + 1"},
                  {"name": "params", "expression": "params.enabled"},
                  {"name": "bad name!", "expression": "  "},
                  {"name": "params", "expression": "true"}]

    found = await refused(api, webhook(matchConditions=conditions))

    assert found[0] == ("webhooks[0].matchConditions[0].expression",
                        'Invalid value: "1 + 1": must evaluate to bool but got int')
    field, message = found[1]
    assert field == "webhooks[0].matchConditions[1].expression"
    assert message.startswith('Invalid value: "params.enabled": compilation failed: ERROR: <input>:1:')
    assert "undeclared reference to 'params" in message
    assert found[2:4] == [("webhooks[0].matchConditions[2].expression", "Required value"),
                          ("webhooks[0].matchConditions[2].name",
                           "Invalid value: \"bad name!\": name part must consist of alphanumeric characters, '-', "
                           "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                           "'my.name',  or '123-abc', regex used for validation is "
                           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]
    assert found[4:] == [("webhooks[0].matchConditions[3].name", 'Duplicate value: "params"')]


async def test_kubernetes_library_calls_compile_and_only_they_pass_unchecked(api: Api) -> None:
    library = ["sets.contains(object.spec.tags, ['a'])", "format.dns1123Label().validate('a').hasValue()",
               "lists.range(3).size() == 3", "isImage(object.spec.image)", "url('https://x').getHost() == 'x'"]
    conditions = [{"name": f"lib{i}", "expression": e} for i, e in enumerate(library)]
    await api.ok("POST", VALIDATING, configuration("library", webhook(matchConditions=conditions)))
    # A type error whose source text quotes such a message is still the expression's own error.
    quoting = [{"name": "quoting", "expression": "1 + 'a' == \"undeclared reference to 'url'\""}]
    [(_, message)] = await refused(api, webhook(matchConditions=quoting))
    assert "compilation failed" in message and "no matching overload" in message


async def test_compile_errors_of_a_huge_expression_are_bounded(api: Api) -> None:
    """Each issue echoes the expression's line: an 80 KB expression's message is cut, so the
    answer stays about the size of the request."""
    [(_, message)] = await refused(api, webhook(matchConditions=[
        {"name": "many", "expression": " && ".join(["nope"] * 10_000)}]))
    assert "undeclared reference to 'nope'" in message and message.endswith("...")
    assert len(message) < 100_000  # the echoed value (80 KB) and at most 16 Ki characters of issues


async def test_at_most_64_match_conditions(api: Api) -> None:
    conditions = [{"name": f"c{i}", "expression": "true"} for i in range(65)]

    assert await refused(api, webhook(matchConditions=conditions)) == [
        ("webhooks[0].matchConditions", "Too many: 65: must have at most 64 items")]


# --- updates -----------------------------------------------------------------------------------

async def test_a_controller_patches_the_ca_bundle_into_every_webhook(api: Api) -> None:
    """What cert-manager's cainjector and operators' own cert rotators do: a merge patch of the
    whole list and a strategic merge patch keyed by webhook name."""
    second = webhook("default.trainer.example.com")
    await api.ok("POST", MUTATING, configuration("trainer-mutating", webhook(), second))

    merged = await api.ok("PATCH", f"{MUTATING}/trainer-mutating", {"webhooks": [
        {**webhook(), "clientConfig": {**webhook()["clientConfig"], "caBundle": CA}}, second]},
        content_type=MERGE)
    patched = await api.ok("PATCH", f"{MUTATING}/trainer-mutating", {"webhooks": [
        {"name": "default.trainer.example.com", "clientConfig": {"caBundle": CA}}]}, content_type=STRATEGIC)

    assert merged["webhooks"][0]["clientConfig"]["caBundle"] == CA
    assert [h["clientConfig"]["caBundle"] for h in patched["webhooks"]] == [CA, CA]
    assert patched["webhooks"][1]["clientConfig"]["service"]["name"] == "trainer-webhook"
    assert patched["metadata"]["generation"] == 3


async def test_a_ca_bundle_must_be_base64(api: Api) -> None:
    hook = webhook(clientConfig={"url": "https://hook.example.com", "caBundle": "not base64!"})
    status, out = await api.request("POST", VALIDATING, configuration("bad-ca", hook))

    assert status == 400, out


async def test_an_update_is_validated_and_unchanged_match_conditions_are_kept(api: Api) -> None:
    hook = webhook(matchConditions=[{"name": "always", "expression": "true"}])
    stored = await api.ok("POST", VALIDATING, configuration("updated", hook))
    changed = copy.deepcopy(stored)
    changed["webhooks"][0]["timeoutSeconds"] = 30
    bad = copy.deepcopy(stored)
    bad["webhooks"][0]["sideEffects"] = "Unknown"

    updated = await api.ok("PUT", f"{VALIDATING}/updated", changed)
    status, out = await api.request("PUT", f"{VALIDATING}/updated", {**bad, "metadata": updated["metadata"]})

    assert updated["webhooks"][0]["timeoutSeconds"] == 30 and updated["metadata"]["generation"] == 2
    assert status == 422 and causes(out) == [
        ("webhooks[0].sideEffects", 'Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"')]


async def test_server_side_apply_merges_webhooks_by_name(api: Api) -> None:
    apply = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": "applied"}, "webhooks": [webhook()]}
    await api.ok("PATCH", f"{VALIDATING}/applied?fieldManager=installer", apply,
                 content_type="application/apply-patch+yaml")
    injected = {**apply, "webhooks": [{"name": "validate.trainer.example.com", "clientConfig": {"caBundle": CA}}]}

    out = await api.ok("PATCH", f"{VALIDATING}/applied?fieldManager=cainjector", injected,
                       content_type="application/apply-patch+yaml")

    assert out["webhooks"][0]["clientConfig"]["caBundle"] == CA
    assert out["webhooks"][0]["clientConfig"]["service"]["name"] == "trainer-webhook"
    assert {e["manager"] for e in out["metadata"]["managedFields"]} == {"installer", "cainjector"}


# --- tables and discovery ----------------------------------------------------------------------

async def test_tables_count_the_webhooks(api: Api) -> None:
    await api.ok("POST", VALIDATING, configuration("two", webhook(), webhook("b.trainer.example.com")))

    table = await api.ok("GET", VALIDATING, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})

    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Webhooks", "Age"]
    assert table["columnDefinitions"][1]["type"] == "integer"
    assert [row["cells"][:2] for row in table["rows"]] == [["two", 2]]


async def test_discovery_lists_both_cluster_scoped_kinds(api: Api) -> None:
    resources = (await api.ok("GET", ADMISSION))["resources"]

    found = {r["name"]: (r["kind"], r["namespaced"], r.get("categories")) for r in resources}
    assert found == {
        "validatingwebhookconfigurations": ("ValidatingWebhookConfiguration", False, ["api-extensions"]),
        "mutatingwebhookconfigurations": ("MutatingWebhookConfiguration", False, ["api-extensions"]),
        "validatingadmissionpolicies": ("ValidatingAdmissionPolicy", False, ["api-extensions"]),
        "validatingadmissionpolicies/status": ("ValidatingAdmissionPolicy", False, None),
        "validatingadmissionpolicybindings": ("ValidatingAdmissionPolicyBinding", False, ["api-extensions"]),
    }
