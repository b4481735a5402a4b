"""RFC 3339 timestamps as the API writes them (``metav1.Time``: seconds, UTC, ``Z``;
``metav1.MicroTime``: six fractional digits) and reads them (Go's ``time.Parse``).

One formatter for the server and the control plane, so every timestamp on the wire has the
same shape.
"""

from __future__ import annotations

import re
import time
from datetime import MAXYEAR, MINYEAR, UTC, datetime, timedelta

RFC3339 = "%Y-%m-%dT%H:%M:%SZ"
MICRO_RFC3339 = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_rfc3339(moment: datetime) -> str:
    """``moment`` (aware) as ``2026-01-02T03:04:05Z``."""
    return moment.astimezone(UTC).strftime(RFC3339)


def format_micro_rfc3339(moment: datetime) -> str:
    """``moment`` (aware) as a ``metav1.MicroTime``: ``2026-01-02T03:04:05.123456Z``."""
    return moment.astimezone(UTC).strftime(MICRO_RFC3339)


# The last second formatted: every write stamps the time, and most writes share their second.
_last_second: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """The current time as a ``metav1.Time`` string."""
    global _last_second
    second = int(time.time())
    if second != _last_second[0]:
        _last_second = (second, time.strftime(RFC3339, time.gmtime(second)))
    return _last_second[1]


# --- parsing as Go's time.Parse with metav1.Time's and metav1.MicroTime's layouts ----------------

TIME_LAYOUT = "2006-01-02T15:04:05Z07:00"  # time.RFC3339, metav1.Time
MICRO_TIME_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"  # metav1.RFC3339Micro
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_CANONICAL_MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class TimeParseError(ValueError):
    """A time Go's ``time.Parse`` refuses; ``str()`` is Go's ``*time.ParseError`` text."""


def _quote(text: str) -> str:
    # Go's time package quotes with a function of its own, not strconv.Quote: each byte of a
    # control or non-ASCII character as \xNN (a lone surrogate was U+FFFD to Go's decoder).
    return '"' + "".join(_time_escape(ch) for ch in text) + '"'


def _time_escape(ch: str) -> str:
    if " " <= ch < "\x80":
        return "\\" + ch if ch in '"\\' else ch
    if "\ud800" <= ch <= "\udfff":
        ch = "\ufffd"
    return "".join(f"\\x{byte:02x}" for byte in ch.encode())


def _days_in(month: int, year: int) -> int:
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 29 if leap else _DAYS[month - 1]


def parse_go_time(value: str, *, micro: bool = False) -> datetime:
    """``value`` parsed as metav1.Time (RFC 3339) or, with ``micro``, metav1.MicroTime (exactly six
    fractional digits), the way Go's ``time.Parse`` does; raises :class:`TimeParseError` with Go's
    message (``parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"``).

    The result is in UTC.  Go's times reach years 0000 and 9999 with any offset, Python's only
    0001 to 9999: an instant beyond them is the earliest or latest datetime, which orders it
    rightly against every other (a log's ``sinceTime``).
    """
    moment, shift = _utc_instant(value, micro)
    year = moment.year - shift
    if year < MINYEAR:
        return datetime.min.replace(tzinfo=UTC)
    if year > MAXYEAR:
        return datetime.max.replace(tzinfo=UTC)
    return moment.replace(year=year, tzinfo=UTC)


# Gregorian calendars repeat every 400 years, so a date moved by 400 years keeps its weekday and
# leap days: it moves times near Python's year limits to where offsets cannot overflow.
_CYCLE_YEARS = 400


