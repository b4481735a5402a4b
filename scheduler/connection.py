"""Where the control plane finds its API server and how it proves who it is: a URL, and for a
secure server the CA to trust and a bearer token — given directly or read from a kubeconfig
(``python -m fakeapi.scheduler --kubeconfig PATH``)."""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakeapi.machinery.pem import load_cert_chain


@dataclass(frozen=True)
class Connection:
    """An API server URL, the CA that signed its certificate (PEM) and a bearer token or a client
    certificate (PEM, as kind's and kubeadm's admin kubeconfigs carry).  ``connect``: reach the
    server (plain HTTP) by handing each new connection's protocol to this function, which connects
    it in the same event loop and returns its transport, instead of the URL's address, which still
    names the server in the requests (``FakeCluster``'s in-process control plane, through
    ``GuardedSite.connect``)."""

    server: str
    ca_pem: bytes | None = None
    token: str | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    connect: Callable[[asyncio.Protocol], asyncio.Transport] | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        """TLS trusting only ``ca_pem`` (else the system's trust store) and presenting the client
        certificate if there is one; None when neither is set."""
        if not self.ca_pem and not self.client_cert_pem:
            return None
        context = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.client_cert_pem and self.client_key_pem:
            load_cert_chain(context, self.client_cert_pem, self.client_key_pem)
        return context

    def headers(self) -> dict[str, str]:
        """The Authorization header, when there is a token."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def _named(entries: Any, name: str, what: str) -> dict[str, Any]:
    for entry in entries or ():
        if entry.get("name") == name:
            return entry.get(what) or {}
    raise ValueError(f"kubeconfig: no {what} named {name!r}")


def _file_or_data(section: dict[str, Any], key: str, base: Path) -> bytes | None:
    if section.get(f"{key}-data"):
        return base64.b64decode(section[f"{key}-data"])
    if section.get(key):
        return (base / os.path.expanduser(section[key])).read_bytes()
    return None


def from_kubeconfig(path: str | os.PathLike[str]) -> Connection:
    """The current context's server, CA and credentials (``path`` "-" reads standard input): a
    bearer token (``token``/``tokenFile``) or a client certificate and key (inline or files).
    Exec and auth-provider plugins are not supported."""
    # Imported here: PyYAML is ~25 ms of a control plane's start, which most (given --server) skip.
    from fakeapi.machinery import yamltext

    path = Path(path)
    # "-": from standard input (how FakeCluster hands a child control plane its secrets).
    config = yamltext.load(sys.stdin.read() if str(path) == "-" else path.read_text()) or {}
    context = _named(config.get("contexts"), config.get("current-context", ""), "context")
    cluster = _named(config.get("clusters"), context.get("cluster", ""), "cluster")
    user = _named(config.get("users"), context.get("user", ""), "user") if context.get("user") else {}
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (path.parent / user["tokenFile"]).read_text().strip()
    if user.get("exec") or user.get("auth-provider"):
        raise ValueError("kubeconfig: exec and auth-provider credentials are not supported; use a token "
                         "or a client certificate")
    return Connection(cluster["server"], _file_or_data(cluster, "certificate-authority", path.parent), token,
                      _file_or_data(user, "client-certificate", path.parent),
                      _file_or_data(user, "client-key", path.parent))
