"""Server-owned metadata values: uids."""

from __future__ import annotations

import os
import sys
import uuid

import pytest

from fakeapi.registry.meta import new_uid, set_identity
from tests.unit.registry.builders import kind, new_registry


def test_new_uids_are_distinct_version_4_uuids_in_canonical_form() -> None:
    uids = [new_uid() for _ in range(2000)]
    assert len(set(uids)) == len(uids)
    for uid in uids:
        parsed = uuid.UUID(uid)
        assert (str(parsed), parsed.version, parsed.variant) == (uid, 4, uuid.RFC_4122)


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_a_forked_child_draws_other_uids() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next uids, then out without running pytest's teardown
        os.write(write, " ".join(new_uid() for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        childs = pipe.read().split()
    os.waitpid(pid, 0)
    ours = [new_uid() for _ in range(3)]
    assert len(childs) == 3 and not set(childs) & set(ours)


CM = ("v1", "ConfigMap")
CONFIGMAPS = kind(new_registry(), "configmaps")


@pytest.mark.parametrize(("obj", "keys"), [
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {}}, ["apiVersion", "kind", "metadata", "data"]),
    ({"metadata": {}, "kind": "ConfigMap", "apiVersion": "v1", "data": {}}, ["apiVersion", "kind", "metadata", "data"]),
    ({"kind": "ConfigMap", "apiVersion": "v1"}, ["apiVersion", "kind"]),
    ({"apiVersion": "v2", "kind": "ConfigMap", "data": {}}, ["apiVersion", "kind", "data"]),
    ({"apiVersion": "v1", "kind": "Secret"}, ["apiVersion", "kind"]),
    ({"apiVersion": "v1"}, ["apiVersion", "kind"]),
    ({}, ["apiVersion", "kind"]),
], ids=["already-first", "last", "swapped", "other-version", "other-kind", "no-kind", "empty"])
def test_identity_is_the_served_kind_first(obj: dict, keys: list[str]) -> None:
    set_identity(CONFIGMAPS, obj)
    assert list(obj) == keys
    assert (obj["apiVersion"], obj["kind"]) == CM
