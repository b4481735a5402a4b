"""Table columns of ``autoscaling/v2`` HorizontalPodAutoscalers, after upstream's
``pkg/printers/internalversion/printers.go`` (every column typed ``string`` there, as here)."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.resource import AGE, NAME, Column

UNKNOWN = "<unknown>"
MAX_SHOWN_METRICS = 2


def _current(statuses: list[Any], i: int, key: str, field: str) -> Any:
    """The ``current.<field>`` of the i-th metric status when it is of the same source, else None."""
    status = statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else {}
    return ((status.get(key) or {}).get("current") or {}).get(field)


def _or_unknown(value: Any) -> str:
    return UNKNOWN if value is None else str(value)


def _percent(value: Any, unset: str) -> str:
    return unset if value is None else f"{value}%"


def _value_target(spec: dict[str, Any], statuses: list[Any], i: int, key: str) -> str:
    """External and Object metrics: ``current/target``, ``(avg)`` for a per-pod average target."""
    target = (spec.get(key) or {}).get("target") or {}
    if target.get("averageValue") is not None:
        return f"{_or_unknown(_current(statuses, i, key, 'averageValue'))}/{target['averageValue']} (avg)"
    return f"{_or_unknown(_current(statuses, i, key, 'value'))}/{target.get('value') or 0}"


def _resource_target(spec: dict[str, Any], statuses: list[Any], i: int, key: str) -> str:
    """Resource and ContainerResource metrics: ``name: current/target`` as value or utilization."""
    source = spec.get(key) or {}
    target, name = source.get("target") or {}, source.get("name", "")
    if target.get("averageValue") is not None:
        return f"{name}: {_or_unknown(_current(statuses, i, key, 'averageValue'))}/{target['averageValue']}"
    current = _percent(_current(statuses, i, key, "averageUtilization"), UNKNOWN)
    return f"{name}: {current}/{_percent(target.get('averageUtilization'), '<auto>')}"


def format_metrics(hpa: dict[str, Any]) -> str:
    """``formatHPAMetrics``: the first two metrics as current/target, then how many more."""
    specs = (hpa.get("spec") or {}).get("metrics") or []
    if not specs:
        return "<none>"
    statuses = (hpa.get("status") or {}).get("currentMetrics") or []
    shown: list[str] = []
    for i, spec in enumerate(specs):
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind in ("External", "Object"):
            shown.append(_value_target(spec, statuses, i, kind.lower()))
        elif kind == "Pods":
            target = ((spec.get("pods") or {}).get("target") or {}).get("averageValue") or 0
            shown.append(f"{_or_unknown(_current(statuses, i, 'pods', 'averageValue'))}/{target}")
        elif kind in ("Resource", "ContainerResource"):
            shown.append(_resource_target(spec, statuses, i, "resource" if kind == "Resource" else "containerResource"))
        else:
            shown.append("<unknown type>")
    text = ", ".join(shown[:MAX_SHOWN_METRICS])
    if len(shown) > MAX_SHOWN_METRICS:
        return f"{text} + {len(shown) - MAX_SHOWN_METRICS} more..."
    return text


def _reference(hpa: dict[str, Any]) -> str:
    ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _min_pods(hpa: dict[str, Any]) -> str:
    value = (hpa.get("spec") or {}).get("minReplicas")
    return "<unset>" if value is None else str(value)


HPA_COLUMNS = (
    NAME,
    Column("Reference", _reference, description="scaleTargetRef points to the target resource to scale."),
    Column("Targets", format_metrics, description="metrics contains the specifications for which to use to "
                                                  "calculate the desired replica count."),
    Column("MinPods", _min_pods, description="minReplicas is the lower limit for the number of replicas."),
    Column("MaxPods", lambda hpa: (hpa.get("spec") or {}).get("maxReplicas", 0),
           description="maxReplicas is the upper limit for the number of replicas."),
    Column("Replicas", lambda hpa: (hpa.get("status") or {}).get("currentReplicas", 0),
           description="currentReplicas is current number of replicas of pods managed by this autoscaler."),
    AGE,
)
