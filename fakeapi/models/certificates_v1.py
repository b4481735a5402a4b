"""``certificates.k8s.io/v1`` CertificateSigningRequest: a client asks a signer for an x509 certificate.

The apiserver records who asked (``spec.username``, ``uid``, ``groups``, ``extra``); an approver
adds an Approved or Denied condition through ``/approval``; the signer writes the certificate
(or a Failed condition) through ``/status``.  fakeapi runs no signer.
"""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, VALUE_STRUCT, Bytes, Int32, KubeModel, Time, TopLevel, list_map, opt, req
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.certificates.v1"


class CertificateSigningRequestSpec(KubeModel):
    """The certificate request; immutable after creation."""

    # (upstream's +listType=atomic on the []byte fields does not reach its OpenAPI: a string there)
    request: Bytes = req('An x509 certificate signing request in a "CERTIFICATE REQUEST" PEM block (base64).')
    signer_name: str = req("The requested signer, a qualified name (kubernetes.io/kube-apiserver-client, ...).")
    expiration_seconds: Int32 | None = opt("Requested validity of the issued certificate (at least 600).")
    usages: list[str] | None = opt("Key usages requested in the issued certificate.", markers=ATOMIC)
    username: str | None = opt("The user that created the request; set by the API server.")
    uid: str | None = opt("The uid of that user; set by the API server.")
    groups: list[str] | None = opt("The groups of that user; set by the API server.", markers=ATOMIC)
    extra: dict[str, list[str]] | None = opt("Extra attributes of that user; set by the API server.")


class CertificateSigningRequestCondition(KubeModel):
    """Approved, Denied (through /approval) or Failed (through /status), or a signer's own type."""

    type: str = req("The condition type; Approved, Denied and Failed may not be removed once added.")
    status: str = req("True, False or Unknown (only True for Approved, Denied and Failed).")
    reason: str | None = opt("Brief reason for the request state.")
    message: str | None = opt("Human-readable details about the request state.")
    last_update_time: Time | None = opt("When the condition was last updated.")
    last_transition_time: Time | None = opt("When the condition last changed status.")


class CertificateSigningRequestStatus(KubeModel):
    """Whether the request is approved or denied, and the issued certificate."""

    conditions: list[CertificateSigningRequestCondition] | None = opt(
        "Conditions of the request.", markers=list_map("type"))
    certificate: Bytes | None = opt("The issued certificate (PEM CERTIFICATE blocks, base64), set by the signer "
                                    "through /status; immutable once set.")


class CertificateSigningRequest(TopLevel):
    """A request for an x509 certificate, approved and issued asynchronously."""

    gvk: ClassVar[tuple[str, str, str]] = ("certificates.k8s.io", "v1", "CertificateSigningRequest")
    api_version: str | None = opt("certificates.k8s.io/v1")
    kind: str | None = opt("CertificateSigningRequest")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: CertificateSigningRequestSpec = req("The certificate request.", markers=VALUE_STRUCT)
    status: CertificateSigningRequestStatus | None = opt("Approval state and the issued certificate.",
                                                         markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (CertificateSigningRequest,)}
