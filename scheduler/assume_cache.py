"""ResourceClaims as the scheduler must see them: informer state, overlaid by what it wrote itself.

Two overlays, as upstream's ``assumecache`` + ``inFlightAllocations``:

- *pending allocations*: set at Reserve, before anything is written.  Other pods then see the
  devices as used, and a pod sharing the claim waits ("is in the process of being allocated").
- *assumed objects*: the claim returned by the API after PreBind wrote it, kept until the
  informer delivers that resourceVersion (or a newer one), so a slow watch never makes an
  allocation look free.

The cache keeps one :class:`AllocatedState` current incrementally (each claim's allocation is
counted exactly once: its pending allocation if any, else the newest object's), so a scheduling
cycle never rebuilds it from all claims.
"""

from __future__ import annotations

from typing import Any

from fakeapi.scheduler.dra.state import AllocatedState
from fakeapi.scheduler.rules.keys import key_for, object_key


def _rv(obj: dict[str, Any]) -> int:
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _allocation(claim: dict[str, Any] | None) -> dict[str, Any] | None:
    return ((claim or {}).get("status") or {}).get("allocation") or None


class ClaimAssumeCache:
    """Latest known claims by ``namespace/name`` plus pending allocations by claim UID."""

    def __init__(self) -> None:
        self._informed: dict[str, dict[str, Any]] = {}
        self._assumed: dict[str, dict[str, Any]] = {}
        self._pending: dict[str, dict[str, Any]] = {}        # uid -> claim with the allocation
        self._counted: dict[str, dict[str, Any]] = {}        # uid -> allocation counted in `allocated`
        self._key_of_uid: dict[str, str] = {}
        self.allocated = AllocatedState()

    # -- informer side --
    def on_upsert(self, claim: dict[str, Any]) -> None:
        key = object_key(claim)
        previous = self._informed.get(key)
        self._informed[key] = claim
        if previous is not None and previous["metadata"].get("uid") != claim["metadata"].get("uid"):
            self._assumed.pop(key, None)
            self._recount(previous["metadata"].get("uid", ""))
        assumed = self._assumed.get(key)
        if assumed is not None and _rv(claim) >= _rv(assumed):
            del self._assumed[key]
        self._key_of_uid[claim["metadata"].get("uid", "")] = key
        self._recount(claim["metadata"].get("uid", ""))

    def on_delete(self, claim: dict[str, Any]) -> None:
        key = object_key(claim)
        self._informed.pop(key, None)
        self._assumed.pop(key, None)
        uid = claim["metadata"].get("uid", "")
        self._key_of_uid.pop(uid, None)
        self._recount(uid)

    # -- scheduler side --
    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The newest claim object: what the scheduler wrote, else what the informer saw."""
        key = key_for(namespace, name)
        return self._assumed.get(key) or self._informed.get(key)

    def assume(self, claim: dict[str, Any]) -> None:
        """Remember an object returned by a successful write until the informer catches up."""
        key = object_key(claim)
        informed = self._informed.get(key)
        if informed is not None and _rv(informed) >= _rv(claim):
            return
        self._assumed[key] = claim
        self._key_of_uid[claim["metadata"].get("uid", "")] = key
        self._recount(claim["metadata"].get("uid", ""))

    def restore(self, namespace: str, name: str) -> None:
        """Drop an assumed object (the write it came from is being rolled back)."""
        key = key_for(namespace, name)
        claim = self._assumed.pop(key, None)
        if claim is not None:
            self._recount(claim["metadata"].get("uid", ""))

    def signal_pending(self, claim: dict[str, Any]) -> None:
        """``claim`` carries an allocation chosen at Reserve and not written yet."""
        uid = claim["metadata"]["uid"]
        self._pending[uid] = claim
        self._recount(uid)

    def remove_pending(self, uid: str) -> bool:
        """Forget a pending allocation; True if there was one."""
        if self._pending.pop(uid, None) is None:
            return False
        self._recount(uid)
        return True

    def has_pending(self, uid: str) -> bool:
        return uid in self._pending

    def current_allocation(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The claim's allocation as the scheduler sees it: pending (chosen, not yet written) or written."""
        claim = self.get(namespace, name)
        if claim is None:
            return None
        pending = self._pending.get(claim["metadata"].get("uid", ""))
        return _allocation(pending if pending is not None else claim)

    def _recount(self, uid: str) -> None:
        pending = self._pending.get(uid)
        if pending is not None:
            wanted = _allocation(pending)
        else:
            key = self._key_of_uid.get(uid)
            current = None if key is None else (self._assumed.get(key) or self._informed.get(key))
            wanted = _allocation(current) if current and current["metadata"].get("uid") == uid else None
        counted = self._counted.get(uid)
        # The same allocation in another object (the pending one written, the written one
        # informed) changes nothing: its pools' generations stay, and with them what the
        # allocator and the node search remember of those nodes.
        if counted is wanted or counted == wanted:
            return
        if counted is not None:
            self.allocated.remove_allocation(counted)
            del self._counted[uid]
        if wanted is not None:
            self.allocated.add_allocation(wanted)
            self._counted[uid] = wanted
