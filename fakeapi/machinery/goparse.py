"""Numbers read from text as Go's ``strconv`` reads them, for query parameters.

Python's ``int()`` is more lenient than Go's parsers: it takes surrounding spaces, underscores
between digits and the digits of other scripts, and has no bound.  Upstream reads ``limit``,
``timeoutSeconds``, ``gracePeriodSeconds`` and the log options with ``strconv.ParseInt(s, 10,
64)``, so a value it refuses is refused here too, with its message.
"""

from __future__ import annotations

_INT64 = 2**63


def parse_int64(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits within 64 bits.

    Raises ValueError with Go's message (``strconv.ParseInt: parsing "x": invalid syntax`` or
    ``... value out of range``).
    """
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -_INT64 <= value < _INT64:
        raise ValueError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value
