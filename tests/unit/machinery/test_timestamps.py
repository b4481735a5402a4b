"""metav1.Time and metav1.MicroTime as the apiserver reads (Go's time.Parse) and stores them."""

from __future__ import annotations

import pytest

from fakeapi.machinery import timestamps
from fakeapi.machinery.timestamps import TimeParseError, normalize_go_time

T = "2006-01-02T15:04:05Z07:00"
M = "2006-01-02T15:04:05.000000Z07:00"


@pytest.mark.parametrize(("value", "micro", "stored"), [
    ("2026-03-04T05:06:07Z", False, "2026-03-04T05:06:07Z"),
    ("2026-03-04T05:06:07+01:00", False, "2026-03-04T04:06:07Z"),
    ("2026-03-04T00:30:00-01:30", False, "2026-03-04T02:00:00Z"),
    ("2026-03-04T05:06:07.999999999Z", False, "2026-03-04T05:06:07Z"),
    ("2026-03-04T05:06:07,5Z", False, "2026-03-04T05:06:07Z"),
    ("2024-02-29T00:00:00Z", False, "2024-02-29T00:00:00Z"),
    ("2026-03-04T5:06:07Z", False, "2026-03-04T05:06:07Z"),
    ("2026-03-04T05:06:07.123456Z", True, "2026-03-04T05:06:07.123456Z"),
    ("2026-03-04T05:06:07.123456+02:00", True, "2026-03-04T03:06:07.123456Z"),
    # Go's times reach year 0000 and offsets up to 24:60, beyond Python's datetime.
    ("0001-01-01T00:00:00+01:00", False, "0000-12-31T23:00:00Z"),
    ("0000-03-01T00:30:00.5+24:00", False, "0000-02-29T00:30:00Z"),
    ("2026-03-04T05:06:07+24:60", False, "2026-03-03T04:06:07Z"),
    ("0399-01-01T00:00:00.123456+01:00", True, "0398-12-31T23:00:00.123456Z"),
], ids=["canonical", "offset", "negative-offset", "fraction-dropped", "comma-fraction", "leap-day",
        "one-digit-hour", "micro", "micro-offset", "into-year-0", "year-0-leap-day", "offset-24-60",
        "year-399-micro"])
def test_accepted_times_are_stored_in_utc(value: str, micro: bool, stored: str) -> None:
    assert normalize_go_time(value, micro=micro) == stored


@pytest.mark.parametrize(("value", "micro", "message"), [
    ("yesterday", False, f'parsing time "yesterday" as "{T}": cannot parse "yesterday" as "2006"'),
    ("", False, f'parsing time "" as "{T}": cannot parse "" as "2006"'),
    ("2026/03/04", False, f'parsing time "2026/03/04" as "{T}": cannot parse "/03/04" as "-"'),
    ("2026-03-04", False, f'parsing time "2026-03-04" as "{T}": cannot parse "" as "T"'),
    ("2026-03-04 05:06:07Z", False, f'parsing time "2026-03-04 05:06:07Z" as "{T}": cannot parse " 05:06:07Z" as "T"'),
    ("2026-03-04T05:06:07", False, f'parsing time "2026-03-04T05:06:07" as "{T}": cannot parse "" as "Z07:00"'),
    ("2026-13-04T05:06:07Z", False, 'parsing time "2026-13-04T05:06:07Z": month out of range'),
    ("2026-02-30T05:06:07Z", False, 'parsing time "2026-02-30T05:06:07Z": day out of range'),
    ("2026-03-04T24:06:07Z", False, 'parsing time "2026-03-04T24:06:07Z": hour out of range'),
    ("2026-03-04T05:06:07Zx", False, 'parsing time "2026-03-04T05:06:07Zx": extra text: "x"'),
    ("2026-03-04T05:06:07Z", True, f'parsing time "2026-03-04T05:06:07Z" as "{M}": cannot parse "Z" as ".000000"'),
    ("2026-03-04T05:06:07.123Z", True,
     f'parsing time "2026-03-04T05:06:07.123Z" as "{M}": cannot parse ".123Z" as ".000000"'),
    ("9999-12-31T23:59:59-01:00", False,
     'parsing time "9999-12-31T23:59:59-01:00": year outside of range [0,9999] in UTC'),
    ("2026-03-04T05:06:07Zé\t", False,
     'parsing time "2026-03-04T05:06:07Z\\xc3\\xa9\\x09": extra text: "\\xc3\\xa9\\x09"'),
], ids=["word", "empty", "slashes", "date-only", "space", "no-zone", "month", "day", "hour", "extra",
        "micro-without-fraction", "micro-short-fraction", "year-10000", "non-ascii-extra"])
def test_refused_times_say_what_go_says(value: str, micro: bool, message: str) -> None:
    with pytest.raises(TimeParseError) as err:
        normalize_go_time(value, micro=micro)
    assert str(err.value) == message


def test_now_is_formatted_once_per_second_and_follows_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # now_rfc3339 remembers the last second it formatted; a new second must give a new string.
    moments = iter([1_700_000_000.2, 1_700_000_000.9, 1_700_000_001.0, 1_600_000_000.5])
    monkeypatch.setattr(timestamps.time, "time", lambda: next(moments))
    assert [timestamps.now_rfc3339() for _ in range(4)] == [
        "2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z", "2023-11-14T22:13:21Z", "2020-09-13T12:26:40Z"]
