"""ApiClient.as_manager: a view of an open client whose creates, updates and patches name a field
manager (how the control plane's components write as kubelet, kube-scheduler and
kube-controller-manager over one connection pool and one User-Agent), checked against the
managedFields the server stores; and the control plane's client asking for objects without them."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import CONTROL_PLANE_AGENT, GVR, ApiClient
from fakeapi.scheduler.controlplane import ControlPlane
from sched_helpers import apply_manifest, create, pod_obj, template_obj, wait_running

from fakeapi.cluster import FakeCluster
from fakeapi.machinery.managedfields import OMIT_MANAGED_FIELDS_HEADER
from tests.fault_proxy import FaultProxy

CONFIGMAPS = GVR("", "v1", "configmaps", True)


def _managers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]]


async def test_each_view_writes_as_its_manager_over_the_clients_connections() -> None:
    async with FakeCluster(control_plane=False) as cluster, ApiClient(cluster.url) as api:
        creator, updater = api.as_manager("kube-controller-manager"), api.as_manager("kubelet")
        assert creator.http is api.http and updater.http is api.http

        created = await creator.create(CONFIGMAPS, "default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
        assert _managers(created) == [("kube-controller-manager", "Update")]

        updated = await updater.update(CONFIGMAPS, "default", {**created, "data": {"a": "1", "b": "2"}})
        assert _managers(updated) == [("kube-controller-manager", "Update"), ("kubelet", "Update")]

        patched = await updater.patch(CONFIGMAPS, "default", "cm", {"data": {"c": "3"}}, field_manager="explicit")
        assert ("explicit", "Update") in _managers(patched)   # a call's own field manager wins

        plain = await api.patch(CONFIGMAPS, "default", "cm", {"data": {"d": "4"}})
        assert (CONTROL_PLANE_AGENT, "Update") in _managers(plain)   # the client itself: its User-Agent's


async def test_the_control_plane_reads_every_object_without_managed_fields() -> None:
    """Every request of the control plane (lists, watches, writes) carries the extension header,
    so the server sends it no managedFields, which its informers would drop anyway."""
    async with FakeCluster(control_plane=False) as cluster, FaultProxy(cluster.url) as proxy, \
            ControlPlane(proxy.url, sync_timeout=5.0), ApiClient(cluster.url) as api:
        await apply_manifest(api, "gpu-cluster.yaml")
        await create(api, template_obj("tmpl"))
        await create(api, pod_obj("p", template="tmpl"))
        await wait_running(api, "p")
    heads = list(proxy.heads)
    methods = {head.split(b" ", 1)[0] for head in heads}
    assert {b"GET", b"POST", b"PUT", b"PATCH"} <= methods
    header = f"\r\n{OMIT_MANAGED_FIELDS_HEADER}: true\r\n".encode()
    assert [head.split(b"\r\n", 1)[0] for head in heads if header not in head] == []
