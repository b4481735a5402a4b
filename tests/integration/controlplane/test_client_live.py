"""ApiClient writes whose answer the caller does not read (``result=False``), against the real server."""

import pytest
from fakeapi.scheduler.client import EVENTS, PODS

from fakeapi.errors import AlreadyExists, Conflict


def _pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


async def test_create_without_result_writes_and_returns_none(api):
    assert await api.create(PODS, "default", _pod("unread"), result=False) is None
    stored = await api.get(PODS, "default", "unread")
    assert stored["spec"]["containers"][0]["image"] == "busybox"
    # The keyword changes nothing else: the default still returns the created object.
    assert (await api.create(PODS, "default", _pod("read")))["metadata"]["name"] == "read"


async def test_patch_without_result_writes_and_returns_none(api):
    created = await api.create(PODS, "default", _pod("p"))
    body = {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "status": {"phase": "Running"}}
    assert await api.patch(PODS, "default", "p", body, subresource="status", result=False) is None
    assert (await api.get(PODS, "default", "p"))["status"]["phase"] == "Running"


async def test_refused_write_without_result_still_raises_the_servers_status(api):
    await api.create(PODS, "default", _pod("taken"))
    with pytest.raises(AlreadyExists, match='pods "taken" already exists'):
        await api.create(PODS, "default", _pod("taken"), result=False)
    stale = {"metadata": {"resourceVersion": "1"}, "status": {"phase": "Running"}}
    with pytest.raises(Conflict, match="the object has been modified"):
        await api.patch(PODS, "default", "taken", stale, subresource="status", result=False)


async def test_unread_answers_leave_the_client_usable(api):
    for i in range(5):
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"e{i}"},
                 "involvedObject": {"kind": "Pod", "namespace": "default", "name": "x"}, "reason": "R"}
        await api.create(EVENTS, "default", event, result=False)
    listed = await api.list(EVENTS, "default")
    assert sorted(e["metadata"]["name"] for e in listed["items"]) == [f"e{i}" for i in range(5)]
