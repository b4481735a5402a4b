"""Go ``time.ParseDuration`` for the duration strings people write in annotations and schedules.

``"500ms"``, ``"2s"``, ``"1h30m"``, ``"1.5h"``: a sequence of decimal numbers each with a unit
(ns, us/µs, ms, s, m, h), optionally signed.  A bare ``"0"`` is zero.
"""

from __future__ import annotations

import re

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
