"""Events, in both served shapes: core ``v1`` and ``events.k8s.io/v1`` (the same stored objects).

Upstream validates the internal (core-shaped) event with rules that depend on the request's
version (``ValidateEventCreate``/``ValidateEventUpdate``): every event passes the legacy rules
(namespaces agree; an event with ``eventTime`` names its reporter, action and reason), and
events created through events.k8s.io/v1 also need ``eventTime``, a Normal or Warning type, no
deprecated core fields and a valid series.  Field paths are the internal names, as upstream's.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, required
from fakeapi.models.events_v1 import to_core
from fakeapi.validation import names
from fakeapi.validation.common import immutable
from fakeapi.validation.strategy import AdmissionContext, Strategy

EVENTS_V1 = "events.k8s.io/v1"
LENGTH_LIMIT = 128  # reportingInstance, action and reason
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")
# What an update through events.k8s.io/v1 may not change (everything but metadata and series).
IMMUTABLE_FIELDS = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
                    "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")


def _too_long(event: dict[str, Any], key: str, limit: int) -> list[FieldError]:
    return [invalid(key, "", f"can have at most {limit} characters")] if len(event.get(key) or "") > limit else []


def validate_legacy_event(event: dict[str, Any], request_version: str) -> list[FieldError]:
    """``legacyValidateEvent`` over a core-shaped event."""
    namespace = (event.get("metadata") or {}).get("namespace", "")
    involved_ns = (event.get("involvedObject") or {}).get("namespace", "")
    errs: list[FieldError] = []
    if not event.get("eventTime"):
        # Cluster-scoped objects' events live in "default" (or nowhere), the others in their object's namespace.
        if involved_ns != namespace and (involved_ns or namespace not in ("", "default")):
            errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
        return errs
    if not involved_ns and namespace not in ("default", "kube-system"):
        errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    controller = "reportingComponent" if request_version == "v1" else "reportingController"
    if not event.get("reportingComponent"):
        errs.append(required(controller))
    else:
        errs += names.check(controller, event["reportingComponent"], names.qualified_name)
    for key, limit in (("reportingInstance", LENGTH_LIMIT), ("action", LENGTH_LIMIT), ("reason", LENGTH_LIMIT)):
        errs += [required(key)] if not event.get(key) else _too_long(event, key, limit)
    return errs + _too_long(event, "message", NOTE_LIMIT)


def _validate_series(event: dict[str, Any]) -> list[FieldError]:
    series = event.get("series")
    if series is None:
        return []
    errs = [] if (series.get("count") or 0) >= 2 else [invalid("series.count", "", "should be at least 2")]
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def validate_v1_event(event: dict[str, Any]) -> list[FieldError]:
    """What a create through events.k8s.io/v1 adds to the legacy rules (core-shaped event)."""
    errs = validate_legacy_event(event, EVENTS_V1) + _validate_series(event)
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    if event.get("type") not in EVENT_TYPES:
        errs.append(invalid("type", "", f"has invalid value: {event.get('type', '')}"))
    for key, name in (("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
                      ("count", "deprecatedCount")):
        if event.get(key):
            errs.append(invalid(name, "", "needs to be unset"))
    if any((event.get("source") or {}).values()):
        errs.append(invalid("deprecatedSource", "", "needs to be unset"))
    return errs


class EventStrategy(Strategy):
    """core/v1 Events: the involved object is named; the legacy rules."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        involved = obj.get("involvedObject") or {}
        errs = [] if involved.get("name") or involved.get("kind") else [required("involvedObject")]
        return errs + validate_legacy_event(obj, "v1")


class EventV1Strategy(Strategy):
    """events.k8s.io/v1 Events, validated in their core shape."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_v1_event(to_core(obj))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        core, old_core = to_core(new), to_core(old)
        errs = validate_legacy_event(core, EVENTS_V1)
        if core.get("series") != old_core.get("series"):
            errs += _validate_series(core)
        for key in IMMUTABLE_FIELDS:
            errs += immutable(core.get(key), old_core.get(key), key)
        return errs


STRATEGIES: dict[str, Strategy] = {"Event": EventV1Strategy()}
