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
        """A client's token back as ours; 400 with upstream's reasons for anything we did not issue."""
        try:
            data = orjson.loads(base64.urlsafe_b64decode((token + "=" * (-len(token) % 4)).encode()))
        except (ValueError, binascii.Error) as exc:  # not base64, not JSON
            raise BadRequest(f"continue key is not valid: {exc}") from exc
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise BadRequest("continue key is not valid: server does not recognize this encoded version")
        rv, start = data.get("rv"), data.get("start")
        if type(rv) is not int or rv <= 0:
            raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion "
                             "(version meta.k8s.io/v1)")
        if not (isinstance(start, list) and len(start) == 2 and all(isinstance(part, str) for part in start)):
            raise BadRequest("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
        return ContinueToken(rv, (start[0], start[1]))
