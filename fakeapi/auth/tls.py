"""Certificates for ``--secure`` serving, generated at start: a CA, the server's certificate and
client certificates whose subject is the identity (upstream's x509 authenticator: CN is the
user name, each O a group).

EC P-256 keys keep generation to a few milliseconds (RSA-2048 takes ~50 ms per key).  Nothing
is written to disk except briefly for :mod:`ssl` (:mod:`fakeapi.machinery.pem`).
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
import ssl
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fakeapi.auth.users import ADMIN, AUTHENTICATED
from fakeapi.machinery.pem import KeyPair, load_cert_chain

# What a kubeadm cluster's serving certificate names, besides the addresses it is bound to.
SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local")
VALIDITY = datetime.timedelta(days=365)
# Clocks of clients on the same machine may lag a little behind the moment of generation.
BACKDATE = datetime.timedelta(minutes=5)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE).not_valid_after(now + VALIDITY))


def _san(hosts: tuple[str, ...]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):  # ordered, without repeats
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


class CertificateAuthority:
    """A self-signed CA that lives as long as the server (kubeadm's ``kubernetes`` CA)."""

    def __init__(self) -> None:
        self._key = _new_key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fakeapi-ca")])
        self._name = name
        self._cert = (_builder(name, name, self._key.public_key())
                      .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                      .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                   content_commitment=False, key_encipherment=False,
                                                   data_encipherment=False, key_agreement=False,
                                                   encipher_only=False, decipher_only=False), critical=True)
                      .sign(self._key, hashes.SHA256()))
        self.cert_pem = self._cert.public_bytes(serialization.Encoding.PEM)

    def _issue(self, subject: x509.Name, usage: x509.ObjectIdentifier,
               san: x509.SubjectAlternativeName | None = None) -> KeyPair:
        key = _new_key()
        builder = (_builder(subject, self._name, key.public_key())
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if san is not None:
            builder = builder.add_extension(san, critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))

    def issue_server(self, hosts: tuple[str, ...]) -> KeyPair:
        """A serving certificate for ``hosts`` (addresses or DNS names) and the usual API names."""
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
        return self._issue(subject, ExtendedKeyUsageOID.SERVER_AUTH, _san((*hosts, *SERVER_NAMES)))

    def issue_client(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate that authenticates as ``user`` in ``groups``."""
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        return self._issue(x509.Name(attrs), ExtendedKeyUsageOID.CLIENT_AUTH)


def server_context(ca: CertificateAuthority, serving: KeyPair) -> ssl.SSLContext:
    """TLS for the API server: its certificate, and client certificates verified when offered."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    load_cert_chain(context, serving.cert_pem, serving.key_pem)
    context.load_verify_locations(cadata=ca.cert_pem.decode())
    # Optional, as upstream: a client without a certificate may still bring a bearer token.
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def client_context(ca_pem: bytes, client: KeyPair | None = None) -> ssl.SSLContext:
    """TLS for a client that trusts ``ca_pem`` and, given ``client``, presents that certificate."""
    context = ssl.create_default_context(cadata=ca_pem.decode())
    if client is not None:
        load_cert_chain(context, client.cert_pem, client.key_pem)
    return context


@dataclass(frozen=True)
class SecureServing:
    """What a secure server is started with: its CA and TLS context, the admin's client
    certificate for the kubeconfig and the control plane's bearer token."""

    ca: CertificateAuthority
    server: ssl.SSLContext
    admin: KeyPair
    control_plane_token: str

    @classmethod
    def generate(cls, host: str) -> SecureServing:
        """Fresh material for a server bound to ``host`` (loopback names are always included)."""
        ca = CertificateAuthority()
        hosts = ("127.0.0.1", "::1", *((host,) if host and host not in ("0.0.0.0", "::") else ()))
        admin = ca.issue_client(ADMIN.name, tuple(g for g in ADMIN.groups if g != AUTHENTICATED))
        return cls(ca, server_context(ca, ca.issue_server(hosts)), admin, secrets.token_urlsafe(32))
