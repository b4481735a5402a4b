"""Continue tokens: opaque base64 of (resourceVersion, last key); garbage is a 400."""

from __future__ import annotations

import base64

import orjson
import pytest

from fakeapi.errors import BadRequest
from fakeapi.store.pagination import ContinueToken

ROUND_TRIPS = [
    ("namespaced", ContinueToken(7, ("default", "a"))),
    ("cluster-scoped", ContinueToken(1, ("", "node-1"))),
    ("odd-characters", ContinueToken(123456, ("ns", "a.b-c/d"))),
]


@pytest.mark.parametrize("token", [c[1] for c in ROUND_TRIPS], ids=[c[0] for c in ROUND_TRIPS])
def test_round_trip(token: ContinueToken) -> None:
    text = token.encode()
    assert "=" not in text  # unpadded, as upstream
    assert ContinueToken.decode(text) == token


def _b64(data: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(data)).decode().rstrip("=")


BAD = [
    ("not-base64", "%%%"),
    ("not-json", base64.urlsafe_b64encode(b"nope").decode()),
    ("wrong-version", _b64({"v": "v2", "rv": 1, "start": ["", "a"]})),
    ("missing-start", _b64({"v": "meta.k8s.io/v1", "rv": 1})),
    ("bad-rv", _b64({"v": "meta.k8s.io/v1", "rv": "x", "start": ["", "a"]})),
    ("short-start", _b64({"v": "meta.k8s.io/v1", "rv": 1, "start": ["a"]})),
    ("a-list", _b64([1, 2])),
    ("a-string", _b64("meta.k8s.io/v1")),
    ("rv-zero", _b64({"v": "meta.k8s.io/v1", "rv": 0, "start": ["", "a"]})),
    ("rv-negative", _b64({"v": "meta.k8s.io/v1", "rv": -1, "start": ["", "a"]})),
    ("rv-float", _b64({"v": "meta.k8s.io/v1", "rv": 1.5, "start": ["", "a"]})),
    ("rv-bool", _b64({"v": "meta.k8s.io/v1", "rv": True, "start": ["", "a"]})),
    ("start-of-numbers", _b64({"v": "meta.k8s.io/v1", "rv": 1, "start": [1, 2]})),
    ("start-a-string", _b64({"v": "meta.k8s.io/v1", "rv": 1, "start": "ab"})),
]


@pytest.mark.parametrize("text", [c[1] for c in BAD], ids=[c[0] for c in BAD])
def test_garbage_is_400(text: str) -> None:
    with pytest.raises(BadRequest, match="continue key is not valid"):
        ContinueToken.decode(text)
