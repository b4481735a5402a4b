"""Go ``time.ParseDuration`` for the duration strings people write in annotations and schedules.

``"500ms"``, ``"2s"``, ``"1h30m"``, ``"1.5h"``: a sequence of decimal numbers each with a unit
(ns, us/µs, ms, s, m, h), optionally signed.  A bare ``"0"`` is zero.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ValueError with Go's wording (``time: invalid duration "x"``) otherwise."""
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    body = s.lstrip("+-")
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        m = _PART.match(body, pos)
        if m is None:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def human_duration(seconds: int) -> str:
    """apimachinery's ``duration.HumanDuration``: ``5s``, ``3m2s``, ``4h``, ``12d``, ``3y``, at the
    precision kubectl prints ages and durations (coarser as they grow)."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rem = seconds % 60
        return f"{minutes}m{rem}s" if rem else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return f"{days // 365}y{days % 365}d" if days % 365 else f"{days // 365}y"
    return f"{days // 365}y"


def human_age(timestamp: str | None, now: datetime | None = None) -> str:
    """kubectl's ``translateTimestampSince``: how long ago an RFC 3339 timestamp was, as
    :func:`human_duration` prints it (the Age column, a pod's last restart)."""
    if not timestamp:
        return "<unknown>"
    try:  # RFC 3339: second precision as the server writes it, or a fraction and offset
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return "<invalid>"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # A time ahead of this clock (another process's) reads as just now.
    return human_duration(max(int(((now or datetime.now(UTC)) - moment).total_seconds()), 0))
