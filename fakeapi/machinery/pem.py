"""PEM certificates and keys: their pair, and chains loaded into :mod:`ssl` contexts for the server
and for clients alike.

:meth:`ssl.SSLContext.load_cert_chain` reads files only, so the PEMs go to a private directory
(the key 0600) that is gone once they are loaded.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate and its PEM (PKCS#8, unencrypted) private key."""

    cert_pem: bytes
    key_pem: bytes


def load_cert_chain(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Load a certificate (chain) and its private key, both PEM, into ``context``."""
    with tempfile.TemporaryDirectory(prefix="fakeapi-tls-") as tmp:
        cert, key = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
        cert.write_bytes(cert_pem)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(key_pem)
        context.load_cert_chain(cert, key)
