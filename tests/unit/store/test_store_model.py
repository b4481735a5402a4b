"""The store and its watches against a reference model (a hypothesis state machine).

The model is the list of every committed change.  Properties: the resourceVersion strictly
increases; the current objects and every retained past revision match the model; a watch
opened at any retained revision delivers exactly the later events of its storage key, in
order, none lost or duplicated, and replaying them onto the state at that revision gives the
current state; a watch at a compacted revision is refused with 410.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fakeapi.errors import Expired
from fakeapi.store.eventlog import ADDED, DELETED, MODIFIED
from fakeapi.store.objects import ObjectStore
from fakeapi.store.watch import Watcher, WatchFilter

STORAGES = [("", "configmaps"), ("", "pods")]
KEYS = [("default", "a"), ("default", "b"), ("other", "a")]

Change = tuple[int, str, tuple[str, str], tuple[str, str], dict[str, Any]]  # rv, type, storage, key, obj


def _obj(key: tuple[str, str], value: int) -> dict[str, Any]:
    return {"metadata": {"namespace": key[0], "name": key[1]}, "data": {"v": str(value)}}


def _state_at(changes: list[Change], storage: tuple[str, str], rv: int) -> dict[tuple[str, str], str]:
    """The model's objects of one storage key at revision ``rv``: key -> data value."""
    state: dict[tuple[str, str], str] = {}
    for change_rv, kind, change_storage, key, obj in changes:
        if change_rv > rv:
            break
        if change_storage != storage:
            continue
        if kind == DELETED:
            state.pop(key, None)
        else:
            state[key] = obj["data"]["v"]
    return state


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = ObjectStore(window=12, watcher_limit=1_000)
        self.changes: list[Change] = []
        self.counter = 0
        # Open watches: (storage, revision they started after, watcher, lines received so far).
        self.watches: list[tuple[tuple[str, str], int, Watcher, list[dict[str, Any]]]] = []

    def _commit(self, storage: tuple[str, str], kind: str, key: tuple[str, str]) -> None:
        self.counter += 1
        before = self.store.rv
        stored = self.store.commit(storage, kind, _obj(key, self.counter))
        assert self.store.rv == before + 1
        assert stored["metadata"]["resourceVersion"] == str(self.store.rv)
        self.changes.append((self.store.rv, kind, storage, key, stored))

    def _exists(self, storage: tuple[str, str], key: tuple[str, str]) -> bool:
        return key in _state_at(self.changes, storage, self.store.rv)

    @rule(storage=st.sampled_from(STORAGES), key=st.sampled_from(KEYS))
    def write(self, storage: tuple[str, str], key: tuple[str, str]) -> None:
        self._commit(storage, MODIFIED if self._exists(storage, key) else ADDED, key)

    @rule(storage=st.sampled_from(STORAGES), key=st.sampled_from(KEYS))
    def delete(self, storage: tuple[str, str], key: tuple[str, str]) -> None:
        if self._exists(storage, key):
            self._commit(storage, DELETED, key)

    @rule(storage=st.sampled_from(STORAGES), back=st.integers(0, 20))
    def open_watch(self, storage: tuple[str, str], back: int) -> None:
        since = max(self.store.rv - back, 0)
        if since < self.store.log.compacted_rv:
            with pytest.raises(Expired):
                self.store.open_watch(storage, WatchFilter(), since=since)
            return
        self.watches.append((storage, since, self.store.open_watch(storage, WatchFilter(), since=since), []))

    @precondition(lambda self: self.store.rv > 0)
    @rule(back=st.integers(0, 6))
    def compact(self, back: int) -> None:
        self.store.log.compact(max(self.store.rv - back, 0))

    @invariant()
    def current_objects_match_the_model(self) -> None:
        for storage in STORAGES:
            got = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["data"]["v"]
                   for o in self.store.items(storage)}
            assert got == _state_at(self.changes, storage, self.store.rv)
            keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in self.store.items(storage)]
            assert keys == sorted(keys)

    @invariant()
    def retained_revisions_match_the_model(self) -> None:
        for rv in range(self.store.log.compacted_rv, self.store.rv + 1):
            for storage in STORAGES:
                snap = self.store.snapshot_at(storage, rv)
                assert {k: o["data"]["v"] for k, o in snap.items()} == _state_at(self.changes, storage, rv)

    @invariant()
    def watches_deliver_every_later_event_once_in_order(self) -> None:
        for storage, since, watcher, received in self.watches:
            received += [orjson.loads(line) for line in watcher._lines]
            watcher._lines.clear()
            expected = [(rv, kind, key) for rv, kind, s, key, _ in self.changes if s == storage and rv > since]
            got = [(int(e["object"]["metadata"]["resourceVersion"]), e["type"],
                    (e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"])) for e in received]
            assert got == expected
            replayed = _state_at(self.changes, storage, since)
            for event in received:
                key = (event["object"]["metadata"]["namespace"], event["object"]["metadata"]["name"])
                if event["type"] == DELETED:
                    del replayed[key]
                else:
                    replayed[key] = event["object"]["data"]["v"]
            assert replayed == _state_at(self.changes, storage, self.store.rv)


StoreMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
test_store_matches_the_reference_model = StoreMachine.TestCase
