"""ControlPlane wiring: starts every loop against a server, serves a bound pod, stops cleanly."""

import asyncio

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import PODS
from fakeapi.scheduler.controlplane import ControlPlane

from fakeapi.config import FeatureGates


async def test_control_plane_runs_loops_and_stops_cleanly(cluster, api):
    await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                       "metadata": {"name": "bound", "namespace": "default"},
                                       "spec": {"nodeName": "node-1",
                                                "containers": [{"name": "c", "image": "busybox"}]}})
    before = set(asyncio.all_tasks())
    async with ControlPlane(cluster.url, gates=FeatureGates()):
        async def running():
            return ((await api.get(PODS, "default", "bound")).get("status") or {}).get("phase") == "Running"

        await wait_for(running, message="the kubelet emulation to start the bound pod")
    # Control-plane tasks are named; unnamed ones belong to the server finishing closed watches.
    leftover = {t for t in asyncio.all_tasks() - before if not t.done() and not t.get_name().startswith("Task-")}
    assert not leftover, f"tasks still running after stop: {[t.get_name() for t in leftover]}"


async def test_control_plane_starts_without_kubelet_and_stops_twice(cluster, api):
    async with ControlPlane(cluster.url, kubelet=False) as plane:
        assert plane.server_url == cluster.url
    # Stopping twice is harmless.
    await plane.stop()
