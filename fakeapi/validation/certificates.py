"""``certificates.k8s.io/v1`` CertificateSigningRequest strategy (upstream's
``pkg/registry/certificates/certificates/strategy.go`` and ``pkg/apis/certificates/validation``).

A create records the requesting user in the spec and starts with an empty status; the spec never
changes after.  Each endpoint changes its own part: ``/approval`` the conditions (Approved and
Denied are added there only), ``/status`` the certificate and the other conditions (a Failed
one); the main resource only metadata.  Approved, Denied and Failed conditions stay once added.

The request must be a PEM ``CERTIFICATE REQUEST`` whose signature verifies, the certificate PEM
``CERTIFICATE`` blocks that parse: ``cryptography`` checks both, imported on first use (a cluster
that stores no CSR never loads it).  The ``CertificateSubjectRestriction`` admission plugin runs
too: no ``kubernetes.io/kube-apiserver-client`` certificate for the ``system:masters`` group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fakeapi.errors import (
    FieldError,
    GoSyntax,
    admission_forbidden,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
)
from fakeapi.machinery import pem
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.validation import names
from fakeapi.validation.common import field_bytes
from fakeapi.validation.strategy import AdmissionContext, Strategy

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
# The signer name of requests made through v1beta1 before signers existed: v1 refuses it on create.
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
SYSTEM_MASTERS = "system:masters"
MIN_EXPIRATION_SECONDS = 600
VALID_USAGES = sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth",
    "client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel",
    "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc",
))
_VALID_USAGES = frozenset(VALID_USAGES)
ALL_STATUSES = ["False", "True", "Unknown"]
# Approved, Denied and Failed conditions may only be True.
TRUE_ONLY_TYPES = (APPROVED, DENIED, FAILED)


def gofield_bytes(value: Any) -> GoSyntax:
    """A ``[]byte`` field as Go's ``%#v`` prints it, the value upstream's error for a bad request
    shows (``[]byte(nil)`` when unset)."""
    if not isinstance(value, str):
        return GoSyntax("[]byte(nil)")
    return GoSyntax("[]byte{" + ", ".join(f"0x{b:x}" for b in field_bytes(value)) + "}")


# -- parsing (cryptography, on first use) -------------------------------------------------------

@dataclass(frozen=True)
class ParsedRequest:
    """What validation and admission need of a request: why it is invalid, or its subject's groups."""

    error: str = ""
    organizations: tuple[str, ...] = ()


# Requests by their base64 text: an update re-validates the unchanged request, as upstream does,
# but need not verify its signature again.
_PARSED: Memo[str, ParsedRequest] = Memo(256)


def parse_request(request: str) -> ParsedRequest:
    """Upstream's ``ParseCSR`` and ``CheckSignature`` of a base64 ``spec.request``, with Go's messages."""
    parsed = _PARSED.get(request)
    if parsed is None:
        parsed = _PARSED.keep(request, _parse_request(field_bytes(request)))
    return parsed


def _parse_request(data: bytes) -> ParsedRequest:
    block, _ = pem.decode(data)
    if block is None or block.type != "CERTIFICATE REQUEST":
        return ParsedRequest("PEM block type must be CERTIFICATE REQUEST")
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.x509.oid import NameOID

    try:
        csr = x509.load_der_x509_csr(block.data)
    except ValueError:
        return ParsedRequest("x509: malformed certificate request")
    try:
        key = csr.public_key()
        valid = csr.is_signature_valid
    except (ValueError, UnsupportedAlgorithm):
        return ParsedRequest("x509: cannot verify signature: algorithm unimplemented")
    if not valid:
        # Go's message differs by key type (crypto/rsa's own error for RSA).
        if isinstance(key, rsa.RSAPublicKey):
            return ParsedRequest("crypto/rsa: verification error")
        if isinstance(key, ed25519.Ed25519PublicKey):
            return ParsedRequest("x509: Ed25519 verification failure")
        if isinstance(key, ec.EllipticCurvePublicKey):
            return ParsedRequest("x509: ECDSA verification failure")
        return ParsedRequest("x509: cannot verify signature: algorithm unimplemented")
    groups = csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return ParsedRequest(organizations=tuple(str(attr.value) for attr in groups))


def certificate_problem(certificate: Any) -> str:
    """Upstream's ``validateCertificate`` of a base64 ``status.certificate``: why it is not one or
    more PEM ``CERTIFICATE`` blocks without headers that parse ("" when it is, or empty)."""
    data = field_bytes(certificate)
    if not data:
        return ""
    from cryptography import x509

    blocks = 0
    while True:
        block, data = pem.decode(data)
        if block is None:
            break
        if block.type != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{block.type}"'
        if block.headers:
            return "no PEM block headers are permitted"
        blocks += 1
        try:
            x509.load_der_x509_certificate(block.data)
        except ValueError:
            return "x509: malformed certificate"
    return "" if blocks else "must contain at least one CERTIFICATE PEM block"


# -- validation ---------------------------------------------------------------------------------

