"""RFC 3339 timestamps as the API writes them (``metav1.Time``: seconds, UTC, ``Z``).

One formatter for the server and the control plane, so every timestamp on the wire has the
same shape.
"""

from __future__ import annotations

from datetime import UTC, datetime

RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


def format_rfc3339(moment: datetime) -> str:
    """``moment`` (aware) as ``2026-01-02T03:04:05Z``."""
    return moment.astimezone(UTC).strftime(RFC3339)


def now_rfc3339() -> str:
    """The current time as a ``metav1.Time`` string."""
    return format_rfc3339(datetime.now(UTC))
