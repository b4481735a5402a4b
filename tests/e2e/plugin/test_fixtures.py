"""The fixtures as a downstream suite meets them, run by pytest in a subprocess: plain and async
tests, pytest-asyncio strict and auto modes, one cluster per test or per session, pytest-xdist,
and the same suite against an existing cluster (a second ``fakeapi serve``) treated as opaque."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakeapi.fixtures.plugin import kubectl_binary
from fakeapi.scheduler.clock import ManualClock

from tests.e2e import UNRELATED_PLUGINS

DOWNSTREAM = '''
import asyncio

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %s, labels: {kubernetes.io/hostname: %s}}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady}]
"""
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def node_name(namespace):
    return "node-" + namespace[-8:]


def test_plain_test_with_the_blocking_client(fake_cluster, kube_client, namespace):
    node = node_name(namespace)
    fake_cluster.apply(NODE % (node, node))
    client.CoreV1Api(kube_client).create_namespaced_pod(namespace, POD)
    pod = fake_cluster.wait_for("pod", "web", "condition=Ready", timeout=20)
    assert pod["metadata"]["namespace"] == namespace and pod["spec"]["nodeName"] == node
    assert "Scheduled" in [e["reason"] for e in fake_cluster.events(pod, reason="Scheduled")]


@pytest.mark.asyncio
async def test_async_test_awaits_the_helpers(fake_cluster, namespace):
    node = node_name(namespace)
    await fake_cluster.apply(NODE % (node, node))
    await fake_cluster.apply(POD)
    pod = await fake_cluster.wait_for("pod", "web", "jsonpath={.status.phase}=Running", timeout=20)
    assert pod["spec"]["nodeName"] == node
    await fake_cluster.delete("pod", "web", wait=True, timeout=20)


def test_each_test_starts_clean(fake_cluster, kubeconfig, namespace):
    assert fake_cluster.list("pods") == []
    assert fake_cluster.list("nodes") == []  # the other tests' nodes were removed after them
    assert f"namespace: {namespace}" in kubeconfig.read_text()


@pytest.mark.fakeapi_only
def test_fault_injection_in_a_plain_test(fake_api, kube_client, namespace):
    api = client.CoreV1Api(kube_client)
    body = {"metadata": {"name": "cm"}}
    with fake_api.faults.fail(verb="create", resource="configmaps", code=503, count=1) as fault:
        with pytest.raises(ApiException) as err:
            api.create_namespaced_config_map(namespace, body)
        api.create_namespaced_config_map(namespace, body)
    assert err.value.status == 503 and fault.fired == 1
