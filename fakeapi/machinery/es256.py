"""ES256 keys as JSON Web Tokens use them: ECDSA over P-256 with SHA-256, signatures as raw r || s.

Only :mod:`fakeapi.machinery.tokens` imports this module, when a server first signs or checks a
token: ``cryptography`` adds ~20 ms to the start of a process, and most processes (a test
suite's, a demo's) never see a token.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

_P256_BYTES = 32
_ECDSA_SHA256 = ec.ECDSA(hashes.SHA256())


class ES256Key:
    """A new P-256 private key (about 10 µs to make, once the library is loaded)."""

    def __init__(self) -> None:
        self._private = ec.generate_private_key(ec.SECP256R1())

    def public_der(self) -> bytes:
        """The public key as DER SubjectPublicKeyInfo, what a key id is the hash of."""
        return self._private.public_key().public_bytes(serialization.Encoding.DER,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign(self, data: bytes) -> bytes:
        """The JWS signature of ``data``: r and s, 32 bytes each, big-endian."""
        r, s = decode_dss_signature(self._private.sign(data, _ECDSA_SHA256))
        return r.to_bytes(_P256_BYTES, "big") + s.to_bytes(_P256_BYTES, "big")

    def verify(self, data: bytes, signature: bytes) -> bool:
        """Whether ``signature`` (raw r || s) is this key's signature of ``data``."""
        if len(signature) != 2 * _P256_BYTES:
            return False
        der = encode_dss_signature(int.from_bytes(signature[:_P256_BYTES], "big"),
                                   int.from_bytes(signature[_P256_BYTES:], "big"))
        try:
            self._private.public_key().verify(der, data, _ECDSA_SHA256)
        except InvalidSignature:
            return False
        return True
