"""The pure parts of validating webhooks: what a review carries, how an answer is checked, and
the Status a denial becomes (upstream's ToStatusErr and VerifyAdmissionResponse)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from fakeapi.errors import StatusError
from fakeapi.machinery.admission_match import RequestAttributes
from fakeapi.machinery.admission_review import (
    WebhookError,
    denial,
    mutated,
    request_view,
    review,
    verdict,
    webhook_applies,
)

ATTRS = RequestAttributes("CREATE", "", "v1", "configmaps", "", "cm", "default", "ConfigMap")
RULES = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]


def answer(**response: Any) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u", **response}}


def test_a_denial_keeps_the_webhooks_code_from_400_up() -> None:
    assert (denial("w", {"code": 403, "message": "no"}).code, denial("w", {"code": 200}).code) == (403, 400)
    assert denial("w", {"reason": "Quota"}).message == 'admission webhook "w" denied the request: Quota'
    assert denial("w", {}).message == 'admission webhook "w" denied the request without explanation'


@pytest.mark.parametrize(("body", "message"), [
    ({"apiVersion": "v1", "kind": "Status"}, "expected webhook response of admission.k8s.io/v1, "
                                             "Kind=AdmissionReview, got v1, Kind=Status"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "webhook response was absent"),
    (answer(uid="other"), 'expected response.uid="u", got "other"'),
    (answer(allowed=True, patch="W10="), "validating webhook may not return response.patch"),
])
def test_answers_upstream_refuses(body: dict[str, Any], message: str) -> None:
    with pytest.raises(WebhookError, match=message):
        verdict(body, "u")


def test_an_answer_gives_allowed_status_and_warnings() -> None:
    assert verdict(answer(allowed=True, warnings=["w"]), "u") == (True, {}, ["w"], None)
    assert verdict(answer(allowed=False, status={"message": "m"}), "u") == (False, {"message": "m"}, [], None)


def test_a_mutating_answer_brings_its_patch_and_upstream_checks_it() -> None:
    ops = [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]
    encoded = base64.b64encode(json.dumps(ops).encode()).decode()
    assert verdict(answer(allowed=True, patch=encoded, patchType="JSONPatch"), "u", mutating=True)[3] == ops
    for response, message in ((dict(patch=encoded), "returned response.patch but not response.patchType"),
                              (dict(patchType="JSONPatch"), "returned response.patchType but not response.patch"),
                              (dict(patch=encoded, patchType="MergePatch"),
                               'invalid response.patchType of "MergePatch"'),
                              (dict(patch="%%%", patchType="JSONPatch"), "received undecodable patch")):
        with pytest.raises(WebhookError, match=message):
            verdict(answer(allowed=True, **response), "u", mutating=True)
    assert mutated("m", {"metadata": {}}, ops) == {"metadata": {"labels": {"a": "b"}}}
    with pytest.raises(StatusError, match="attempted to modify the object, which is not supported"):
        mutated("m", None, ops)
    with pytest.raises(StatusError, match="Internal error occurred"):
        mutated("m", {"metadata": {}}, [{"op": "remove", "path": "/nothing"}])


def test_the_review_names_the_request() -> None:
    view = request_view(ATTRS, {"username": "alice"}, True)
    sent = review("u", view, {"data": {}}, None)["request"]
    assert (sent["uid"], sent["name"], sent["namespace"], sent["operation"], sent["dryRun"]) == (
        "u", "cm", "default", "CREATE", True)
    assert sent["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert sent["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert sent["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}
    assert "subResource" not in sent and sent["userInfo"] == {"username": "alice"}
    # CEL reads every field, "" when empty, as upstream's typed request declares them.
    assert view["subResource"] == view["requestSubResource"] == ""


def test_a_subresource_with_its_own_kind_names_it() -> None:
    eviction = RequestAttributes.of("CREATE", "", "v1", "pods", "Eviction", namespaced=True, subresource="eviction",
                                    obj={"metadata": {"name": "web", "namespace": "default"}}, old=None,
                                    kind_api_version="policy/v1")
    scale = RequestAttributes.of("UPDATE", "apps", "v1", "deployments", "Scale", namespaced=True,
                                 subresource="scale", obj=None, old={"metadata": {"name": "web"}},
                                 kind_api_version="autoscaling/v1")
    views = [request_view(attrs, {}, False) for attrs in (eviction, scale)]
    assert [(v["kind"], v["resource"], v["subResource"]) for v in views] == [
        ({"group": "policy", "version": "v1", "kind": "Eviction"}, {"group": "", "version": "v1", "resource": "pods"},
         "eviction"),
        ({"group": "autoscaling", "version": "v1", "kind": "Scale"},
         {"group": "apps", "version": "v1", "resource": "deployments"}, "scale")]
    assert views[0]["requestKind"] == views[0]["kind"] and (eviction.name, eviction.namespace) == ("web", "default")


def test_match_conditions_and_failure_policy() -> None:
    activation = {"object": {"metadata": {}}, "oldObject": None, "request": {}, "namespaceObject": None}
    hook = {"rules": RULES, "matchConditions": [{"name": "c", "expression": "object.metadata.labels.x == 'y'"}]}
    with pytest.raises(WebhookError, match="failed to evaluate match condition"):
        webhook_applies(hook, ATTRS, namespace=None, obj=activation["object"], old=None, activation=activation)
    assert not webhook_applies({**hook, "failurePolicy": "Ignore"}, ATTRS, namespace=None, obj=activation["object"],
                               old=None, activation=activation)
    falsy = {"rules": RULES, "matchConditions": [{"name": "c", "expression": "false"}]}
    assert not webhook_applies(falsy, ATTRS, namespace=None, obj=None, old=None, activation=activation)
    exempt = RequestAttributes("CREATE", "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                               "", "x", "", "ValidatingWebhookConfiguration")
    everything = {"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}
    assert not webhook_applies(everything, exempt, namespace=None, obj=None, old=None, activation=activation)