'''


def run(pytester: pytest.Pytester, ini: str, *args: str) -> pytest.RunResult:
    pytester.makeini(ini)
    pytester.makepyfile(test_downstream=DOWNSTREAM)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *UNRELATED_PLUGINS, *args)


def test_auto_mode_one_cluster_per_session_under_xdist(pytester: pytest.Pytester) -> None:
    result = run(pytester, "[pytest]\nasyncio_mode = auto\nfakeapi_scope = session\n", "-n", "2")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*2 workers*"])


def test_strict_mode_against_an_existing_cluster(pytester: pytest.Pytester, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "opaque.kubeconfig"
    with subprocess.Popen([sys.executable, "-m", "fakeapi", "serve", "--kubeconfig", str(kubeconfig)],
                          stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None and server.stdout.readline().startswith("serving on http://")
            result = run(pytester, "[pytest]\nasyncio_mode = strict\n", f"--fakeapi-kubeconfig={kubeconfig}", "-rs")
        finally:
            server.terminate()
            server.wait(10)
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*test_downstream.py:*needs fakeapi*"])


# The default scope, in this suite itself: a plain test gets a cluster on a background loop.

def test_plain_test_gets_blocking_helpers_and_faults(fake_cluster, kube_client, namespace, kubeconfig) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    assert namespace == "default" and kubeconfig == fake_cluster.kubeconfig_path
    fake_cluster.apply(NODE)
    api = client.CoreV1Api(kube_client)
    with fake_cluster.faults.fail(verb="create", resource="pods", code=429, count=1) as fault:
        with pytest.raises(ApiException) as err:
            api.create_namespaced_pod(namespace, POD)
        api.create_namespaced_pod(namespace, POD)
    assert err.value.status == 429 and err.value.headers["Retry-After"] == "1" and fault.fired == 1
    pod = fake_cluster.wait_for("pod", "web", "condition=Ready")
    assert pod["spec"]["nodeName"] == "node-0"
    events = fake_cluster.events(pod, reason="Scheduled")
    scheduled = next(e for e in events if e["reason"] == "Scheduled")
    assert "assigned default/web to node-0" in scheduled["message"]
    assert len(fake_cluster.registry.reads.items(fake_cluster.registry.kinds.namespaces)) >= 4


@pytest.mark.parametrize("i", [1, 2])
def test_plain_tests_get_a_fresh_cluster_each(fake_cluster, i) -> None:
    # Plain tests with clusters of their own run them one after the other on one background loop.
    assert fake_cluster.list("nodes") == [], "nothing of the other test's cluster is left"
    fake_cluster.apply(NODE)
    assert [n["metadata"]["name"] for n in fake_cluster.list("nodes")] == ["node-0"]


@pytest.mark.fakeapi(control_plane=False)
def test_plain_test_with_options_and_kubectl(fake_cluster, tmp_path) -> None:
    fake_cluster.apply(NODE)
    out = subprocess.run([kubectl_binary(), "get", "nodes", "-o", "name"], capture_output=True, text=True,
                         env={**os.environ, "KUBECONFIG": str(fake_cluster.kubeconfig_path), "HOME": str(tmp_path)},
                         check=True).stdout
    assert out.split() == ["node/node-0"]
    assert fake_cluster.list("pods") == []


@pytest.mark.fakeapi(clock=ManualClock())
def test_plain_test_settles_the_cluster_on_its_uvloop_thread(fake_cluster, kube_client, namespace) -> None:
    # The fixture's loop is uvloop's: settle() cannot read its ready queue and goes by the
    # in-process connections' deliveries instead.
    from kubernetes import client

    fake_cluster.apply(NODE)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
           "spec": {"template": {"metadata": {"annotations": {"fakeapi.dev/run-for": "30s"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}
    client.BatchV1Api(kube_client).create_namespaced_job(namespace, job)
    fake_cluster.settle()
    pods = client.CoreV1Api(kube_client).list_namespaced_pod(namespace, label_selector="job-name=once").items
    assert [p.status.phase for p in pods] == ["Running"]
    fake_cluster.clock.advance(30)  # settles too: the pod ended, and the Job with it
    done = client.BatchV1Api(kube_client).read_namespaced_job("once", namespace)
    assert done.status.succeeded == 1
    assert (done.status.completion_time - done.status.start_time).total_seconds() == 30


NODE = DOWNSTREAM.split('NODE = """')[1].split('"""')[0] % ("node-0", "node-0")
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


SELECTED = '''
import pytest

DRA = {"resourceclaim-controller", "job-controller"}


async def test_async_cluster_runs_the_projects_controllers(fake_cluster):
    assert fake_cluster._control_plane.controllers == DRA


def test_plain_cluster_runs_the_projects_controllers(fake_cluster):
    assert fake_cluster._control_plane.controllers == DRA


@pytest.mark.fakeapi(controllers="*")
async def test_a_marker_overrides_the_project(fake_cluster):
    assert "deployment-controller" in fake_cluster._control_plane.controllers
'''


def test_the_project_chooses_the_controllers_of_every_cluster(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
                     "fakeapi_controllers = resourceclaim-controller,job\n")
    pytester.makepyfile(test_selected=SELECTED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *UNRELATED_PLUGINS)
    result.assert_outcomes(passed=3)
    with pytest.raises(pytest.UsageError, match='fakeapi_controllers: "nope" is not in the list of known controllers'):
        pytester.parseconfigure("--fakeapi-controllers=*,-nope")