def validate_signer_name(path: str, signer: str) -> list[FieldError]:
    """``ValidateSignerName``: ``<DNS domain with a dot>/<DNS subdomains>``, at most 571 characters."""
    if not signer:
        return [required(path)]
    segments = signer.split("/")
    if len(segments) != 2:
        return [invalid(path, signer, "must be a fully qualified domain and path of the form "
                                      "'example.com/signer-name'")]
    domain, name = segments
    errs = [too_long(path, names.DNS_SUBDOMAIN_MAX)] if len(domain) > names.DNS_SUBDOMAIN_MAX else []
    labels = domain.split(".")
    # Only the first bad label of each part is reported: the rest would read alike.
    for label in labels:
        if problems := names.dns1123_label(label):
            errs += [invalid(path, domain, f"validating label {go_quote(label)}: {p}") for p in problems]
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    for label in name.split("."):
        if problems := names.dns1123_subdomain(label):
            errs += [invalid(path, name, f"validating label {go_quote(label)}: {p}") for p in problems]
            break
    longest = names.DNS_SUBDOMAIN_MAX + (names.DNS_SUBDOMAIN_MAX + names.DNS_LABEL_MAX + 1) + 1
    if len(signer) > longest:
        errs.append(too_long(path, longest))
    return errs


@dataclass(frozen=True)
class _Tolerated:
    """What an update tolerates because the stored object already has it (upstream's
    ``certificateValidationOptions``, compatibility with data older than the rules)."""

    both_approved_and_denied: bool = False
    legacy_signer: bool = False
    duplicate_condition_types: bool = False
    empty_condition_type: bool = False
    arbitrary_certificate: bool = False
    unknown_usages: bool = False
    duplicate_usages: bool = False

    @classmethod
    def of(cls, new: dict[str, Any], old: dict[str, Any] | None) -> _Tolerated:
        if old is None:
            return cls()
        spec, types = old.get("spec") or {}, [c.get("type") for c in _conditions(old)]
        usages = spec.get("usages") or []
        new_certificate = (new.get("status") or {}).get("certificate")
        old_certificate = (old.get("status") or {}).get("certificate")
        return cls(both_approved_and_denied=APPROVED in types and DENIED in types,
                   legacy_signer=spec.get("signerName") == LEGACY_UNKNOWN_SIGNER,
                   duplicate_condition_types=len(set(types)) < len(types),
                   empty_condition_type="" in types or None in types,
                   # A write that leaves the certificate alone, or one stored before the rule.
                   arbitrary_certificate=new_certificate == old_certificate
                   or bool(certificate_problem(old_certificate)),
                   unknown_usages=any(u not in _VALID_USAGES for u in usages),
                   duplicate_usages=len(set(usages)) < len(usages))


