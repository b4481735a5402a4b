"""PEM certificates and keys: their pair, chains loaded into :mod:`ssl` contexts for the server
and for clients alike, and Go's ``pem.Decode`` (how the apiserver finds the blocks of PEM data
clients send, such as a CertificateSigningRequest's request and certificate).

:meth:`ssl.SSLContext.load_cert_chain` reads files only, so the PEMs go to a private directory
(the key 0600) that is gone once they are loaded.
"""

from __future__ import annotations

import binascii
import os
import ssl
import tempfile
from base64 import b64decode
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Block:
    """One PEM block: its type (``CERTIFICATE``), its ``Key: value`` headers and decoded bytes."""

    type: str
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)


_BEGIN, _END, _DASHES = b"-----BEGIN ", b"-----END ", b"-----"


def _line(data: bytes) -> tuple[bytes, bytes]:
    """Go's ``getLine``: the first line without its trailing spaces, tabs and CR, and the rest."""
    line, newline, rest = data.partition(b"\n")
    return line.rstrip(b" \t\r"), rest if newline else b""


def decode(data: bytes) -> tuple[Block | None, bytes]:
    """Go's ``pem.Decode``: the first well-formed block in ``data`` and what follows it, or
    (None, ``data``).  Text around blocks is skipped, as are blocks that do not decode."""
    rest = data
    while True:
        if rest.startswith(_BEGIN):
            rest = rest[len(_BEGIN):]
        else:
            at = rest.find(b"\n" + _BEGIN)
            if at < 0:
                return None, data
            rest = rest[at + 1 + len(_BEGIN):]
        type_line, rest = _line(rest)
        if not type_line.endswith(_DASHES):
            continue
        block_type = type_line[:-len(_DASHES)]
        headers: dict[str, str] = {}
        while True:
            if not rest:
                return None, data
            line, following = _line(rest)
            key, colon, value = line.partition(b":")
            if not colon:
                break
            headers[key.strip().decode(errors="replace")] = value.strip().decode(errors="replace")
            rest = following
        # Without headers the END line may come at once, with no newline before it.
        if not headers and rest.startswith(_END):
            end, trailer_at = 0, len(_END)
        else:
            end = rest.find(b"\n" + _END)
            trailer_at = end + 1 + len(_END)
        if end < 0:
            continue
        trailer = rest[trailer_at:trailer_at + len(block_type) + len(_DASHES)]
        if trailer != block_type + _DASHES or _line(rest[trailer_at + len(trailer):])[0]:
            continue
        body = rest[:end].translate(None, b" \t\r\n")
        try:
            decoded = b64decode(body, validate=True)
        except binascii.Error:
            continue
        return Block(block_type.decode(errors="replace"), decoded, headers), _line(rest[trailer_at:])[1]
