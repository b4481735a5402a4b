"""ApiClient.as_manager: a view of an open client whose creates, updates and patches name a field
manager (how the control plane's components write as kubelet, kube-scheduler and
kube-controller-manager over one connection pool and one User-Agent), checked against the
managedFields the server stores."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import CONTROL_PLANE_AGENT, GVR, ApiClient

from fakeapi.cluster import FakeCluster

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
