"""How clients reach a fakeapi server: the URL to connect to and a kubeconfig naming it."""

from __future__ import annotations

import base64
import functools
import ipaddress
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from yarl import URL

from fakeapi.machinery import yamltext
from fakeapi.machinery.pem import KeyPair

CONTEXT = "default"
# A server bound to every interface is reached from this machine through loopback.
_WILDCARD_TO_LOOPBACK = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server off the network (a hostname other than
    ``localhost`` may resolve to anything, so it counts as reachable)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_url(bound_host: str, port: int, *, secure: bool = False) -> str:
    """The URL a client on this machine uses for a socket bound to ``bound_host``:``port``.

    A wildcard address is not something to connect to, so it becomes the loopback address of
    its family; IPv6 addresses get their brackets.
    """
    host = _WILDCARD_TO_LOOPBACK.get(bound_host, bound_host)
    return str(URL.build(scheme="https" if secure else "http", host=host, port=port))


def _b64(pem: bytes) -> str:
    return base64.b64encode(pem).decode()


def kubeconfig_text(url: str, namespace: str = "default", *, ca_pem: bytes | None = None,
                    client: KeyPair | None = None, token: str = "fakeapi") -> str:
    """A kubeconfig for ``url``; for a secure server with its CA and a client certificate or a
    bearer token (an open server ignores the placeholder token)."""
    if not _PLAIN_URL.fullmatch(url):
        return _kubeconfig_yaml(url, namespace, ca_pem, client, token)
    # Each cluster differs from the last by its URL (the port): YAML text once per process with
    # a placeholder there (~1M instructions, a fifth of a cluster's start without control plane).
    before, after = _kubeconfig_around_url(namespace, ca_pem, client, token)
    return before + url + after


# URLs that YAML writes as they are (a plain scalar: no spaces, quotes, '#' or ', '), as
# server_url makes them; _URL_SLOT is one of them.
_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9.\-]+(:\d+)?|https?://\[[0-9A-Fa-f:.]+\](:\d+)?")
_URL_SLOT = "http://fakeapi.invalid:1"


@functools.lru_cache(maxsize=16)
def _kubeconfig_around_url(namespace: str, ca_pem: bytes | None, client: KeyPair | None,
                           token: str) -> tuple[str, str]:
    """The kubeconfig text before and after its (plain) server URL."""
    before, slot, after = _kubeconfig_yaml(_URL_SLOT, namespace, ca_pem, client, token).partition(_URL_SLOT)
    assert slot and _URL_SLOT not in after
    return before, after


def _kubeconfig_yaml(url: str, namespace: str, ca_pem: bytes | None, client: KeyPair | None, token: str) -> str:
    cluster: dict[str, str] = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    user = ({"client-certificate-data": _b64(client.cert_pem), "client-key-data": _b64(client.key_pem)}
            if client is not None else {"token": token})
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": CONTEXT, "user": user}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
        "preferences": {},
    }
    return yamltext.dump(config, sort_keys=False)


@dataclass(frozen=True)
class WrittenKubeconfig:
    """A kubeconfig this process wrote: the path and the file's identity, to remove only that."""

    path: Path
    identity: tuple[int, int]  # (st_dev, st_ino)

    def remove(self) -> None:
        """Delete the file unless it is gone or something else has replaced it since."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if (stat.st_dev, stat.st_ino) == self.identity:
            self.path.unlink(missing_ok=True)


def write_kubeconfig(path: str | os.PathLike[str], url: str, *, ca_pem: bytes | None = None,
                     client: KeyPair | None = None) -> WrittenKubeconfig:
    """Write a kubeconfig for ``url`` readable by the owner only (0600, like kubectl's own).

    Atomically: the text goes to a fresh 0600 file beside the target, which is then renamed
    over it, so a reader never sees half a file and the file is never briefly world-readable.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as file:
            file.write(kubeconfig_text(url, ca_pem=ca_pem, client=client))
            stat = os.fstat(file.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return WrittenKubeconfig(target, (stat.st_dev, stat.st_ino))
