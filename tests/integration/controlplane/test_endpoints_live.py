"""The endpoints and serviceaccounts controllers and the kubelet's node leases, pod IPs and debug
containers, against a real API server over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import NAMESPACES, NODES, PODS, ApiClient
from fakeapi.scheduler.clock import ManualClock
from fakeapi.scheduler.controllers.endpoints import ENDPOINT_SLICES, ENDPOINTS, SERVICES, EndpointsController
from fakeapi.scheduler.controllers.serviceaccounts import SERVICE_ACCOUNTS, ServiceAccountsController
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.kubelet import Kubelet
from fakeapi.scheduler.nodelease import LEASES, NODE_LEASE_NAMESPACE, NodeLeases

from fakeapi.cluster import FakeCluster


def pod(name: str, labels: dict[str, str], node: str = "n1") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                                                       "ports": [{"name": "web", "containerPort": 8080}]}]}}


SERVICE = {"metadata": {"name": "web", "labels": {"team": "a"}},
           "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "web"}]}}


async def slices_of(api: ApiClient, service: str) -> list[dict[str, Any]]:
    listed = await api.list(ENDPOINT_SLICES, "default", label_selector=f"kubernetes.io/service-name={service}")
    return listed["items"]


async def test_slices_and_endpoints_follow_the_selected_pods(api: ApiClient, run_loops: Callable[..., Any]) -> None:
    factory = InformerFactory(api)
    controller = EndpointsController(api, factory)
    kubelet = Kubelet(api, factory, EventRecorder(api, "kubelet"))
    async with run_loops(factory, controller, kubelet):
        await api.create(SERVICES, "default", SERVICE)
        await api.create(PODS, "default", pod("a", {"app": "web"}))
        await api.create(PODS, "default", pod("b", {"app": "web"}))
        await api.create(PODS, "default", pod("other", {"app": "db"}))

        async def two_ready() -> list[dict[str, Any]] | None:
            slices = await slices_of(api, "web")
            endpoints = [e for s in slices for e in s["endpoints"] if e["conditions"]["ready"]]
            return slices if len(endpoints) == 2 else None

        (eps,) = await wait_for(two_ready, message="both pods in the slice")
        assert eps["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
        assert sorted(e["targetRef"]["name"] for e in eps["endpoints"]) == ["a", "b"]
        addresses = sorted(e["addresses"][0] for e in eps["endpoints"])
        assert len(set(addresses)) == 2 and all(a.startswith("10.244.") for a in addresses)
        assert eps["metadata"]["ownerReferences"][0]["kind"] == "Service"

        # A pod whose labels no longer match leaves; the Endpoints object follows too.
        await api.patch(PODS, "default", "b", {"metadata": {"labels": {"app": "gone"}}})

        async def only_a() -> dict[str, Any] | None:
            endpoints = await api.get(ENDPOINTS, "default", "web")
            subsets = endpoints.get("subsets") or []
            names = [a["targetRef"]["name"] for s in subsets for a in s.get("addresses") or []]
            return endpoints if names == ["a"] else None

        endpoints = await wait_for(only_a, message="pod b to leave the endpoints")
        assert endpoints["subsets"][0]["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
        assert [e["targetRef"]["name"] for s in await slices_of(api, "web") for e in s["endpoints"]] == ["a"]

        # The Service goes: its Endpoints go with it (the slices through the garbage collector).
        await api.delete(SERVICES, "default", "web")

        async def endpoints_gone() -> bool:
            return not (await api.list(ENDPOINTS, "default"))["items"]

        await wait_for(endpoints_gone, message="the endpoints to be deleted")


async def test_node_leases_are_created_and_renewed_on_the_clock(cluster: FakeCluster, api: ApiClient,
                                                               run_loops: Callable[..., Any]) -> None:
    clock = ManualClock()
    factory = InformerFactory(api)
    leases = NodeLeases(api, factory, clock=clock)
    await api.create(NODES, None, {"metadata": {"name": "n1"}})
    async with run_loops(factory, leases):
        async def lease() -> dict[str, Any] | None:
            found = (await api.list(LEASES, NODE_LEASE_NAMESPACE))["items"]
            return found[0] if found else None

        first = await wait_for(lease, message="the node lease")
        node = await api.get(NODES, None, "n1")
        assert first["spec"]["holderIdentity"] == "n1" and first["spec"]["leaseDurationSeconds"] == 40
        assert first["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]

        await clock.advance(10)

        async def renewed() -> dict[str, Any] | None:
            current = await lease()
            return current if current and current["spec"]["renewTime"] > first["spec"]["renewTime"] else None

        await wait_for(renewed, message="the lease to be renewed")


async def test_node_lease_renewals_write_the_last_lease_and_recover_from_a_conflict(
        api: ApiClient, run_loops: Callable[..., Any], monkeypatch: Any) -> None:
    """As upstream's lease controller: a renewal is one PUT of the lease it last wrote; a write by
    someone else (a conflict) makes it read the lease and try again at once."""
    clock = ManualClock()
    factory = InformerFactory(api)
    leases = NodeLeases(api, factory, clock=clock)
    reads: list[str] = []
    get = api.get

    async def counting_get(gvr: Any, namespace: str | None, name: str) -> dict:
        if gvr == LEASES:
            reads.append(name)
        return await get(gvr, namespace, name)

    monkeypatch.setattr(api, "get", counting_get)
    await api.create(NODES, None, {"metadata": {"name": "n1"}})
    async with run_loops(factory, leases):
        async def renewed_after(stamp: str) -> dict[str, Any] | None:
            current = (await api.list(LEASES, NODE_LEASE_NAMESPACE))["items"]
            return current[0] if current and current[0]["spec"]["renewTime"] > stamp else None

        lease = await wait_for(lambda: renewed_after(""), message="the node lease")
        reads.clear()
        for _ in range(3):
            await clock.advance(10)
            lease = await wait_for(lambda stamp=lease["spec"]["renewTime"]: renewed_after(stamp),
                                   message="the lease to be renewed")
        assert reads == []  # renewals wrote the cached lease: no reads

        lease["metadata"]["labels"] = {"touched": "by-someone-else"}
        theirs = await api.update(LEASES, NODE_LEASE_NAMESPACE, lease)
        await clock.advance(10)
        lease = await wait_for(lambda: renewed_after(theirs["spec"]["renewTime"]),
                               message="the lease to be renewed after someone else wrote it")
        assert reads == ["n1"]  # the conflict made it read the lease once
        assert lease["metadata"]["labels"] == {"touched": "by-someone-else"}


async def test_debug_containers_are_reported_running(api: ApiClient, run_loops: Callable[..., Any]) -> None:
    factory = InformerFactory(api)
    kubelet = Kubelet(api, factory, EventRecorder(api, "kubelet"))
    async with run_loops(factory, kubelet):
        await api.create(PODS, "default", pod("a", {"app": "web"}))

        async def status(key: str) -> list[dict[str, Any]] | None:
            return ((await api.get(PODS, "default", "a")).get("status") or {}).get(key)

        await wait_for(lambda: status("containerStatuses"), message="the pod to run")
        await api.patch(PODS, "default", "a", {"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}},
                        subresource="ephemeralcontainers")

        (debug,) = await wait_for(lambda: status("ephemeralContainerStatuses"), message="the debug container")
        assert debug["name"] == "dbg" and "running" in debug["state"] and debug["ready"] is False


async def test_every_namespace_gets_a_default_service_account(api: ApiClient, run_loops: Callable[..., Any]) -> None:
    factory = InformerFactory(api)
    async with run_loops(factory, ServiceAccountsController(api, factory)):
        await api.create(NAMESPACES, None, {"metadata": {"name": "team"}})

        async def default_account() -> dict[str, Any] | None:
            items = (await api.list(SERVICE_ACCOUNTS, "team"))["items"]
            return next((a for a in items if a["metadata"]["name"] == "default"), None)

        first = await wait_for(default_account, message="the default service account")
        await api.delete(SERVICE_ACCOUNTS, "team", "default")

        async def recreated() -> dict[str, Any] | None:
            account = await default_account()
            return account if account and account["metadata"]["uid"] != first["metadata"]["uid"] else None

        await wait_for(recreated, message="the default service account to come back")
        # The namespaces a cluster starts with have theirs too.
        assert [a["metadata"]["name"] for a in (await api.list(SERVICE_ACCOUNTS, "kube-system"))["items"]] == [
            "default"]
