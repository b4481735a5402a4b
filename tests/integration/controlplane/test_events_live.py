"""EventRecorder: fire-and-forget Events, repeats aggregated into one Event with a count."""

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import EVENTS, NODES, PODS
from fakeapi.scheduler.events import NORMAL, WARNING, EventRecorder


async def test_repeats_are_aggregated_and_distinct_reasons_are_not(api):
    p = await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                           "metadata": {"name": "p", "namespace": "default"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    recorder = EventRecorder(api, "test-component")
    try:
        for _ in range(3):
            recorder.event(p, WARNING, "Stuck", "still waiting")
        recorder.event(p, NORMAL, "Started", "go")

        async def written():
            items = (await api.list(EVENTS, "default"))["items"]
            counts = {e["reason"]: e["count"] for e in items}
            return counts == {"Stuck": 3, "Started": 1} and items

        events = await wait_for(written, message="two aggregated events")
        stuck = next(e for e in events if e["reason"] == "Stuck")
        assert stuck["type"] == WARNING
        assert stuck["source"] == {"component": "test-component"}
        assert stuck["involvedObject"]["uid"] == p["metadata"]["uid"]
        assert stuck["involvedObject"]["kind"] == "Pod"

        recorder.event(p, WARNING, "Stuck", "still waiting")

        async def bumped():
            items = (await api.list(EVENTS, "default"))["items"]
            return [e["count"] for e in items if e["reason"] == "Stuck"] == [4]

        await wait_for(bumped, message="the existing event's count to grow")
    finally:
        await recorder.close()


async def test_cluster_scoped_object_events_go_to_default_namespace(api):
    node = await api.create(NODES, None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    recorder = EventRecorder(api, "test-component")
    try:
        recorder.event(node, NORMAL, "Seen", "hello")

        async def written():
            return [e for e in (await api.list(EVENTS, "default"))["items"]
                    if e["involvedObject"]["name"] == "n1"]

        [event] = await wait_for(written, message="the node event")
        assert "namespace" not in event["involvedObject"]
    finally:
        await recorder.close()
