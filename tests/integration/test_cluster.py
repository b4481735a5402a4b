"""``FakeCluster`` modes: the control plane in this event loop or in a child process."""

from __future__ import annotations

import stat
from dataclasses import fields, replace
from importlib import resources
from pathlib import Path

import aiohttp
import orjson
import pytest
import yaml
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES, ApiClient

from fakeapi.cluster import FakeCluster
from fakeapi.config import FeatureGates, ServerOptions
from fakeapi.server.state import OPTIONS as APP_OPTIONS

MANIFEST = resources.files("fakeapi.fixtures") / "manifests" / "gpu-cluster.yaml"
GVRS = {"DeviceClass": DEVICE_CLASSES, "Node": NODES, "ResourceSlice": RESOURCE_SLICES}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com"}}]}}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
       "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}


@pytest.mark.parametrize("mode", [True, "process"], ids=["in-process", "child-process"])
async def test_pod_with_template_claim_runs_in_either_mode(mode: bool | str) -> None:
    async with FakeCluster(control_plane=mode) as cluster, ApiClient(cluster.url) as api:
        for obj in yaml.safe_load_all(MANIFEST.read_text()):
            if obj:
                await api.create(GVRS[obj["kind"]], None, obj)
        await api.create(RESOURCE_CLAIM_TEMPLATES, "default", TEMPLATE)
        await api.create(PODS, "default", POD)

        async def running() -> dict | None:
            pod = await api.get(PODS, "default", "trainer")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        pod = await wait_for(running, timeout=20, message="the pod to run")
        assert pod["spec"]["nodeName"].startswith("gpu-node-")
        assert pod["status"]["resourceClaimStatuses"][0]["name"] == "gpu"



# Every ServerOptions field but the bind address gets a non-default value, so a field that
# FakeCluster drops on its way to the server fails these tests.
OPTIONS = ServerOptions(feature_gates=FeatureGates(DRAAdminAccess=False), event_window=2, event_window_bytes=1 << 20,
                        watcher_queue_limit=7, service_cluster_ip_range="10.100.0.0/24",
                        service_node_port_range="31000-31010",
                        bookmark_interval=0.25, idle_timeout=30.0, header_read_timeout=20.0, max_connections=40,
                        enable_faults=True, request_timeout=45.0, admission_webhooks=True)


def test_the_test_options_change_every_tunable_field() -> None:
    defaults = ServerOptions()
    unchanged = [f.name for f in fields(ServerOptions)
                 # secure changes the transport (TLS, credentials): tests/e2e/api/test_auth.py serves it.
                 if f.name not in ("host", "port", "secure") and getattr(OPTIONS, f.name) == getattr(defaults, f.name)]
    assert unchanged == []


OVERRIDES = [
    ("options-whole", {}, OPTIONS),
    ("keyword-host-port", {"host": "localhost", "port": 1234}, replace(OPTIONS, host="localhost", port=1234)),
    ("keyword-gates", {"feature_gates": "DRAAdminAccess=true"}, replace(OPTIONS, feature_gates=FeatureGates())),
]


@pytest.mark.parametrize(("kwargs", "expected"), [c[1:] for c in OVERRIDES], ids=[c[0] for c in OVERRIDES])
def test_options_pass_whole_and_keywords_override_what_they_name(kwargs: dict, expected: ServerOptions) -> None:
    assert FakeCluster(control_plane=False, options=OPTIONS, **kwargs).options == expected


async def test_non_default_options_reach_the_running_server() -> None:
    async with FakeCluster(control_plane=False, options=OPTIONS) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as session:
        assert cluster.registry.gates == OPTIONS.feature_gates
        # Options only the app reads (its middlewares' timeouts) arrive whole.
        assert cluster._runner is not None and cluster._runner.app[APP_OPTIONS] == OPTIONS
        assert cluster.registry.store.log.max_bytes == OPTIONS.event_window_bytes
        service = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}}
        async with session.post("/api/v1/namespaces/default/services", json=service) as resp:
            spec = (await resp.json())["spec"]
        # The kubernetes service holds the range's first address.
        assert (spec["clusterIP"], spec["ports"][0]["nodePort"]) == ("10.100.0.2", 31000)
        async with session.get("/fakeapi/v1/faults") as resp:  # enable_faults serves the admin endpoint
            assert resp.status == 200
        versions = []
        for name in ("a", "b", "c"):
            async with session.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": name}}) as resp:
                versions.append((await resp.json())["metadata"]["resourceVersion"])
        # The window keeps the last two events: resuming from before the first configmap would
        # miss it, which the default window (100,000 events) still holds.
        before_first = int(versions[0]) - 1
        async with session.get(f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={before_first}") as resp:
            event = orjson.loads(await resp.content.readline())
        assert event["type"] == "ERROR" and event["object"]["code"] == 410


@pytest.mark.parametrize("secure", [False, True], ids=["insecure", "secure"])
async def test_the_kubeconfig_is_written_when_first_read_and_removed_at_stop(secure: bool) -> None:
    from fakeapi.scheduler.connection import from_kubeconfig

    cluster = FakeCluster(control_plane=False, secure=secure)
    assert cluster.kubeconfig_path == Path()  # not started
    async with cluster:
        assert cluster._tmpdir is None  # nothing on disk until somebody asks
        path = cluster.kubeconfig_path
        assert path.exists() and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert cluster.kubeconfig_path == path  # written once
        async with ApiClient(from_kubeconfig(path)) as api:  # it reaches the cluster, as its admin
            assert (await api.get_path("/version"))["major"] == "1"
    assert not path.exists() and not path.parent.exists()
    assert cluster.kubeconfig_path == path and not path.exists()  # a stopped cluster writes nothing
