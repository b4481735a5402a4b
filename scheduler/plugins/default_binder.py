"""DefaultBinder: POST ``pods/binding`` (``plugins/defaultbinder``).

A binding whose answer is lost may have been committed: the pod is re-read, and found on the
node it counts as bound (a retried binding would only hear "already assigned").
"""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.client import PODS, ApiClient
from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import SUCCESS, Status, error
from fakeapi.scheduler.rules.pods import node_of
from fakeapi.scheduler.writes import write_until_known

from fakeapi.errors import Conflict, NotFound, StatusError

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, api: ApiClient) -> None:
        self._api = api

    async def bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta.get("uid")

        async def write() -> bool:
            await self._api.bind(namespace, name, node_name, pod_uid=uid)
            return True

        async def landed() -> bool | None:
            current = await self._api.get(PODS, namespace, name)
            if uid and current["metadata"].get("uid") != uid:
                raise NotFound(f'pods "{name}" not found')   # replaced by a pod of the same name
            assigned = node_of(current)
            if assigned == node_name:
                return True
            if assigned:
                raise Conflict(f'pod {name} is already assigned to node "{assigned}"')
            return None

        try:
            await write_until_known(write, landed, what=f"bind pod {namespace}/{name} to {node_name}",
                                    conflict_attempts=1)
        except StatusError as exc:
            return error(NAME, str(exc))
        return SUCCESS
