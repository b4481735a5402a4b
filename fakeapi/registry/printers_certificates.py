"""Table columns of ``certificates.k8s.io/v1`` CertificateSigningRequests, after upstream's
``pkg/printers/internalversion/printers.go`` (Age second, as there)."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.durations import human_duration
from fakeapi.registry.resource import AGE, NAME, Column


def _spec(csr: dict[str, Any]) -> dict[str, Any]:
    return csr.get("spec") or {}


def _requested_duration(csr: dict[str, Any]) -> str:
    seconds = _spec(csr).get("expirationSeconds")
    return "<none>" if seconds is None else human_duration(seconds)


def csr_condition(csr: dict[str, Any]) -> str:
    """``extractCSRStatus``: Denied over Approved over Pending, then ``,Failed`` and ``,Issued``."""
    status = csr.get("status") or {}
    types = {c.get("type") for c in status.get("conditions") or [] if isinstance(c, dict)}
    condition = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        condition += ",Failed"
    if status.get("certificate"):
        condition += ",Issued"
    return condition


CSR_COLUMNS = (
    NAME, AGE,
    Column("SignerName", lambda csr: _spec(csr).get("signerName") or "<none>",
           description="signerName indicates the requested signer, and is a qualified name."),
    Column("Requestor", lambda csr: _spec(csr).get("username", ""),
           description="request contains an x509 certificate signing request encoded in a "
                       '"CERTIFICATE REQUEST" PEM block.'),
    Column("RequestedDuration", _requested_duration,
           description="expirationSeconds is the requested duration of validity of the issued certificate."),
    Column("Condition", csr_condition, description="conditions applied to the request."),
)
