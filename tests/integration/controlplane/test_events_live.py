"""EventRecorder: fire-and-forget Events, repeats aggregated into one Event with a count, or
(kube-scheduler's) events.k8s.io/v1 Events with a series."""

import re
import socket

import pytest
from fakeapi.fixtures import wait_for
from fakeapi.scheduler import events
from fakeapi.scheduler.client import EVENTS, EVENTS_V1, NODES, PODS
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
        # tools/record: the reporting controller is the source's component, the instance its host (none).
        assert stuck["reportingComponent"] == "test-component" and "reportingInstance" not in stuck
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


@pytest.fixture
async def failing(api):
    """A scheduler-like series recorder and ``record()``, one more FailedScheduling of one pod."""
    p = await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                           "metadata": {"name": "p", "namespace": "default"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    recorder = EventRecorder(api, "default-scheduler", series=True)
    try:
        yield recorder, lambda: recorder.event(p, WARNING, "FailedScheduling", "0/1 nodes are available",
                                               action="Scheduling")
    finally:
        await recorder.close()


async def _counts(api, reason="FailedScheduling"):
    """The occurrences of each events.k8s.io/v1 Event with ``reason``: its series' count, else 1."""
    return sorted((e.get("series") or {}).get("count", 1) for e in (await api.list(EVENTS_V1, "default"))["items"]
                  if e["reason"] == reason)


async def _wait_counts(api, counts, message):
    async def written():
        return await _counts(api) == counts

    await wait_for(written, message=message)


async def test_series_writes_the_event_and_its_series_once(api, failing):
    # client-go's events.k8s.io broadcaster (kube-scheduler's): repeats beyond the second only
    # grow the count in memory until the series is refreshed (30 min) or finishes (6 min idle).
    recorder, record = failing
    for _ in range(5):
        record()
    pod = await api.get(PODS, "default", "p")
    recorder.event(pod, WARNING, "Other", "after the series", action="Waiting")
    await wait_for(lambda: _counts(api, "Other"), message="the event written after the series")
    assert await _counts(api) == [2]
    [event] = [e for e in (await api.list(EVENTS_V1, "default"))["items"] if e["reason"] == "FailedScheduling"]
    assert event["action"] == "Scheduling" and event["type"] == WARNING
    assert event["note"] == "0/1 nodes are available"
    assert event["reportingController"] == "default-scheduler"
    assert event["reportingInstance"] == f"default-scheduler-{socket.gethostname()}"
    assert event["regarding"]["uid"] == pod["metadata"]["uid"] and event["regarding"]["kind"] == "Pod"
    micro = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
    assert re.fullmatch(micro, event["eventTime"]) and re.fullmatch(micro, event["series"]["lastObservedTime"])
    assert event["eventTime"] <= event["series"]["lastObservedTime"]
    # The same Event read as core/v1, as kubectl describe reads it: no deprecated fields set.
    core = await api.get(EVENTS, "default", event["metadata"]["name"])
    assert core["involvedObject"] == event["regarding"] and core["message"] == event["note"]
    assert core["reportingComponent"] == "default-scheduler" and core["series"]["count"] == 2
    assert not core.get("count") and not core.get("firstTimestamp") and not core["source"]


async def test_a_series_is_one_object_version_and_action_whatever_the_note(api, failing):
    # tools/events' getKey: another note joins the series (the Event keeps the first note);
    # a newer resourceVersion of the object, or another action, starts an Event of its own.
    recorder, record = failing
    record()
    pod = await api.get(PODS, "default", "p")
    recorder.event(pod, WARNING, "FailedScheduling", "0/2 nodes are available", action="Scheduling")
    await _wait_counts(api, [2], "one series for both notes")
    [event] = await _v1_events(api)
    assert event["note"] == "0/1 nodes are available"
    newer = await api.patch(PODS, "default", "p", {"metadata": {"labels": {"changed": "yes"}}})
    recorder.event(newer, WARNING, "FailedScheduling", "0/1 nodes are available", action="Scheduling")
    recorder.event(newer, WARNING, "FailedScheduling", "0/1 nodes are available", action="Retrying")
    await _wait_counts(api, [1, 1, 2], "an Event for the newer version and one for the other action")
    assert {e["regarding"]["resourceVersion"] for e in await _v1_events(api)} == {
        pod["metadata"]["resourceVersion"], newer["metadata"]["resourceVersion"]}


async def test_series_notes_are_cut_to_the_events_limit():
    assert events.truncated_note("x" * 1024) == "x" * 1024
    assert events.truncated_note("x" * 1025) == "x" * 1020 + " ..."
    assert len(events.truncated_note("y" * 5000)) == events.NOTE_LIMIT


async def test_a_series_whose_event_was_deleted_is_written_afresh(api, failing):
    _, record = failing
    record()
    [first] = await wait_for(lambda: _v1_events(api), message="the first Event")
    await api.delete(EVENTS_V1, "default", first["metadata"]["name"])
    record()

    async def recreated():
        items = await _v1_events(api)
        return [e for e in items if (e.get("series") or {}).get("count") == 2]

    [again] = await wait_for(recreated, message="the Event created again with its series")
    assert again["metadata"]["name"] != first["metadata"]["name"] and again["eventTime"] == first["eventTime"]


async def _v1_events(api):
    return (await api.list(EVENTS_V1, "default"))["items"]


async def test_finished_series_writes_its_final_count_and_starts_afresh(api, failing, monkeypatch):
    monkeypatch.setattr(events, "SERIES_FINISH_SECONDS", 0.05)
    _, record = failing
    for _ in range(4):
        record()
    await _wait_counts(api, [4], "the finished series' final count")
    record()
    await _wait_counts(api, [1, 4], "a new Event after the series finished")


async def test_series_count_is_refreshed_at_a_repeat_once_due(api, failing, monkeypatch):
    monkeypatch.setattr(events, "SERIES_REFRESH_SECONDS", 0.0)
    _, record = failing
    for expected in (1, 2, 3):
        record()
        await _wait_counts(api, [expected], f"count {expected}")


async def test_a_recorder_starts_its_writer_at_its_first_event_and_none_once_closed(api):
    import asyncio

    def writers(component):
        return [t for t in asyncio.all_tasks() if t.get_name() == f"events-{component}" and not t.done()]

    p = await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                           "metadata": {"name": "first", "namespace": "default"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    idle = EventRecorder(api, "idle-component")
    await idle.close()  # never recorded anything
    idle.event(p, NORMAL, "Late", "after close")
    assert writers("idle-component") == []
    busy = EventRecorder(api, "busy-component")
    assert writers("busy-component") == []
    busy.event(p, NORMAL, "Started", "go")
    assert len(writers("busy-component")) == 1
    await wait_for(lambda: _reasons(api), message="the event written")
    await busy.close()
    assert writers("busy-component") == []
    assert await _reasons(api) == ["Started"]


async def _reasons(api):
    return [e["reason"] for e in (await api.list(EVENTS, "default"))["items"]]


async def _pod(api, name="p"):
    return await api.create(PODS, "default", {"apiVersion": "v1", "kind": "Pod",
                                              "metadata": {"name": name, "namespace": "default"},
                                              "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


async def test_ten_similar_events_go_on_in_one_combined_event(api):
    # client-go's EventAggregator: the tenth different message of one object's type and reason
    # within ten minutes, and each new one after it, joins one "(combined from similar events)" Event.
    p = await _pod(api)
    recorder = EventRecorder(api, "test-component")
    try:
        for i in range(12):
            recorder.event(p, WARNING, "FailedMount", f"volume {i} not ready")

        async def written():
            items = [e for e in (await api.list(EVENTS, "default"))["items"] if e["reason"] == "FailedMount"]
            combined = [e for e in items if e["message"].startswith("(combined")]
            return len(items) == 10 and combined and combined[0]["count"] == 3 and items

        items = await wait_for(written, message="nine events and one combined")
        assert sorted(e["message"] for e in items if not e["message"].startswith("(combined")) == sorted(
            f"volume {i} not ready" for i in range(9))
        [combined] = [e for e in items if e["message"].startswith("(combined")]
        assert combined["message"] == "(combined from similar events): volume 11 not ready"
    finally:
        await recorder.close()


async def test_an_object_gets_25_events_at_once_then_one_every_five_minutes(api, monkeypatch):
    # client-go's EventSourceObjectSpamFilter: a token bucket per source and object.
    p, other = await _pod(api), await _pod(api, "other")
    recorder = EventRecorder(api, "test-component")
    clock = [1000.0]
    monkeypatch.setattr(events, "monotonic", lambda: clock[0])
    try:
        for i in range(30):
            recorder.event(p, NORMAL, f"Reason{i}", "m")
        recorder.event(other, NORMAL, "Reason0", "m")  # another object has its own bucket

        async def reasons_of(name):
            return {e["reason"] for e in (await api.list(EVENTS, "default"))["items"]
                    if e["involvedObject"]["name"] == name}

        await wait_for(lambda: _has(reasons_of("other"), {"Reason0"}), message="the other pod's event")
        assert await reasons_of("p") == {f"Reason{i}" for i in range(25)}
        clock[0] += events.SPAM_REFILL_SECONDS  # one more token
        recorder.event(p, NORMAL, "Reason29", "m")
        recorder.event(p, NORMAL, "Reason28", "m")
        await wait_for(lambda: _has(reasons_of("p"), {"Reason29"}), message="one event after five minutes")
        assert "Reason28" not in await reasons_of("p")
    finally:
        await recorder.close()


async def _has(reasons, wanted):
    return wanted <= await reasons
