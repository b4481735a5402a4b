"""Server-owned metadata values: uids."""

from __future__ import annotations

import uuid

from fakeapi.registry.meta import new_uid


def test_new_uids_are_distinct_version_4_uuids_in_canonical_form() -> None:
    uids = [new_uid() for _ in range(2000)]
    assert len(set(uids)) == len(uids)
    for uid in uids:
        parsed = uuid.UUID(uid)
        assert (str(parsed), parsed.version, parsed.variant) == (uid, 4, uuid.RFC_4122)
