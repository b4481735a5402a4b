"""pytest plugin that runs kr8s's own test suite (shipped in its wheel as ``kr8s.tests``) against
``fakeapi serve --secure``.

kr8s's repository starts a kind cluster in a root conftest that its wheel does not ship; the
tests only need pytest-kind's ``k8s_cluster`` fixture (``kubeconfig_path``, ``kubectl_path``,
``kubectl(*args)``) and ``KUBECONFIG`` pointing at it.  This provides both from one fakeapi
server per session: secure, so the kubeconfig has what kind's has (CA data, an admin client
certificate) and ServiceAccount tokens authenticate; seeded with what a kind cluster has (its
node and the kube-system pods), which the control plane's kubelet emulation runs.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakeapi.fixtures.plugin import kubectl_binary

SEED = Path(__file__).with_name("seed.yaml")
START_TIMEOUT = 30


@dataclass
class FakeapiCluster:
    """What kr8s's tests use of pytest-kind's ``KindCluster``."""

    kubeconfig_path: Path
    kubectl_path: str

    def kubectl(self, *args: str) -> str:
        """Run kubectl against the cluster; its standard output."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig_path)}
        return subprocess.run([self.kubectl_path, *args], env=env, check=True, capture_output=True,
                              text=True).stdout


@pytest.fixture
def ensure_gc() -> Iterator[None]:
    """Collect garbage after the test, so classes it registered on the fly are gone (a fixture
    of kr8s's root conftest)."""
    yield
    gc.collect()


@pytest.fixture(scope="session")
def k8s_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeapiCluster]:
    kubeconfig = tmp_path_factory.mktemp("fakeapi") / "kubeconfig"
    server = subprocess.Popen([sys.executable, "-m", "fakeapi", "serve", "--secure", "--kubeconfig", str(kubeconfig)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "serving on https://..." once the kubeconfig is written
        assert line.startswith("serving on "), f"fakeapi serve did not start: {line!r}"
        cluster = FakeapiCluster(kubeconfig, kubectl_binary())
        cluster.kubectl("apply", "-f", str(SEED))
        cluster.kubectl("wait", "--for=condition=Ready", "pods", "--all", "-n", "kube-system",
                        f"--timeout={START_TIMEOUT}s")
        previous = os.environ.get("KUBECONFIG")
        os.environ["KUBECONFIG"] = str(kubeconfig)
        yield cluster
        if previous is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = previous
    finally:
        server.terminate()
        server.wait(timeout=START_TIMEOUT)
