"""Go's ``pem.Decode`` (the blocks the apiserver finds in a CSR's request and certificate) and
apimachinery's ``HumanDuration`` (ages and a CSR's requested duration)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fakeapi.machinery.durations import human_age, human_duration
from fakeapi.machinery.pem import Block, decode


def test_decode_skips_text_and_broken_blocks_and_returns_the_rest() -> None:
    data = (b"explanatory text\n-----BEGIN A-----\n!!not base64!!\n-----END A-----\n"
            b"-----BEGIN B-----\nProc-Type: 4\n\naGVs\nbG8=\n-----END B-----  \ntrailer\n")

    block, rest = decode(data)

    assert block == Block("B", b"hello", {"Proc-Type": "4"})
    assert rest == b"trailer\n"
    assert decode(rest) == (None, rest)


@pytest.mark.parametrize("data", [
    b"-----BEGIN A-----\naGk=\n-----END B-----\n",  # the END names another type
    b"-----BEGIN A-----\naGk=\n-----END A----- x\n",  # text after the END line
    b"-----BEGIN A\naGk=\n-----END A-----\n",  # no dashes after the BEGIN type
], ids=["other-type", "trailing-text", "unterminated-begin"])
def test_decode_refuses_malformed_blocks(data: bytes) -> None:
    assert decode(data) == (None, data)


@pytest.mark.parametrize(("seconds", "text"), [
    (-2, "<invalid>"), (-1, "0s"), (119, "119s"), (150, "2m30s"), (600, "10m"), (179 * 60, "179m"),
    (3 * 3600 + 60, "3h1m"), (47 * 3600, "47h"), (7 * 86400 + 3600, "7d1h"), (86400 * 400, "400d"),
    (86400 * 800, "2y70d"), (86400 * 365 * 9, "9y"),
])
def test_human_duration_coarsens_as_upstream(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(("stamp", "expected"), [
    ("2025-12-31T23:59:00Z", "60s"), ("2025-12-31T22:59:00-01:00", "60s"), ("2025-12-31T23:59:00.5Z", "59s"),
    ("2026-01-01T00:00:30Z", "0s"), ("not a time", "<invalid>"), ("", "<unknown>"),
], ids=["utc", "offset", "fraction", "ahead", "invalid", "empty"])
def test_human_age_reads_any_rfc3339_time(stamp: str, expected: str) -> None:
    """translateTimestampSince: a pod's last restart may carry a fraction or an offset."""
    assert human_age(stamp, datetime(2026, 1, 1, tzinfo=UTC)) == expected