def _utc_instant(value: str, micro: bool) -> tuple[datetime, int]:
    """The naive UTC instant of ``value``, with its year moved by the returned shift into Python's
    range (0 for nearly every time)."""
    layout = MICRO_TIME_LAYOUT if micro else TIME_LAYOUT
    rest = value

    def cannot(element: str) -> TimeParseError:
        return TimeParseError(f"parsing time {_quote(value)} as {_quote(layout)}: cannot parse {_quote(rest)} as "
                              f"{_quote(element)}")

    def out_of_range(what: str) -> TimeParseError:
        return TimeParseError(f"parsing time {_quote(value)}: {what} out of range")

    def number(element: str, digits: int, fixed: bool = True) -> int:
        nonlocal rest
        width = digits if len(rest) >= digits and rest[:digits].isascii() and rest[:digits].isdigit() else (
            0 if fixed else 1 if rest[:1].isascii() and rest[:1].isdigit() else 0)
        if width == 0:
            raise cannot(element)
        text, rest = rest[:width], rest[width:]
        return int(text)

    def literal(text: str) -> None:
        nonlocal rest
        if not rest.startswith(text):
            raise cannot(text)
        rest = rest[len(text):]

    year = number("2006", 4)
    literal("-")
    month = number("01", 2)
    if not 1 <= month <= 12:
        raise out_of_range("month")
    literal("-")
    day = number("02", 2)
    if not 1 <= day <= 31:
        raise out_of_range("day")
    literal("T")
    hour = number("15", 2, fixed=False)
    if hour > 23:
        raise out_of_range("hour")
    literal(":")
    minute = number("04", 2)
    if minute > 59:
        raise out_of_range("minute")
    literal(":")
    second = number("05", 2)
    if second > 59:
        raise out_of_range("second")
    fraction = 0
    if micro:
        if len(rest) < 7 or rest[0] not in ".," or not (rest[1:7].isascii() and rest[1:7].isdigit()):
            raise cannot(".000000")
        fraction, rest = int(rest[1:7]) * 1000, rest[7:]
    elif rest[:1] in (".", ",") and rest[1:2].isdigit():
        digits = len(rest[1:]) - len(rest[1:].lstrip("0123456789"))
        fraction, rest = int(rest[1:1 + digits][:9].ljust(9, "0")), rest[1 + digits:]
    offset = 0
    if rest.startswith("Z"):
        rest = rest[1:]
    else:
        if len(rest) < 6 or rest[0] not in "+-" or rest[3] != ":" or not (
                rest[1:3].isdigit() and rest[4:6].isdigit()):
            raise cannot("Z07:00")
        hours, minutes = int(rest[1:3]), int(rest[4:6])
        if hours > 24:
            raise out_of_range("time zone offset hour")
        if minutes > 60:
            raise out_of_range("time zone offset minute")
        offset = (hours * 60 + minutes) * (-1 if rest[0] == "-" else 1)
        rest = rest[6:]
    if rest:
        raise TimeParseError(f"parsing time {_quote(value)}: extra text: {_quote(rest)}")
    if day > _days_in(month, year):
        raise out_of_range("day")
    # Go takes offsets up to 24:60, beyond what datetime.timezone takes: subtract it by hand.
    shift = _CYCLE_YEARS if year < _CYCLE_YEARS else -_CYCLE_YEARS if year > MAXYEAR - _CYCLE_YEARS else 0
    moment = datetime(year + shift, month, day, hour, minute, second, fraction // 1000)
    return moment - timedelta(minutes=offset), shift


def normalize_go_time(value: str, *, micro: bool = False) -> str:
    """How the apiserver stores a time it accepted: UTC, seconds (``Time``) or microseconds
    (``MicroTime``), fraction truncated.  Raises :class:`TimeParseError` as :func:`parse_go_time`."""
    if (_CANONICAL_MICRO if micro else _CANONICAL).fullmatch(value):
        day, month, year = int(value[8:10]), int(value[5:7]), int(value[:4])
        if 1 <= month <= 12 and 1 <= day <= _days_in(month, year) and value[11:13] < "24" and \
                value[14:16] < "60" and value[17:19] < "60":
            return value  # already canonical: the common case costs one match
    moment, shift = _utc_instant(value, micro)
    year = moment.year - shift
    if not 0 <= year <= 9999:  # what RFC 3339 (and Go's Time.MarshalJSON) can write
        raise TimeParseError(f"parsing time {_quote(value)}: year outside of range [0,9999] in UTC")
    # (strftime's %Y does not pad years before 1000)
    text = f"{year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"
