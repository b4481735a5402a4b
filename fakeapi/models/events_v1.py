"""``events.k8s.io/v1`` Event: the same stored objects as core ``v1`` Events, in the newer shape
(``regarding``, ``note``, ``reportingController``; the core-only fields as ``deprecated*``)."""

from typing import Any, ClassVar

from fakeapi.models.base import VALUE_STRUCT, Int32, KubeModel, MicroTime, Time, TopLevel, opt, req
from fakeapi.models.core_v1 import EventSource, ObjectReference
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.events.v1"


class EventSeries(KubeModel):
    """A series of repeated events."""

    count: Int32 = req("Occurrences so far (at least 2).")
    last_observed_time: MicroTime = req("Time of the last occurrence.")


class Event(TopLevel):
    """A report of something that happened to an object."""

    gvk: ClassVar[tuple[str, str, str]] = ("events.k8s.io", "v1", "Event")
    api_version: str | None = opt("events.k8s.io/v1")
    kind: str | None = opt("Event")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    event_time: MicroTime | None = opt("When the event was first observed; required.")
    series: EventSeries | None = opt("Series data for repeated events.")
    reporting_controller: str | None = opt("Controller that emitted the event, e.g. kubernetes.io/kubelet.")
    reporting_instance: str | None = opt("Instance of the controller, e.g. kubelet-xyzf.")
    action: str | None = opt("What was taken or failed, e.g. Binding.")
    reason: str | None = opt("Why the action was taken.")
    regarding: ObjectReference | None = opt("The object the event is about.", markers=VALUE_STRUCT)
    related: ObjectReference | None = opt("A secondary object.")
    note: str | None = opt("Human-readable description (at most 1 kB).")
    type: str | None = opt("Normal or Warning.")
    deprecated_source: EventSource | None = opt("Deprecated core field source.", markers=VALUE_STRUCT)
    deprecated_first_timestamp: Time | None = opt("Deprecated core field firstTimestamp.")
    deprecated_last_timestamp: Time | None = opt("Deprecated core field lastTimestamp.")
    deprecated_count: Int32 | None = opt("Deprecated core field count.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Event,)}


# events.k8s.io/v1 field <-> core/v1 field where the names differ (pkg/apis/events/v1/conversion.go);
# every other field keeps its name.
RENAMED = (("regarding", "involvedObject"), ("note", "message"), ("reportingController", "reportingComponent"),
           ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
           ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"))
_TO_CORE = dict(RENAMED)
_FROM_CORE = {core: v1 for v1, core in RENAMED}
# Field selectors of events.k8s.io/v1 and the core fields they select on.
FIELD_LABELS = {**{f"regarding.{name}": f"involvedObject.{name}"
                   for name in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
                "reportingController": "reportingComponent", "reason": "reason", "type": "type"}


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as the core/v1 Event it is stored as."""
    out = {_TO_CORE.get(key, key): value for key, value in event.items()}
    return {**out, "apiVersion": "v1", "kind": "Event"}


def from_core(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event in the events.k8s.io/v1 shape (``regarding`` and ``deprecatedSource``
    are value structs there: always present)."""
    out: dict[str, Any] = {"apiVersion": "events.k8s.io/v1", "kind": "Event"}
    out.update((_FROM_CORE.get(key, key), value) for key, value in event.items() if key not in ("apiVersion", "kind"))
    out.setdefault("regarding", {})
    out.setdefault("deprecatedSource", {})
    return out
