"""parse_int64 and parse_uint64 read what Go's strconv.ParseInt and ParseUint (base 10, 64 bits) read,
and refuse the rest with their messages."""

from __future__ import annotations

import pytest

from fakeapi.machinery.goparse import parse_int64, parse_uint64


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("42", 42), ("+5", 5), ("-5", -5), ("007", 7),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
])
def test_what_go_reads(text: str, value: int) -> None:
    assert parse_int64(text) == value


@pytest.mark.parametrize(("text", "reason"), [
    ("", "invalid syntax"), ("ten", "invalid syntax"), (" 5", "invalid syntax"), ("5 ", "invalid syntax"),
    ("1_0", "invalid syntax"), ("\u0665", "invalid syntax"), ("+", "invalid syntax"), ("--5", "invalid syntax"),
    ("1.5", "invalid syntax"), ("9223372036854775808", "value out of range"),
    ("-9223372036854775809", "value out of range"),
])
def test_what_go_refuses(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_int64(text)
    assert str(refused.value) == f'strconv.ParseInt: parsing "{text}": {reason}'


def test_unsigned() -> None:
    assert parse_uint64("18446744073709551615") == 2**64 - 1
    for text, reason in (("18446744073709551616", "value out of range"), ("+5", "invalid syntax"),
                         ("-1", "invalid syntax")):
        with pytest.raises(ValueError) as refused:
            parse_uint64(text)
        assert str(refused.value) == f'strconv.ParseUint: parsing "{text}": {reason}'


def test_the_message_quotes_the_text_as_go_does() -> None:
    with pytest.raises(ValueError) as refused:
        parse_int64('5\n"')
    assert str(refused.value) == 'strconv.ParseInt: parsing "5\\n\\"": invalid syntax'
