"""``controllers=`` (kube-controller-manager's ``--controllers``): only the chosen loops run, in
either layout of the control plane, and they watch only what they need."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from fakeapi.fixtures.plugin import wait_for
from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.controllers.podcontrol import DEPLOYMENTS, REPLICASETS
from sched_helpers import add_gpu_node, apply_manifest, create, pod_obj, template_obj, wait_running

from fakeapi.cluster import FakeCluster

LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}}


def replica_set(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}}


async def owned_pods(api: ApiClient, owner: str) -> list[dict[str, Any]]:
    pods = (await api.list(PODS, "default"))["items"]
    return [p for p in pods if any(ref["name"] == owner for ref in p["metadata"].get("ownerReferences") or [])]


def control_plane_connections(cluster: FakeCluster) -> int:
    assert cluster._site is not None
    return sum(h.piped for h in cluster._site._guard._open)


async def test_the_dra_loops_alone_run_a_claim_pod_and_leave_deployments_alone():
    async with FakeCluster(controllers=["resourceclaim-controller"]) as cluster, ApiClient(cluster.url) as api:
        # The scheduler, the claim controller and the kubelet watch 10 resources; all of them 23.
        assert control_plane_connections(cluster) <= 12
        await api.create(DEPLOYMENTS, "default", deployment("web"))
        await apply_manifest(api, "gpu-cluster.yaml")
        await add_gpu_node(api, "extra")
        await create(api, template_obj("tmpl"))
        await create(api, pod_obj("p", template="tmpl"))
        pod = await wait_running(api, "p")
        assert pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"].startswith("p-gpu-")
        assert (await api.list(REPLICASETS, "default"))["items"] == []


@pytest.mark.parametrize("layout", [True, "process"], ids=["in-process", "process"])
async def test_a_disabled_controller_is_skipped_while_the_rest_run(layout):
    async with FakeCluster(control_plane=layout, controllers="*,-deployment") as cluster, \
            ApiClient(cluster.url) as api:
        await api.create(DEPLOYMENTS, "default", deployment("web"))
        await api.create(REPLICASETS, "default", replica_set("direct"))
        # The ReplicaSet controller runs: the set gets its pods ...
        await wait_for(lambda: _has_pods(api, "direct", 2), 10, message="the ReplicaSet's pods")
        # ... while nobody made the Deployment a ReplicaSet of its own.
        sets = (await api.list(REPLICASETS, "default"))["items"]
        assert [s["metadata"]["name"] for s in sets] == ["direct"]


@pytest.mark.fakeapi(controllers=["resourceclaim-controller"])
async def test_the_pytest_marker_selects_controllers(fake_cluster: FakeCluster):
    assert control_plane_connections(fake_cluster) <= 12


async def _has_pods(api: ApiClient, owner: str, count: int) -> bool:
    return len(await owned_pods(api, owner)) == count


def test_unknown_controllers_are_refused_before_anything_starts():
    with pytest.raises(ValueError, match='"deploymnt" is not in the list of known controllers'):
        FakeCluster(controllers=["*", "-deploymnt"])
    run = subprocess.run([sys.executable, "-m", "fakeapi", "serve", "--controllers", "*,bogus"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert 'argument --controllers: "bogus" is not in the list of known controllers' in run.stderr
