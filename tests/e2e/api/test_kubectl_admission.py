"""kubectl 1.37 with the admissionregistration.k8s.io kinds: an operator's webhook manifest (as
kubebuilder generates it, with cert-manager's CA injection annotation) applies, lists with
upstream's columns, re-applies unchanged and takes a CA bundle patch; an invalid one is refused
with upstream's message.  fakeapi stores the webhooks; by default it does not call them."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from fakeapi.fixtures.plugin import Kubectl

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import table

OPERATOR_WEBHOOKS = """\
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: trainer-mutating-webhook-configuration
  annotations:
    cert-manager.io/inject-ca-from: trainer-system/trainer-serving-cert
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: trainer-webhook-service
      namespace: trainer-system
      path: /mutate-training-example-com-v1-trainjob
  failurePolicy: Fail
  name: mtrainjob.kb.io
  rules:
  - apiGroups:
    - training.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - trainjobs
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: trainer-validating-webhook-configuration
  annotations:
    cert-manager.io/inject-ca-from: trainer-system/trainer-serving-cert
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: trainer-webhook-service
      namespace: trainer-system
      path: /validate-training-example-com-v1-trainjob
  failurePolicy: Fail
  name: vtrainjob.kb.io
  rules:
  - apiGroups:
    - training.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - trainjobs
  sideEffects: None
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: trainer-webhook-service
      namespace: trainer-system
      path: /validate-training-example-com-v1-trainqueue
  failurePolicy: Fail
  matchConditions:
  - name: not-kube-system
    expression: request.namespace != "kube-system"
  name: vtrainqueue.kb.io
  rules:
  - apiGroups:
    - training.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    - DELETE
    resources:
    - trainqueues
  sideEffects: None
"""
VALIDATING = "validatingwebhookconfiguration/trainer-validating-webhook-configuration"


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


async def test_an_operator_webhook_manifest_applies_and_lists_with_upstream_columns(kubectl: Kubectl) -> None:
    applied = await kubectl.run("apply", "-f", "-", input=OPERATOR_WEBHOOKS)
    version = await kubectl.run("get", VALIDATING, "-o", "jsonpath={.metadata.resourceVersion}")
    # As against a real apiserver: the atomic rules differ from the stored ones by the defaulted
    # scope, so kubectl sends them again ("configured") and the server stores no change.
    again = await kubectl.run("apply", "-f", "-", input=OPERATOR_WEBHOOKS)
    unchanged = await kubectl.run("get", VALIDATING, "-o", "jsonpath={.metadata.resourceVersion}")

    validating = table((await kubectl.run("get", "validatingwebhookconfigurations")).stdout)
    mutating = table((await kubectl.run("get", "mutatingwebhookconfigurations")).stdout)

    assert applied.stdout.splitlines() == [
        "mutatingwebhookconfiguration.admissionregistration.k8s.io/trainer-mutating-webhook-configuration created",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/trainer-validating-webhook-configuration "
        "created"]
    assert all(line.endswith(" configured") for line in again.stdout.splitlines())
    assert unchanged.stdout == version.stdout
    assert validating["NAME"] == ["NAME", "WEBHOOKS", "AGE"]
    assert validating["trainer-validating-webhook-configuration"][1] == "2"
    assert mutating["trainer-mutating-webhook-configuration"][1] == "1"


async def test_a_ca_bundle_patched_in_by_name(kubectl: Kubectl) -> None:
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
    await kubectl.run("apply", "-f", "-", input=OPERATOR_WEBHOOKS)

    await kubectl.run("patch", VALIDATING, "--type=strategic",
                      "-p", f'{{"webhooks":[{{"name":"vtrainqueue.kb.io","clientConfig":{{"caBundle":"{ca}"}}}}]}}')
    bundles = await kubectl.run("get", VALIDATING, "-o", "jsonpath={.webhooks[*].clientConfig.caBundle}")
    timeouts = await kubectl.run("get", VALIDATING, "-o", "jsonpath={.webhooks[*].timeoutSeconds}")

    assert bundles.stdout == ca  # only the webhook named
    assert timeouts.stdout == "10 10"


async def test_an_invalid_webhook_is_refused_with_upstreams_message(kubectl: Kubectl) -> None:
    broken = OPERATOR_WEBHOOKS.replace("  sideEffects: None\n---", "  sideEffects: Some\n---")

    result = await kubectl.run("apply", "-f", "-", input=broken, check=False)

    assert result.returncode != 0
    assert result.stderr == ('The MutatingWebhookConfiguration "trainer-mutating-webhook-configuration" is invalid: '
                             'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
                             '"NoneOnDryRun"\n')
