"""Informer over a scripted API: streaming list (or list), watch, resume from the last RV, re-list
with a diff on 410."""

import asyncio

import pytest
from fakeapi.scheduler.client import PODS
from fakeapi.scheduler.informers import Informer, reflector

from fakeapi.errors import Expired, Invalid

DEADLINE = 2.0


def pod(name, rv, node=""):
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}, "spec": {"nodeName": node}}


def event(type_, obj):
    return {"type": type_, "object": obj}


def end_of_initial_events(rv):
    return event("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": rv,
                                                          "annotations": {"k8s.io/initial-events-end": "true"}}})


# What a server without streaming lists answers (upstream's 422 when the WatchList gate is off).
REFUSED = Invalid("sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")


class ScriptedApi:
    """Answers list/watch calls from a script; each watch step is a list of events or an exception.

    Streaming lists (``send_initial_events``) take their steps from ``watch_lists``; when none is
    left they are refused, as by a server without them, and the informer LISTs instead."""

    def __init__(self, lists, watches, watch_lists=()):
        self.lists = list(lists)
        self.watches = list(watches)
        self.watch_lists = list(watch_lists)
        self.watch_rvs = []
        self.watch_timeouts = []
        self.calls = []
        self.exhausted = asyncio.Event()

    async def list(self, gvr, namespace=None, **kwargs):
        self.calls.append("list")
        items, rv = self.lists.pop(0)
        return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": items}

    async def watch(self, gvr, namespace=None, *, resource_version, send_initial_events=False, **kwargs):
        self.watch_timeouts.append(kwargs["timeout_seconds"])
        if send_initial_events:
            self.calls.append("watch-list")
            if not self.watch_lists:
                raise REFUSED
            step = self.watch_lists.pop(0)
        else:
            self.calls.append("watch")
            self.watch_rvs.append(resource_version)
            if not self.watches:
                self.exhausted.set()
                await asyncio.Event().wait()  # a quiet, never-ending watch
            step = self.watches.pop(0)
        for item in step[:-1] if isinstance(step[-1], Exception) else step:
            yield item
        if step and isinstance(step[-1], Exception):
            raise step[-1]