def _conditions(csr: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in (csr.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def _validate_spec(spec: dict[str, Any], tolerated: _Tolerated) -> list[FieldError]:
    errs: list[FieldError] = []
    request = spec.get("request")
    if error := parse_request(request if isinstance(request, str) else "").error:
        errs.append(invalid("spec.request", gofield_bytes(request), error))
    usages = spec.get("usages") or []
    if not usages:
        errs.append(required("spec.usages"))
    if not tolerated.unknown_usages:
        errs += [not_supported(f"spec.usages[{i}]", u, VALID_USAGES) for i, u in enumerate(usages)
                 if u not in _VALID_USAGES]
    if not tolerated.duplicate_usages:
        errs += [duplicate(f"spec.usages[{i}]", u) for i, u in enumerate(usages) if u in usages[:i]]
    signer = spec.get("signerName") or ""
    if signer == LEGACY_UNKNOWN_SIGNER and not tolerated.legacy_signer:
        errs.append(invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    elif signer != LEGACY_UNKNOWN_SIGNER:
        errs += validate_signer_name("spec.signerName", signer)
    seconds = spec.get("expirationSeconds")
    if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
        errs.append(invalid("spec.expirationSeconds", seconds,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    return errs


def _validate_conditions(csr: dict[str, Any], tolerated: _Tolerated) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, condition in enumerate(_conditions(csr)):
        path, kind, status = f"status.conditions[{i}]", condition.get("type"), condition.get("status")
        if not kind and not tolerated.empty_condition_type:
            errs.append(required(f"{path}.type"))
        allowed = ["True"] if kind in TRUE_ONLY_TYPES else ALL_STATUSES
        if not status:
            errs.append(required(f"{path}.status"))
        elif status not in allowed:
            errs.append(not_supported(f"{path}.status", status, allowed))
        if not tolerated.both_approved_and_denied:
            approved, denied = approved or kind == APPROVED, denied or kind == DENIED
            if kind in (APPROVED, DENIED) and approved and denied:
                errs.append(invalid(f"{path}.type", kind, "Approved and Denied conditions are mutually exclusive"))
        if not tolerated.duplicate_condition_types:
            if kind in seen:
                errs.append(duplicate(f"{path}.type", kind))
            seen.add(kind)
    return errs


def validate_csr(csr: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """``validateCertificateSigningRequest``: the spec, the conditions and the certificate."""
    tolerated = _Tolerated.of(csr, old)
    errs = _validate_spec(csr.get("spec") or {}, tolerated) + _validate_conditions(csr, tolerated)
    if not tolerated.arbitrary_certificate:
        if problem := certificate_problem((csr.get("status") or {}).get("certificate")):
            errs.append(invalid("status.certificate", "<certificate data>", problem))
    return errs


def _count(csr: dict[str, Any], kind: str) -> int:
    return sum(1 for c in _conditions(csr) if c.get("type") == kind)


def validate_csr_update(new: dict[str, Any], old: dict[str, Any], subresource: str) -> list[FieldError]:
    """``validateCertificateSigningRequestUpdate`` for the endpoint written.

    Approved/Denied/Failed conditions are never removed; Approved and Denied are added through
    ``/approval`` only (the status endpoint keeps the stored ones, so adding or removing one is
    all a status write can do to them); only ``/status`` sets the certificate, and only once (the
    other endpoints keep the stored one)."""
    errs = validate_csr(new, old)
    for kind in (APPROVED, DENIED, FAILED):
        if _count(new, kind) < _count(old, kind):
            errs.append(forbidden("status.conditions", f'updates may not remove a condition of type "{kind}"'))
    if subresource != "approval":
        errs += [forbidden("status.conditions", f'updates may not add a condition of type "{kind}"')
                 for kind in (APPROVED, DENIED) if _count(new, kind) > _count(old, kind)]
    old_certificate = (old.get("status") or {}).get("certificate")
    if old_certificate and (new.get("status") or {}).get("certificate") != old_certificate:
        errs.append(forbidden("status.certificate", "updates may not modify existing certificate content"))
    return errs


# -- the strategy --------------------------------------------------------------------------------

def _record_requester(spec: dict[str, Any], ctx: AdmissionContext) -> None:
    """PrepareForCreate: the user fields say who sent the create, whatever the client wrote."""
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if ctx.user is not None:  # (the UserInfo's wire form has the spec's field names)
        spec.update(ctx.user.to_api())


def _keep_instances(new: dict[str, Any], old: dict[str, Any], kind: str) -> None:
    """``preserveConditionInstances``: as many conditions of ``kind`` as stored get the stored values."""
    conditions = (new.get("status") or {}).get("conditions") or []
    new_at = [i for i, c in enumerate(conditions) if isinstance(c, dict) and c.get("type") == kind]
    old_values = [c for c in _conditions(old) if c.get("type") == kind]
    if len(new_at) == len(old_values):
        for i, value in zip(new_at, old_values, strict=True):
            conditions[i] = deep_copy(value)


def _stamp_conditions(new: dict[str, Any], old: dict[str, Any]) -> None:
    """``populateConditionTimestamps``: a condition without times was updated now, and changed
    status now unless the stored one of its type had that status already."""
    now = now_rfc3339()
    for condition in _conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            same = next((c["lastTransitionTime"] for c in _conditions(old)
                         if c.get("type") == condition.get("type") and c.get("status") == condition.get("status")
                         and c.get("lastTransitionTime")), now)
            condition["lastTransitionTime"] = same


def admit_subject(csr: dict[str, Any]) -> None:
    """``CertificateSubjectRestriction``: no kube-apiserver client certificate for system:masters
    (a request that does not parse is left to validation, which runs first upstream)."""
    spec = csr.get("spec") or {}
    if spec.get("signerName") != KUBE_APISERVER_CLIENT or not isinstance(spec.get("request"), str):
        return
    if SYSTEM_MASTERS in parse_request(spec["request"]).organizations:
        raise admission_forbidden(csr, "certificatesigningrequests", "certificates.k8s.io",
                                  f"use of {KUBE_APISERVER_CLIENT} signer with {SYSTEM_MASTERS} group is not allowed")


class CertificateSigningRequestStrategy(Strategy):
    """CertificateSigningRequests: the requester recorded, an immutable spec, one part per endpoint."""

    wants_user: ClassVar[bool] = True

    def validate_name(self, name: str) -> list[str]:
        # Upstream: "We don't care what you call your certificate requests" (but for one URL segment).
        return names.path_segment_name(name)

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        # (no pre-approved requests: the pipeline drops a create's status, as for every kind)
        if ctx.operation == "CREATE":
            _record_requester(obj.setdefault("spec", {}), ctx)

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> None:
        if ctx.subresource != "approval":  # (/approval changes the conditions only already)
            new["spec"] = deep_copy(old.get("spec") or {})
        if ctx.subresource == "status":
            _keep_instances(new, old, APPROVED)
            _keep_instances(new, old, DENIED)
        if ctx.subresource:
            _stamp_conditions(new, old)

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if ctx.operation == "CREATE":
            admit_subject(obj)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_csr(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return validate_csr_update(new, old, ctx.subresource)

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return validate_csr_update(new, old, "status")


STRATEGIES: dict[str, Strategy] = {"CertificateSigningRequest": CertificateSigningRequestStrategy()}
