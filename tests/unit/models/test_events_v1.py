"""events.k8s.io/v1 Events are core Events: the conversion both ways (pkg/apis/events/v1/conversion.go)."""

from __future__ import annotations

from fakeapi.models.events_v1 import from_core, to_core

CORE = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "p"}, "message": "hello", "reportingComponent": "ctl",
        "source": {"component": "kubelet"}, "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:01:00Z", "count": 2, "reason": "Started", "type": "Normal",
        "eventTime": "2026-01-01T00:00:00.000001Z", "action": "Start", "reportingInstance": "ctl-1"}


def test_core_fields_take_their_events_v1_names() -> None:
    assert from_core(CORE) == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "Pod", "name": "p"}, "note": "hello", "reportingController": "ctl",
        "deprecatedSource": {"component": "kubelet"}, "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2026-01-01T00:01:00Z", "deprecatedCount": 2, "reason": "Started",
        "type": "Normal", "eventTime": "2026-01-01T00:00:00.000001Z", "action": "Start",
        "reportingInstance": "ctl-1"}


def test_the_conversion_round_trips() -> None:
    assert to_core(from_core(CORE)) == CORE


def test_value_structs_are_present_in_the_events_v1_shape() -> None:
    bare = from_core({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}})
    assert (bare["regarding"], bare["deprecatedSource"]) == ({}, {})
