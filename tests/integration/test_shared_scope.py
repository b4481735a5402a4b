"""A test on a shared cluster (``--fakeapi-scope=module|session``): begin_test/end_test remove the
cluster-scoped objects it added, also of kinds a CRD created between tests serves; discovery is
read again only when the CRDs changed; the shared clusters start with the project's options."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeapi.fixtures.targets import ClusterPool, begin_test, end_test
from fakeapi.scheduler.client import GVR, NODES

from fakeapi.cluster import FakeCluster
from tests.crds import crontab, crontab_crd

CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions", False)
CLUSTER_CRONTABS = GVR("stable.example.com", "v1", "crontabs", False)


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


class DiscoveryReads:
    """Counts the requests for ``/apis`` (every discovery refresh starts with one)."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.count = 0
        api = cluster.api
        get_path = api.get_path

        async def counted(path: str):
            self.count += path == "/apis"
            return await get_path(path)

        api.get_path = counted  # type: ignore[method-assign]


@pytest.fixture
async def cluster():
    async with FakeCluster(control_plane=False) as c:
        yield c


async def test_cleanup_follows_a_crd_created_between_tests(cluster: FakeCluster, tmp_path: Path) -> None:
    reads = DiscoveryReads(cluster)
    first = await begin_test(cluster, "test_a", tmp_path)
    await cluster.api.create(NODES, None, node("left-by-a"))
    await end_test(first)
    assert await cluster.list("nodes") == [], "a node the test added is removed"
    second = await begin_test(cluster, "test_b", tmp_path)
    await end_test(second)
    assert reads.count == 1, "no CRD changed: discovery is read once, then reused"

    # A module fixture adds a cluster-scoped kind between tests; the next test leaves one object of it.
    await cluster.apply(crontab_crd(scope="Cluster"))
    await cluster.wait_for("customresourcedefinitions", "crontabs.stable.example.com", "condition=Established")
    third = await begin_test(cluster, "test_c", tmp_path)
    await cluster.api.create(CLUSTER_CRONTABS, None, crontab("left-by-c"))
    await end_test(third)
    assert (await cluster.api.list(CLUSTER_CRONTABS))["items"] == [], \
        "the object of the new kind is removed: discovery was read again after the CRD changed"
    assert [c["metadata"]["name"] for c in (await cluster.api.list(CRDS))["items"]] == \
        ["crontabs.stable.example.com"], "the CRD existed before the test and stays"


def test_a_pool_starts_its_fake_clusters_with_the_options_it_was_given():
    pool = ClusterPool(None, {"controllers": ["resourceclaim-controller"]})
    try:
        with_control_plane = pool.cluster(True)
        assert with_control_plane._control_plane.controllers == {"resourceclaim-controller"}
        assert pool.cluster(False)._control_plane is None
    finally:
        pool.close()
