"""The in-process control plane opens a resource's watch with its first object, and starts the
workload, serviceaccount and aggregation loops with theirs: a cluster that never sees a pod,
Deployment, Job, Service or new namespace pays no watch for them, and one that does gets them
reconciled as if everything had run all along (the server's ``StorePresence`` tells which objects
exist and which changed since its bootstrap)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import GVR, NAMESPACES, PODS

from fakeapi.cluster import FakeCluster
from fakeapi.presence import StorePresence

DEPLOYMENTS = GVR("apps", "v1", "deployments", True)
REPLICASETS = GVR("apps", "v1", "replicasets", True)
SERVICES = GVR("", "v1", "services", True)
ENDPOINT_SLICES = GVR("discovery.k8s.io", "v1", "endpointslices", True)
SERVICE_ACCOUNTS = GVR("", "v1", "serviceaccounts", True)


def deployment(name: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def watched(cluster: FakeCluster, group: str, plural: str) -> bool:
    rt = cluster.registry.kinds.by_plural(group, plural)
    assert rt is not None
    return cluster.registry.store.hub.watching(rt.storage_key)


async def test_workload_loops_wait_for_their_first_object() -> None:
    async with FakeCluster() as cluster:
        api = cluster.api
        # Nothing is watched before the test makes something: every informer waits for its
        # resource's first object, the loops of TRIGGERS for theirs.
        assert not any(watched(cluster, *r) for r in (
            ("", "pods"), ("", "nodes"), ("resource.k8s.io", "resourceclaims"), ("apps", "deployments"),
            ("apps", "replicasets"), ("batch", "jobs"), ("", "services"), ("", "namespaces"),
            ("rbac.authorization.k8s.io", "clusterroles")))
        await api.create(DEPLOYMENTS, "default", deployment("web"))

        async def two_pods() -> list[dict[str, Any]] | None:
            pods = (await api.list(PODS, "default", label_selector="app=web"))["items"]
            return pods if len(pods) == 2 else None

        await wait_for(two_pods, message="the deployment's two pods")
        assert all(watched(cluster, *r) for r in (("apps", "deployments"), ("apps", "replicasets"), ("", "pods")))
        assert not watched(cluster, "batch", "jobs") and not watched(cluster, "", "nodes")
        # The API server's own Service started nothing; a Service of the test's does.
        assert not watched(cluster, "", "services")
        await api.create(SERVICES, "default", {"metadata": {"name": "web"},
                                               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})

        async def sliced() -> list[dict[str, Any]] | None:
            items = (await api.list(ENDPOINT_SLICES, "default", label_selector="kubernetes.io/service-name=web"))
            return items["items"] or None

        await wait_for(sliced, message="the Service's EndpointSlice")


async def test_objects_made_while_paused_start_their_loops_with_the_control_plane() -> None:
    async with FakeCluster() as cluster:
        await cluster.pause_control_plane()
        await cluster.api.create(DEPLOYMENTS, "default", deployment("early", replicas=1))
        await cluster.resume_control_plane()
        # Present at start: built and synced before resume returns, as every other loop.
        assert watched(cluster, "apps", "deployments")
        await cluster.settle()
        sets = (await cluster.api.list(REPLICASETS, "default"))["items"]
        assert [s["metadata"]["ownerReferences"][0]["name"] for s in sets] == ["early"]


async def test_a_loop_starting_as_the_cluster_stops_leaves_nothing_behind() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with FakeCluster() as cluster:
            await cluster.api.create(DEPLOYMENTS, "default", deployment("late"))
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
    assert [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_service_accounts_exist_at_once_and_follow_new_namespaces() -> None:
    # The bootstrap namespaces' accounts are there on entry; the serviceaccount loop, started by
    # the first namespace change, makes a new namespace's and brings back a deleted one.
    async with FakeCluster() as cluster:
        api = cluster.api
        for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
            assert (await api.get(SERVICE_ACCOUNTS, namespace, "default"))["metadata"]["name"] == "default"
        assert not watched(cluster, "", "serviceaccounts")
        await api.create(NAMESPACES, None, {"metadata": {"name": "team"}})
        await wait_for(lambda: api.list(SERVICE_ACCOUNTS, "team"), message="team's default account")
        await api.delete(SERVICE_ACCOUNTS, "default", "default")

        async def back() -> bool:
            accounts = (await api.list(SERVICE_ACCOUNTS, "default"))["items"]
            return any(a["metadata"]["name"] == "default" for a in accounts)

        await wait_for(back, message="default/default again")


async def test_a_default_account_deleted_while_paused_is_back_on_resume() -> None:
    async with FakeCluster() as cluster:
        await cluster.pause_control_plane()
        await cluster.api.delete(SERVICE_ACCOUNTS, "kube-public", "default")
        await cluster.resume_control_plane()
        assert (await cluster.api.get(SERVICE_ACCOUNTS, "kube-public", "default"))["metadata"]["name"] == "default"


async def test_presence_counts_what_changed_after_the_bootstrap() -> None:
    async with FakeCluster(control_plane=False) as cluster:
        presence = StorePresence(cluster.registry)
        calls: list[str] = []
        # Objects that exist, bootstrap included; a resource the server does not serve "exists"
        # (its watch will say what it is).
        assert presence.exists(("", "v1", "namespaces")) and not presence.exists(("", "v1", "pods"))
        assert presence.exists(("example.com", "v1", "widgets"))
        # The bootstrap's namespaces, Service and roles are the starting point of what changed.
        assert not presence.present([("", "v1", "services"), ("", "v1", "namespaces"),
                                     ("rbac.authorization.k8s.io", "v1", "clusterroles")])
        cancel = presence.when_present([("", "v1", "services")], lambda: calls.append("cancelled"))
        presence.when_present([("", "v1", "services"), ("apps", "v1", "deployments")], lambda: calls.append("services"))
        cancel()
        await cluster.api.create(DEPLOYMENTS, "default", deployment("d"))
        await cluster.api.create(SERVICES, "default", {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}})
        assert calls == ["services"]  # once, for the first commit of either resource
        assert presence.present([("", "v1", "services")]) and presence.present([("apps", "v1", "deployments")])
        assert not presence.present([("batch", "v1", "jobs")])
        # A change to a bootstrap object counts too.
        presence.when_present([("", "v1", "namespaces")], lambda: calls.append("namespaces"))
        await cluster.api.patch(NAMESPACES, None, "kube-public", {"metadata": {"labels": {"team": "a"}}})
        assert calls == ["services", "namespaces"] and presence.present([("", "v1", "namespaces")])
