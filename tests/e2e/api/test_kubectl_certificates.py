"""kubectl 1.37 with CertificateSigningRequests: ``certificate approve`` and ``deny`` (PUTs to
``/approval``), ``get csr`` with upstream's columns, the requester the server records in both
modes, and a test acting as the signer (fakeapi runs none) issuing through ``/status``."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from fakeapi.fixtures.plugin import Kubectl

from tests.e2e.api.conftest import table, to_yaml
from tests.e2e.models.objects import CSR, CSR_PEM, with_field

SECURE = pytest.mark.fakeapi(secure=True)


def csr(name: str, **spec: Any) -> dict[str, Any]:
    out = with_field(CSR, ("metadata", "name"), name)
    out["spec"].update(spec)
    return out


def self_signed_pem() -> str:
    """A certificate for the request's key holder, as a signer would return it (PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "trainer")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def issue() -> str:
    """The merge patch of a signer writing a new certificate to ``/status``."""
    certificate = base64.b64encode(self_signed_pem().encode()).decode()
    return f'{{"status": {{"certificate": "{certificate}"}}}}'


async def test_approve_deny_and_get_csr_print_upstream_columns(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(csr("approve-me"), csr("deny-me"),
                                                        csr("pending", expirationSeconds=None)))

    approved = await kubectl.run("certificate", "approve", "approve-me")
    denied = await kubectl.run("certificate", "deny", "deny-me")
    rows = table((await kubectl.run("get", "csr")).stdout)

    assert approved.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/approve-me approved"
    assert denied.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/deny-me denied"
    assert rows["NAME"] == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    signer = "kubernetes.io/kube-apiserver-client"
    assert [rows[name][2:] for name in ("approve-me", "deny-me", "pending")] == [
        [signer, "system:unsecured", "24h", "Approved"],
        [signer, "system:unsecured", "24h", "Denied"],
        [signer, "system:unsecured", "<none>", "Pending"],
    ]
    condition = await kubectl.run("get", "csr", "approve-me", "-o",
                                  "jsonpath={.status.conditions[0].type}/{.status.conditions[0].reason}")
    assert condition.stdout == "Approved/KubectlApprove"


async def test_an_approved_request_waits_for_a_signer_writing_status(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(csr("signed")))
    await kubectl.run("certificate", "approve", "signed")
    before = await kubectl.run("get", "csr", "signed", "-o", "jsonpath={.status.certificate}")

    await kubectl.run("patch", "csr", "signed", "--subresource=status", "--type=merge", "-p", issue())
    rows = table((await kubectl.run("get", "csr", "signed")).stdout)
    again = await kubectl.run("patch", "csr", "signed", "--subresource=status", "--type=merge", "-p", issue(),
                              check=False)

    assert before.stdout == ""  # no signer in fakeapi
    assert rows["signed"][-1] == "Approved,Issued"
    assert "status.certificate: Forbidden: updates may not modify existing certificate content" in again.stderr


async def test_the_request_cannot_be_forged_or_changed(kubectl: Kubectl) -> None:
    forged = csr("forged", username="kubernetes-admin", groups=["system:masters"])
    await kubectl.run("create", "-f", "-", input=to_yaml(forged))
    await kubectl.run("patch", "csr", "forged", "--type=merge", "-p", '{"spec": {"signerName": "example.com/other"}}')

    spec = await kubectl.run("get", "csr", "forged", "-o",
                             "jsonpath={.spec.username} {.spec.groups} {.spec.signerName}")

    assert spec.stdout == ('system:unsecured ["system:masters","system:authenticated"] '
                           "kubernetes.io/kube-apiserver-client")


@SECURE
async def test_secure_requestor_is_the_client_certificates_user(kubectl: Kubectl) -> None:
    await kubectl.run("create", "-f", "-", input=to_yaml(csr("admin-asks")))

    rows = table((await kubectl.run("get", "csr", "admin-asks")).stdout)
    groups = await kubectl.run("get", "csr", "admin-asks", "-o", "jsonpath={.spec.groups}")

    assert rows["admin-asks"][3] == "kubernetes-admin"
    assert groups.stdout == '["system:masters","system:authenticated"]'


async def test_a_kube_apiserver_client_certificate_for_system_masters_is_forbidden(kubectl: Kubectl) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "root"),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters")])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    pem = request.public_bytes(serialization.Encoding.PEM)
    assert pem != CSR_PEM

    created = await kubectl.run("create", "-f", "-", check=False,
                                input=to_yaml(csr("masters", request=base64.b64encode(pem).decode())))

    assert created.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": certificatesigningrequests.certificates.k8s.io '
        '"masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is '
        "not allowed")