class Recorder:
    def __init__(self):
        self.seen = []
        self.objects = []  # what the handlers were given

    def add(self, obj):
        self.seen.append(("add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))
        self.objects.append(obj)

    def update(self, old, new):
        self.seen.append(("update", new["metadata"]["name"], new["metadata"]["resourceVersion"]))
        self.objects.append(new)

    def delete(self, obj):
        self.seen.append(("delete", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))
        self.objects.append(obj)


async def run_until_exhausted(api):
    informer = Informer(api, PODS)
    informer.add_index("node", lambda o: [o["spec"]["nodeName"]])
    rec = Recorder()
    informer.add_event_handler(rec.add, rec.update, rec.delete)
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(api.exhausted.wait(), DEADLINE)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    return informer, rec


async def test_list_watch_resume_and_bookmark():
    api = ScriptedApi(
        lists=[([pod("a", "1")], "10")],
        watches=[
            [event("ADDED", pod("b", "11")), ConnectionResetError("connection reset")],
            [event("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "15"}})],
            [event("MODIFIED", pod("a", "16", node="n1")), event("DELETED", pod("b", "17"))],
        ],
    )
    informer, rec = await run_until_exhausted(api)
    assert rec.seen == [("add", "a", "1"), ("add", "b", "11"), ("update", "a", "16"), ("delete", "b", "17")]
    assert api.watch_rvs == ["10", "11", "15", "17"], "each watch resumes from the last seen RV"
    assert informer.has_synced
    assert [o["metadata"]["name"] for o in informer.lister.by_index("node", "n1")] == ["a"]


async def test_expired_watch_relists_and_diffs():
    api = ScriptedApi(
        lists=[([pod("a", "1"), pod("b", "2"), pod("c", "3")], "10"),
               ([pod("a", "1"), pod("b", "20"), pod("d", "21")], "30")],
        watches=[[Expired("too old resource version: 10 (25)")]],
    )
    informer, rec = await run_until_exhausted(api)
    assert rec.seen[3:] == [("delete", "c", "3"), ("update", "b", "20"), ("add", "d", "21")], \
        "unchanged objects are not reported again"
    assert api.watch_rvs == ["10", "30"]
    assert sorted(o["metadata"]["name"] for o in informer.lister.list()) == ["a", "b", "d"]


async def test_late_handler_gets_existing_objects():
    api = ScriptedApi(lists=[([pod("a", "1")], "10")], watches=[])
    informer, _ = await run_until_exhausted(api)
    late = Recorder()
    informer.add_event_handler(on_add=late.add)
    assert late.seen == [("add", "a", "1")]
    assert informer.lister.get("ns", "a")["kind"] == "Pod", "listed items get their kind stamped"


async def test_failing_handler_does_not_stop_others():
    api = ScriptedApi(lists=[([pod("a", "1")], "10")], watches=[])
    informer = Informer(api, PODS)
    rec = Recorder()

    def broken(obj):
        raise RuntimeError("boom")

    informer.add_event_handler(on_add=broken)
    informer.add_event_handler(on_add=rec.add)
    task = asyncio.create_task(informer.run())
    await asyncio.wait_for(api.exhausted.wait(), DEADLINE)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert rec.seen == [("add", "a", "1")]


async def test_streaming_list_syncs_and_goes_on_live():
    api = ScriptedApi(
        lists=[],
        watch_lists=[[event("ADDED", pod("a", "1")), event("ADDED", pod("b", "2")), end_of_initial_events("10"),
                      event("MODIFIED", pod("a", "11", node="n1"))]],
        watches=[[event("DELETED", pod("b", "12"))]],
    )
    informer, rec = await run_until_exhausted(api)
    assert rec.seen == [("add", "a", "1"), ("add", "b", "2"), ("update", "a", "11"), ("delete", "b", "12")]
    assert api.calls == ["watch-list", "watch", "watch"], "one request syncs: no LIST"
    assert api.watch_rvs == ["11", "12"], "the next watch resumes after the last event of the stream"
    assert [o["metadata"]["name"] for o in informer.lister.by_index("node", "n1")] == ["a"]


async def test_nothing_is_reported_before_the_initial_events_end():
    api = ScriptedApi(lists=[], watches=[],
                      watch_lists=[[event("ADDED", pod("a", "1")), event("ADDED", pod("gone", "2")),
                                    event("DELETED", pod("gone", "3")), end_of_initial_events("10")]])
    informer, rec = await run_until_exhausted(api)
    assert rec.seen == [("add", "a", "1")], "the state at the bookmark, as one list would give it"
    assert informer.has_synced


async def test_streaming_list_cut_short_falls_back_to_list():
    api = ScriptedApi(
        lists=[([pod("a", "1")], "10")],
        watch_lists=[[event("ADDED", pod("a", "1"))]],   # ends without the bookmark
        watches=[],
    )
    informer, rec = await run_until_exhausted(api)
    assert api.calls == ["watch-list", "list", "watch"]
    assert rec.seen == [("add", "a", "1")]
    assert informer.has_synced and api.watch_rvs == ["10"]


async def test_expired_watch_resyncs_through_a_streaming_list():
    api = ScriptedApi(
        lists=[],
        watch_lists=[[event("ADDED", pod("a", "1")), event("ADDED", pod("b", "2")), end_of_initial_events("10"),
                      Expired("too old resource version: 10 (25)")],
                     [event("ADDED", pod("a", "1")), event("ADDED", pod("c", "26")), end_of_initial_events("30")]],
        watches=[],
    )
    informer, rec = await run_until_exhausted(api)
    assert rec.seen == [("add", "a", "1"), ("add", "b", "2"), ("delete", "b", "2"), ("add", "c", "26")]
    assert sorted(o["metadata"]["name"] for o in informer.lister.list()) == ["a", "c"]
    assert api.calls == ["watch-list", "watch-list", "watch"]
    assert api.watch_rvs == ["30"]


def managed(obj):
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1",
                                         "fieldsV1": {"f:spec": {}}}]
    return obj


@pytest.mark.parametrize("streaming", [False, True], ids=["list", "streaming-list"])
async def test_cached_objects_and_handlers_carry_no_managed_fields(streaming):
    """As kube-scheduler's and kube-controller-manager's informers trim them."""
    initial = [managed(pod("a", "1"))]
    api = ScriptedApi(lists=[] if streaming else [(initial, "10")],
                      watch_lists=[[event("ADDED", initial[0]), end_of_initial_events("10")]] if streaming else [],
                      watches=[[event("MODIFIED", managed(pod("a", "11", node="n1"))),
                                event("ADDED", managed(pod("b", "12")))]])
    informer, rec = await run_until_exhausted(api)
    assert rec.seen == [("add", "a", "1"), ("update", "a", "11"), ("add", "b", "12")]
    for obj in [*rec.objects, *informer.lister.list()]:
        assert "managedFields" not in obj["metadata"]


def test_each_kind_of_change_reaches_its_handlers_in_registration_order():
    informer = Informer(ScriptedApi(lists=[], watches=[]), PODS)
    calls = []
    informer.add_event_handler(on_update=lambda old, new: calls.append(("first", "update")))
    informer.add_event_handler(on_add=lambda obj: calls.append(("second", "add")),
                               on_update=lambda old, new: calls.append(("second", "update")),
                               on_delete=lambda obj: calls.append(("second", "delete")))
    informer.add_event_handler(on_delete=lambda obj: calls.append(("third", "delete")))
    informer.apply("ADDED", pod("a", "1"))
    informer.apply("MODIFIED", pod("a", "2"))
    informer.apply("DELETED", pod("a", "3"))
    assert calls == [("second", "add"), ("first", "update"), ("second", "update"),
                     ("second", "delete"), ("third", "delete")]


@pytest.mark.parametrize(("draw", "timeout"), [(0.0, 300), (0.5, 450), (0.9999999, 599)],
                         ids=["lowest", "middle", "highest"])
async def test_each_watch_asks_a_random_timeout_of_five_to_ten_minutes(monkeypatch, draw, timeout):
    """As client-go's reflector: timeoutSeconds uniform in [minWatchTimeout, 2 * minWatchTimeout)."""
    monkeypatch.setattr(reflector.random, "random", lambda: draw)
    api = ScriptedApi(lists=[], watches=[],
                      watch_lists=[[event("ADDED", pod("a", "1")), end_of_initial_events("10")]])
    await run_until_exhausted(api)
    assert api.watch_timeouts[:2] == [timeout, timeout]
