"""certificates.k8s.io/v1 CertificateSigningRequests over HTTP, as a 1.37 apiserver answers: the
requester recorded on create, validation of the request and its fields, what ``/approval`` and
``/status`` may each change, and the certificate a signer writes (fakeapi runs no signer)."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.models.objects import CSR, CSR_PEM
from tests.integration.api.conftest import Api

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
MERGE = "application/merge-patch+json"
SIGNER = "kubernetes.io/kube-apiserver-client"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def csr(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {**CSR["spec"], **spec}}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


async def refused(api: Api, method: str, path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    status, out = await api.request(method, path, body)
    assert status == 422, out
    return causes(out)


def certificate_pem() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "trainer")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def conditions(*types: str, status: str = "True") -> dict[str, Any]:
    return {"status": {"conditions": [{"type": t, "status": status, "reason": f"Test{t}"} for t in types]}}


async def test_create_records_the_requesting_user_and_starts_without_status(api: Api) -> None:
    forged = {**csr("recorded", username="kubernetes-admin", uid="1234", groups=["system:masters"],
                    extra={"scopes": ["all"]}), **conditions("Approved")}

    created = await api.ok("POST", CSRS, forged)

    assert created["spec"] == {**CSR["spec"], "username": "system:unsecured",
                               "groups": ["system:masters", "system:authenticated"]}
    assert created["status"] == {}
    assert "generation" not in created["metadata"]


async def test_invalid_requests_get_upstreams_causes(api: Api) -> None:
    signature_broken = CSR_PEM.replace(b"AiEAxDsMInusk5DT", b"AiEAxDsMInusk5DU")

    assert await refused(api, "POST", CSRS, csr("not-pem", request=b64(b"hi"), usages=[])) == [
        ("spec.request", "Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"),
        ("spec.usages", "Required value")]
    bad_signature = await refused(api, "POST", CSRS, csr("bad-signature", request=b64(signature_broken)))
    [(field, message)] = bad_signature
    assert field == "spec.request" and message.endswith("}: x509: ECDSA verification failure")
    usages = ["client auth", "telepathy", "client auth"]
    assert await refused(api, "POST", CSRS, csr("usages", usages=usages, expirationSeconds=599)) == [
        ("spec.usages[1]", 'Unsupported value: "telepathy": supported values: "any", "cert sign", "client auth", '
                           '"code signing", "content commitment", "crl sign", "data encipherment", "decipher only", '
                           '"digital signature", "email protection", "encipher only", "ipsec end system", '
                           '"ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", '
                           '"netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"'),
        ("spec.usages[2]", 'Duplicate value: "client auth"'),
        ("spec.expirationSeconds", "Invalid value: 599: may not specify a duration less than 600 seconds "
                                   "(10 minutes)")]


@pytest.mark.parametrize(("signer", "cause"), [
    ("", ("spec.signerName", "Required value")),
    ("example.com", ("spec.signerName", "Invalid value: \"example.com\": must be a fully qualified domain and path "
                                        "of the form 'example.com/signer-name'")),
    ("example/signer", ("spec.signerName", 'Invalid value: "example": should be a domain with at least two '
                                           "segments separated by dots")),
    ("Example.com/signer", ("spec.signerName", 'Invalid value: "Example.com": validating label "Example": a '
                                               "lowercase RFC 1123 label must consist of lower case alphanumeric "
                                               "characters or '-', and must start and end with an alphanumeric "
                                               "character (e.g. 'my-name',  or '123-abc', regex used for validation "
                                               "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
    ("kubernetes.io/legacy-unknown", ("spec.signerName", 'Invalid value: "kubernetes.io/legacy-unknown": the legacy '
                                                         "signerName is not allowed via this API version")),
], ids=["empty", "no-path", "one-label-domain", "uppercase", "legacy"])
async def test_signer_name_must_be_a_domain_and_a_path(api: Api, signer: str, cause: tuple[str, str]) -> None:
    assert await refused(api, "POST", CSRS, csr(f"signer-{abs(hash(signer))}", signerName=signer)) == [cause]


async def test_approval_sets_conditions_with_times_and_nothing_else(api: Api) -> None:
    created = await api.ok("POST", CSRS, csr("approve"))
    body = {**created, "spec": {**created["spec"], "signerName": "example.com/other"},
            "status": {**conditions("Approved")["status"], "certificate": b64(certificate_pem())}}

    approved = await api.ok("PUT", f"{CSRS}/approve/approval", body)

    [condition] = approved["status"]["conditions"]
    assert condition["type"] == "Approved" and condition["reason"] == "TestApproved"
    assert condition["lastUpdateTime"] == condition["lastTransitionTime"]
    assert approved["spec"] == created["spec"] and "certificate" not in approved["status"]
    assert await api.ok("GET", f"{CSRS}/approve/approval") == approved


async def test_server_side_apply_to_approval_applies_the_conditions(api: Api) -> None:
    """An apply to /approval owns status.conditions, as upstream's approval strategy resets only the
    spec and the certificate; the rest of the configuration is not applied."""
    await api.ok("POST", CSRS, csr("applied"))
    config = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
              "metadata": {"name": "applied", "labels": {"not": "applied"}},
              "spec": {"signerName": "example.com/other"},
              "status": {"conditions": [{"type": "Denied", "status": "True", "reason": "Applied"}]}}
    denied = await api.ok("PATCH", f"{CSRS}/applied/approval?fieldManager=approver", orjson.dumps(config),
                          content_type="application/apply-patch+yaml")
    assert [(c["type"], c["reason"]) for c in denied["status"]["conditions"]] == [("Denied", "Applied")]
    assert "labels" not in denied["metadata"] and denied["spec"]["signerName"] != "example.com/other"
    [entry] = [e for e in denied["metadata"]["managedFields"] if e["manager"] == "approver"]
    assert (entry["operation"], entry["subresource"]) == ("Apply", "approval")
    assert entry["fieldsV1"] == {"f:status": {"f:conditions": {'k:{"type":"Denied"}': {
        ".": {}, "f:reason": {}, "f:status": {}, "f:type": {}}}}}


async def test_approval_rules(api: Api) -> None:
    created = await api.ok("POST", CSRS, csr("rules"))
    approval = f"{CSRS}/rules/approval"

    assert await refused(api, "PUT", approval, {**created, **conditions("Approved", "Denied")}) == [
        ("status.conditions[1].type", 'Invalid value: "Denied": Approved and Denied conditions are mutually '
                                      "exclusive")]
    assert await refused(api, "PUT", approval, {**created, **conditions("Denied", status="False")}) == [
        ("status.conditions[0].status", 'Unsupported value: "False": supported values: "True"')]
    assert await refused(api, "PUT", approval, {**created, "status": {"conditions": [
        {"type": "", "status": "Maybe"}, {"type": "Custom", "status": "True"}, {"type": "Custom", "status": "True"}]}}
    ) == [("status.conditions[0].type", "Required value"),
          ("status.conditions[0].status",
           'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
          ("status.conditions[2].type", 'Duplicate value: "Custom"')]
    approved = await api.ok("PUT", approval, {**created, **conditions("Approved")})
    assert await refused(api, "PUT", approval, {**approved, "status": {"conditions": []}}) == [
        ("status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"')]


async def test_status_adds_failed_but_not_approval_and_keeps_approval_as_stored(api: Api) -> None:
    created = await api.ok("POST", CSRS, csr("status-rules"))
    status = f"{CSRS}/status-rules/status"

    assert await refused(api, "PUT", status, {**created, **conditions("Approved")}) == [
        ("status.conditions", 'Forbidden: updates may not add a condition of type "Approved"')]
    approved = await api.ok("PATCH", f"{CSRS}/status-rules/approval", conditions("Approved"), content_type=MERGE)
    stored = approved["status"]["conditions"][0]
    edited = {**stored, "reason": "Edited", "message": "by the signer"}
    failed = {"type": "Failed", "status": "True", "reason": "SignerDown"}

    written = await api.ok("PUT", status, {**approved, "status": {"conditions": [edited, failed]}})

    assert written["status"]["conditions"][0] == stored
    assert written["status"]["conditions"][1]["reason"] == "SignerDown"
    assert "lastTransitionTime" in written["status"]["conditions"][1]


async def test_main_resource_keeps_spec_and_status(api: Api) -> None:
    created = await api.ok("POST", CSRS, csr("immutable"))
    body = {**created, "metadata": {**created["metadata"], "labels": {"team": "ml"}},
            "spec": {**created["spec"], "usages": ["server auth"]}, **conditions("Approved")}

    updated = await api.ok("PUT", f"{CSRS}/immutable", body)

    assert updated["metadata"]["labels"] == {"team": "ml"}
    assert (updated["spec"], updated["status"]) == (created["spec"], {})


@pytest.mark.parametrize(("certificate", "problem"), [
    (b"not a certificate", "must contain at least one CERTIFICATE PEM block"),
    (CSR_PEM, 'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"'),
    (b"-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\naGk=\n-----END CERTIFICATE-----\n",
     "no PEM block headers are permitted"),
    (b"-----BEGIN CERTIFICATE-----\naGk=\n-----END CERTIFICATE-----\n", "x509: malformed certificate"),
], ids=["no-block", "csr-block", "headers", "not-der"])
async def test_status_certificate_must_be_certificate_blocks(api: Api, certificate: bytes, problem: str) -> None:
    name = f"cert-{abs(hash(certificate))}"
    created = await api.ok("POST", CSRS, csr(name))

    assert await refused(api, "PUT", f"{CSRS}/{name}/status",
                         {**created, "status": {"certificate": b64(certificate)}}) == [
        ("status.certificate", f'Invalid value: "<certificate data>": {problem}')]


async def test_a_signer_issues_once_through_status(api: Api) -> None:
    await api.ok("POST", CSRS, csr("issued"))
    await api.ok("PATCH", f"{CSRS}/issued/approval", conditions("Approved"), content_type=MERGE)
    certificate = b64(b"Issued by a test signer.\n" + certificate_pem())

    issued = await api.ok("PATCH", f"{CSRS}/issued/status", {"status": {"certificate": certificate}},
                          content_type=MERGE)
    status, again = await api.request("PATCH", f"{CSRS}/issued/status",
                                      {"status": {"certificate": b64(certificate_pem())}}, content_type=MERGE)

    assert issued["status"]["certificate"] == certificate
    assert status == 422 and causes(again) == [
        ("status.certificate", "Forbidden: updates may not modify existing certificate content")]


async def test_list_by_signer_name(api: Api) -> None:
    await api.ok("POST", CSRS, csr("by-signer", signerName="example.com/trainer-ca"))

    listed = await api.ok("GET", f"{CSRS}?fieldSelector=spec.signerName%3Dexample.com%2Ftrainer-ca")

    assert [item["metadata"]["name"] for item in listed["items"]] == ["by-signer"]
