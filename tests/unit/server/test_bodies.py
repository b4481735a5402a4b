"""Request bodies: parsing per media type within the depth and YAML alias bounds, go-yaml's alias
budget, and the media types a request may use."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

import pytest
from aiohttp import StreamReader
from aiohttp.test_utils import make_mocked_request

from fakeapi.errors import BadRequest, RequestEntityTooLarge, UnsupportedMediaType
from fakeapi.machinery.jsonlimits import MAX_DEPTH
from fakeapi.server.bodies import (
    JSON,
    LOADERS,
    YAML,
    allowed_alias_ratio,
    excessive_aliasing,
    load_yaml,
    parse_body,
    read_body,
    syntax_of,
)


def laughs(levels: int, width: int = 10) -> bytes:
    """The billion-laughs document: each level an array of ``width`` aliases of the level below."""
    lines = [b"l0: &l0 [" + b",".join([b'"lol"'] * width) + b"]"]
    for level in range(1, levels + 1):
        lines.append(b"l%d: &l%d [" % (level, level) + b",".join([b"*l%d" % (level - 1)] * width) + b"]")
    return b"\n".join(lines) + b"\n"


def nested(depth: int, opening: bytes = b"[", closing: bytes = b"]") -> bytes:
    return opening * depth + closing * depth


RATIOS = [
    ("small-documents", 1_000, 0.99),
    ("at-the-low-end", 400_000, 0.99),
    ("halfway", 2_200_000, 0.99 - 0.89 / 2),
    ("at-the-high-end", 4_000_000, 0.10),
    ("beyond", 10**9, 0.10),
]


@pytest.mark.parametrize(("decoded", "ratio"), [c[1:] for c in RATIOS], ids=[c[0] for c in RATIOS])
def test_allowed_alias_ratio_falls_from_99_to_10_percent(decoded: int, ratio: float) -> None:
    assert allowed_alias_ratio(decoded) == pytest.approx(ratio)


BUDGET = [
    # (id, nodes decoded, of them through aliases, refused)
    ("few-aliases", 5_000, 100, False),
    ("small-document", 1_000, 990, False),  # go-yaml looks only past 1,000 nodes and 100 aliases
    ("mostly-aliases", 5_000, 4_990, True),
    ("large-but-literal", 3_000_000, 100_000, False),
    ("large-and-aliased", 3_000_000, 1_200_000, True),  # 40 % where 34.7 % may be
]


@pytest.mark.parametrize(("decoded", "aliased", "refused"), [c[1:] for c in BUDGET], ids=[c[0] for c in BUDGET])
def test_excessive_aliasing(decoded: int, aliased: int, refused: bool) -> None:
    assert excessive_aliasing(decoded, aliased) is refused


JSON_BODIES = [
    # (id, body, the JSON value or the start of the 400's message)
    ("json", b'{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}),
    ("at-max-depth", nested(MAX_DEPTH), "ok"),
    ("too-deep", nested(MAX_DEPTH + 1), "couldn't get version/kind; json parse error: exceeded max depth of 100"),
    ("syntax", b'{"a": }', "couldn't get version/kind; json parse error: "),
]
YAML_BODIES = [
    ("yaml", b"a: [1, {b: ~}]\nwhen: 2001-01-01\n", {"a": [1, {"b": None}], "when": "2001-01-01"}),
    ("at-max-depth", nested(MAX_DEPTH), "ok"),
    ("too-deep", nested(MAX_DEPTH + 1, b"{a: ", b"}"), "error converting YAML to JSON: yaml: exceeded max depth"),
    ("1000-deep", nested(1000), "error converting YAML to JSON: yaml: exceeded max depth of 100"),
    ("some-aliases", b"a: &x {b: 1}\nc: *x\nd: [*x, *x]\n", {"a": {"b": 1}, "c": {"b": 1}, "d": [{"b": 1}] * 2}),
    ("billion-laughs", laughs(7), "error converting YAML to JSON: yaml: document contains excessive aliasing"),
    ("deep-through-an-alias", b"a: &a " + nested(50) + b"\nb: " + b"[" * 60 + b"*a" + b"]" * 60,
     "error converting YAML to JSON: yaml: exceeded max depth of 100"),
    ("self-containing-anchor", b"&a [*a]", "error converting YAML to JSON: yaml: anchor 'a' value contains itself"),
    ("huge-integer", b"a: 123456789012345678901234567890", "error converting YAML to JSON: "),
    ("binary", b"a: !!binary aGk=", {"a": "hi"}),
    # go-yaml keeps a plain scalar that looks like a time as its text when decoding for JSON.
    ("times-as-text", b"a: 2024-13-01\nb: 2024-01-01 10:00:00\nc: !!timestamp 2024-01-01\n",
     {"a": "2024-13-01", "b": "2024-01-01 10:00:00", "c": "2024-01-01"}),
    # sigs.k8s.io/yaml writes number and boolean keys as text (floats as Go's 32-bit %g).
    ("scalar-keys", b"1: a\nfalse: b\n1.5: c\n1000000.0: d\n0.00001: e\n",
     {"1": "a", "false": "b", "1.5": "c", "1e+06": "d", "1e-05": "e"}),
    ("null-key", b"~: a\n", "error converting YAML to JSON: yaml: unsupported map key of type: NoneType"),
    ("infinity", b"a: [.inf]\n", "error converting YAML to JSON: yaml: json: unsupported value: +Inf"),
    ("nan", b"a: .nan\n", "error converting YAML to JSON: yaml: json: unsupported value: NaN"),
    ("not-an-int", b"a: {b: !!int abc}\n", "error converting YAML to JSON: yaml: cannot decode !!str `abc` as a !!int"),
    ("not-a-time", b"a: !!timestamp 2024-02-30\n",
     "error converting YAML to JSON: yaml: cannot decode !!str `2024-02-30` as a !!timestamp"),
    ("not-a-bool", b"a: !!bool maybe\n",
     "error converting YAML to JSON: yaml: cannot decode !!str `maybe` as a !!bool"),
    ("two-documents", b"a: 1\n---\nb: 2\n", "error converting YAML to JSON: "),
]


def check_parsed(parse: Any, expected: Any) -> None:
    if expected == "ok":
        parse()
    elif isinstance(expected, str):
        with pytest.raises(BadRequest) as err:
            parse()
        assert err.value.message.startswith(expected)
    else:
        assert parse() == expected


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in JSON_BODIES], ids=[c[0] for c in JSON_BODIES])
def test_json_bodies(body: bytes, expected: Any) -> None:
    check_parsed(lambda: parse_body(body, JSON), expected)


# Both loaders (libyaml's parser when installed, and the pure-Python one) keep the same bounds.
@pytest.mark.parametrize("loader", LOADERS, ids=[loader.__name__ for loader in LOADERS])
@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in YAML_BODIES], ids=[c[0] for c in YAML_BODIES])
def test_yaml_bodies(body: bytes, expected: Any, loader: type) -> None:
    check_parsed(lambda: load_yaml(body, loader), expected)


MEDIA = [
    # (id, method, Content-Type or None, syntax or the 415's list of accepted types)
    ("json", "POST", "application/json", JSON),
    ("json-with-charset", "PUT", "application/json; charset=utf-8", JSON),
    ("no-content-type", "POST", None, JSON),
    ("yaml", "POST", "application/yaml", YAML),
    ("protobuf", "POST", "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"),
    ("text", "POST", "text/plain", "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("x-yaml", "PUT", "application/x-yaml", "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("merge-patch-for-a-create", "POST", "application/merge-patch+json",
     "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("merge-patch", "PATCH", "application/merge-patch+json", JSON),
    ("apply-patch", "PATCH", "application/apply-patch+yaml", YAML),
    ("json-for-a-patch", "PATCH", "application/json", "application/json-patch+json, application/merge-patch+json"),
    # Only the exact bare media types skip aiohttp's parse; any other spelling is parsed.
    ("json-in-capitals", "POST", "Application/JSON", JSON),
    ("merge-patch-with-charset", "PATCH", "application/merge-patch+json; charset=utf-8", JSON),
    ("yaml-with-charset", "POST", "application/yaml;charset=utf-8", YAML),
    ("empty-content-type", "POST", "", "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
]


@pytest.mark.parametrize(("method", "content_type", "expected"), [c[1:] for c in MEDIA], ids=[c[0] for c in MEDIA])
def test_syntax_of_a_request(method: str, content_type: str | None, expected: str) -> None:
    headers = {"Content-Type": content_type} if content_type is not None else {}
    request = make_mocked_request(method, "/api/v1/namespaces/default/configmaps", headers=headers)
    if "," not in expected:
        assert syntax_of(request) == expected
        return
    with pytest.raises(UnsupportedMediaType) as err:
        syntax_of(request)
    assert err.value.message.startswith("the body of the request was in an unknown format - accepted media types "
                                        f"include: {expected}")


BODIES = [
    # (id, body, all of it in before the handler reads, the server's limit, parsed value or error)
    ("in-before-the-read", b'{"a": 1}', True, 100, {"a": 1}),
    ("arriving-during-the-read", b'{"a": 1}', False, 100, {"a": 1}),
    ("at-the-limit", b'{"a": "' + b"x" * 91 + b'"}', True, 100, {"a": "x" * 91}),  # 100 bytes
    ("at-the-limit-arriving", b'{"a": "' + b"x" * 91 + b'"}', False, 100, {"a": "x" * 91}),
    ("over-the-limit", b'{"a": "' + b"x" * 92 + b'"}', True, 100, RequestEntityTooLarge),
    ("over-the-limit-arriving", b'{"a": "' + b"x" * 92 + b'"}', False, 100, RequestEntityTooLarge),
    ("only-whitespace", b" \r\n\t ", True, 100, BadRequest),
    ("nothing", b"", True, 100, BadRequest),
]


@pytest.mark.parametrize(("body", "complete", "limit", "expected"), [c[1:] for c in BODIES], ids=[c[0] for c in BODIES])
async def test_read_body(body: bytes, complete: bool, limit: int, expected: Any) -> None:
    loop = asyncio.get_running_loop()
    payload = StreamReader(mock.Mock(_reading_paused=False), 2**16, loop=loop)
    if body:
        payload.feed_data(body)
    if complete:
        payload.feed_eof()
    else:  # the rest of the request (its end) comes once the handler waits for it
        loop.call_soon(payload.feed_eof)
    request = make_mocked_request("POST", "/api/v1/namespaces/default/configmaps",
                                  headers={"Content-Type": "application/json"}, payload=payload,
                                  client_max_size=limit)
    if isinstance(expected, type):
        with pytest.raises(expected):
            await read_body(request)
    else:
        assert await read_body(request) == expected
