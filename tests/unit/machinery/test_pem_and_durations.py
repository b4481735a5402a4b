"""Go's ``pem.Decode`` (the blocks the apiserver finds in a CSR's request and certificate) and
apimachinery's ``HumanDuration`` (ages and a CSR's requested duration)."""

from __future__ import annotations

import pytest

from fakeapi.machinery.durations import human_duration
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
