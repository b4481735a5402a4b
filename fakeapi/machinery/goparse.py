"""Numbers read from text as Go's ``strconv`` reads them, for query parameters.

Python's ``int()`` is more lenient than Go's parsers: it takes surrounding spaces, underscores
between digits and the digits of other scripts, and has no bound.  Upstream reads ``limit``,
``timeoutSeconds``, ``gracePeriodSeconds`` and the log options with ``strconv.ParseInt(s, 10,
64)`` and resource versions with ``ParseUint``, so a value they refuse is refused here too.
"""

from __future__ import annotations

from fakeapi.errors import go_quote

_INT64 = 2**63
_UINT64 = 2**64


def parse_int64(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits within 64 bits.

    Raises ValueError with Go's message (``strconv.ParseInt: parsing "x": invalid syntax`` or
    ``... value out of range``).
    """
    return _parse("ParseInt", text, text[1:] if text[:1] in ("+", "-") else text, -_INT64, _INT64)


def parse_uint64(text: str) -> int:
    """``strconv.ParseUint(text, 10, 64)`` (resource versions): ASCII digits within 64 bits."""
    return _parse("ParseUint", text, text, 0, _UINT64)


def _parse(function: str, text: str, digits: str, low: int, high: int) -> int:
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f'strconv.{function}: parsing {go_quote(text)}: invalid syntax')
    value = int(text)
    if not low <= value < high:
        raise ValueError(f'strconv.{function}: parsing {go_quote(text)}: value out of range')
    return value
