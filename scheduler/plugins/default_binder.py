"""DefaultBinder: POST ``pods/binding`` (``plugins/defaultbinder``)."""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, Status, error

from fakeapi.errors import StatusError

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, api: ApiClient) -> None:
        self._api = api

    async def bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        meta = pod["metadata"]
        try:
            await self._api.bind(meta.get("namespace", ""), meta["name"], node_name, pod_uid=meta.get("uid"))
        except StatusError as exc:
            return error(NAME, str(exc))
        return SUCCESS
