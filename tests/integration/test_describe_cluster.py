"""describe_cluster, the cluster section of a failed test's report: its events' lines count the
repeats of core Events (``count``) and of events.k8s.io/v1 series (``series.count``)."""

from __future__ import annotations

from fakeapi.fixtures.helpers import describe_cluster
from fakeapi.scheduler.client import EVENTS, EVENTS_V1, PODS, ApiClient

from fakeapi.cluster import FakeCluster


async def test_event_lines_count_core_repeats_and_series() -> None:
    async with FakeCluster(control_plane=False) as cluster, ApiClient(cluster.url) as api:
        pod = await api.create(PODS, "default", {"metadata": {"name": "p"},
                                                 "spec": {"containers": [{"name": "c", "image": "i"}]}})
        ref = {"kind": "Pod", "apiVersion": "v1", "name": "p", "namespace": "default",
               "uid": pod["metadata"]["uid"]}
        await api.create(EVENTS, "default", {
            "metadata": {"name": "p.core"}, "involvedObject": ref, "type": "Warning", "reason": "BackOff",
            "message": "restarting", "count": 4, "source": {"component": "kubelet"}})
        await api.create(EVENTS_V1, "default", {
            "metadata": {"name": "p.v1"}, "regarding": ref, "type": "Warning", "reason": "FailedScheduling",
            "action": "Scheduling", "note": "0/1 nodes are available", "eventTime": "2026-12-03T10:00:00.000000Z",
            "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-h",
            "series": {"count": 3, "lastObservedTime": "2026-12-03T10:01:00.000000Z"}})
        await api.create(EVENTS, "default", {
            "metadata": {"name": "p.once"}, "involvedObject": ref, "type": "Normal", "reason": "Pulled",
            "message": "pulled"})
        text = describe_cluster(cluster.registry, "default")
    assert "Warning Pod/p BackOff: restarting (x4)" in text
    assert "Warning Pod/p FailedScheduling: 0/1 nodes are available (x3)" in text
    assert "Normal Pod/p Pulled: pulled\n" in text + "\n" and "pulled (x" not in text
