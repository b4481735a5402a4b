"""Field errors print their values as upstream's ``field.Error`` does: strings with Go's ``%q``."""

from __future__ import annotations

import pytest

from fakeapi.errors import go_quote, invalid, not_supported


@pytest.mark.parametrize(("text", "quoted"), [
    ("abc", '"abc"'), ("", '""'), ("café", '"café"'), ("😀", '"😀"'),
    ('a"b\\c', '"a\\"b\\\\c"'), ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
    ("\x00\x1b\x7f", '"\\x00\\x1b\\x7f"'), ("soft\u00adhyphen", '"soft\\u00adhyphen"'),
    ("\u00a0", '"\\u00a0"'), ("\U000e0001", '"\\U000e0001"'), ("\udc80", '"\ufffd"'),
], ids=["plain", "empty", "latin", "emoji", "quote-backslash", "named-escapes", "control", "format",
        "no-break-space", "tag", "lone-surrogate"])
def test_go_quote_writes_what_strconv_quote_writes(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_field_errors_quote_string_values_the_go_way() -> None:
    assert str(invalid("metadata.labels", "café\n", "bad")) == 'metadata.labels: Invalid value: "café\\n": bad'
    assert str(not_supported("spec.mode", "x", ["Ünder", "a\tb"])) == (
        'spec.mode: Unsupported value: "x": supported values: "Ünder", "a\\tb"')
