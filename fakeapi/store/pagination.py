"""Continue tokens: opaque to clients, (resourceVersion, last key) to us — as upstream encodes them."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import orjson

from fakeapi.errors import BadRequest


@dataclass(frozen=True)
class ContinueToken:
    rv: int
    start_after: tuple[str, str]  # (namespace, name) of the last item returned

    def encode(self) -> str:
        raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": self.rv, "start": list(self.start_after)})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def decode(token: str) -> ContinueToken:
        try:
            padded = token + "=" * (-len(token) % 4)
            data = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
            if data.get("v") != "meta.k8s.io/v1":
                raise ValueError("unknown version")
            ns, name = data["start"]
            return ContinueToken(int(data["rv"]), (str(ns), str(name)))
        except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError) as exc:
            raise BadRequest(f"continue key is not valid: {exc}") from exc
