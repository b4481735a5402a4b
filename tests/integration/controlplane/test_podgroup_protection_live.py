"""PodGroup protection: a deleted PodGroup lingers until its pods are terminal or gone."""

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import PODGROUPS, PODS
from fakeapi.scheduler.controllers.podgroup_protection import (
    PODGROUP_PROTECTION_FINALIZER,
    PodGroupProtectionController,
)
from fakeapi.scheduler.informers import InformerFactory

NS = "default"


@pytest.fixture
async def protection(api, run_loops):
    factory = InformerFactory(api)
    controller = PodGroupProtectionController(api, factory)
    async with run_loops(factory, controller):
        yield controller


def member(name, group="gang"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingGroup": {"podGroupName": group}, "containers": [{"name": "c", "image": "busybox"}]}}


def podgroup(name):
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingPolicy": {"basic": {}}}}


async def test_deleted_podgroup_waits_for_running_members(api, protection, fetch):
    created = await api.create(PODGROUPS, NS, podgroup("gang"))
    assert PODGROUP_PROTECTION_FINALIZER in created["metadata"]["finalizers"], "added by admission"
    await api.create(PODGROUPS, NS, podgroup("empty"))
    await api.create(PODS, NS, member("done"))
    await api.patch(PODS, NS, "done", {"status": {"phase": "Succeeded"}}, subresource="status")
    await api.create(PODS, NS, member("busy"))

    async def gone(name):
        return await fetch(api, PODGROUPS, NS, name) is None

    await api.delete(PODGROUPS, NS, "gang")
    await api.delete(PODGROUPS, NS, "empty")
    # The single worker takes keys in order: once "empty" is released, "gang" has been judged.
    await wait_for(lambda: gone("empty"), message="the empty PodGroup to be released")
    lingering = await fetch(api, PODGROUPS, NS, "gang")
    assert lingering is not None and lingering["metadata"].get("deletionTimestamp")

    await api.patch(PODS, NS, "busy", {"status": {"phase": "Failed"}}, subresource="status")
    await wait_for(lambda: gone("gang"), message="the PodGroup deletion to finish")
