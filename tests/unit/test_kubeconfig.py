"""The URL clients are given for a bind address, and how the kubeconfig file is written and removed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from fakeapi.kubeconfig import _kubeconfig_yaml, is_loopback, kubeconfig_text, server_url, write_kubeconfig
from fakeapi.machinery.pem import KeyPair


@pytest.mark.parametrize(("bound", "url"), [
    ("127.0.0.1", "http://127.0.0.1:6443"),
    ("0.0.0.0", "http://127.0.0.1:6443"),
    ("", "http://127.0.0.1:6443"),
    ("::", "http://[::1]:6443"),
    ("::1", "http://[::1]:6443"),
    ("192.0.2.7", "http://192.0.2.7:6443"),
    ("2001:db8::7", "http://[2001:db8::7]:6443"),
])
def test_clients_get_a_connectable_url_for_every_bind_address(bound: str, url: str) -> None:
    assert server_url(bound, 6443) == url


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("192.0.2.7", False), ("example.com", False),
])
def test_only_loopback_binds_count_as_private(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_kubeconfig_is_written_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        written = write_kubeconfig(tmp_path / "kube" / "config", "http://127.0.0.1:6443")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.path.stat().st_mode) == 0o600
    assert yaml.safe_load(written.path.read_text())["clusters"][0]["cluster"]["server"] == "http://127.0.0.1:6443"
    assert os.listdir(written.path.parent) == ["config"]  # no temporary file left beside it


def test_replacing_an_existing_file_makes_it_0600_too(tmp_path: Path) -> None:
    target = tmp_path / "config"
    target.write_text("old")
    target.chmod(0o644)
    write_kubeconfig(target, "http://127.0.0.1:6443")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_remove_deletes_only_the_file_it_wrote(tmp_path: Path) -> None:
    target = tmp_path / "config"
    ours = write_kubeconfig(target, "http://127.0.0.1:1")
    theirs = write_kubeconfig(target, "http://127.0.0.1:2")  # another server took the path
    ours.remove()
    assert "127.0.0.1:2" in target.read_text()
    theirs.remove()
    assert not target.exists()
    theirs.remove()  # already gone: nothing to do


CA = b"-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n"
CLIENT = KeyPair(b"-----BEGIN CERTIFICATE-----\ncert\n", b"-----BEGIN PRIVATE KEY-----\nkey\n")


@pytest.mark.parametrize(("url", "namespace", "ca_pem", "client"), [
    ("http://127.0.0.1:6443", "default", None, None),
    ("http://127.0.0.1:40001", "default", None, None),
    ("http://[::1]:6443", "default", None, None),
    ("http://[2001:db8::7]:80", "team-a", None, None),
    ("http://localhost:8080", "null", None, None),
    ("https://kind-control-plane.example:6443", "default", CA, CLIENT),
    ("https://127.0.0.1:6443", "default", CA, None),
    ("http://127.0.0.1:6443/prefix", "default", None, None),
    ("http://127.0.0.1:6443/#x", "default", None, None),
    ("http://a b", "default", None, None),
], ids=["ipv4", "another-port", "ipv6", "ipv6-namespace", "hostname-odd-namespace", "tls-client-cert",
        "tls-token", "with-path", "with-fragment", "with-space"])
def test_the_kubeconfig_text_is_what_yaml_writes(url: str, namespace: str, ca_pem: bytes | None,
                                                 client: KeyPair | None) -> None:
    text = kubeconfig_text(url, namespace, ca_pem=ca_pem, client=client)
    assert text == _kubeconfig_yaml(url, namespace, ca_pem, client, "fakeapi")
    config = yaml.safe_load(text)
    assert config["clusters"][0]["cluster"]["server"] == url
    assert config["contexts"][0]["context"]["namespace"] == namespace
