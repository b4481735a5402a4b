"""The managedFields replay: recorded calls come back with the recorded results and share the
entries the server shared."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bench.bench_managedfields import Recorder, Replay
from fakeapi.machinery import fieldsv1
from fakeapi.models.listtypes import list_types_for

POD = list_types_for("", "Pod")


def _writes(record: Recorder) -> None:
    """A create, a status write sharing the stored entries, a client's PUT carrying copies of them."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    created = record(None, pod, manager="creator", api_version="v1", types=POD, now="T1", subresource="")
    status = {**created, "status": {"phase": "Running"}}
    updated = record(created, status, manager="kubelet", api_version="v1", types=POD, now="T2",
                     subresource="status")
    relabeled = copy.deepcopy(updated)
    relabeled["metadata"]["labels"] = {"a": "b"}
    record(updated, relabeled, manager="editor", api_version="v1", types=POD, now="T3", subresource="")


def test_recorded_calls_replay_to_the_recorded_results(tmp_path: Path) -> None:
    record = Recorder()
    _writes(record)
    path = tmp_path / "calls.jsonl"
    assert record.write(path) == 3
    replay = Replay.load(path)
    # Which input entries were entries an earlier call returned, as (call, position) of the call
    # that first returned them: the status write kept the creator's entry as it was.
    assert [call["old_entries"] for call in replay.calls] == [None, [[0, 0]], [[0, 0], [1, 1]]]
    assert [call["new_entries"] for call in replay.calls] == [None, [[0, 0]], [None, None]]
    fieldsv1._DECODED.clear()
    results = replay.run()
    replay.check(results)
    assert [m["manager"] for m in results[2]["metadata"]["managedFields"]] == ["creator", "kubelet", "editor"]
    replay.calls[2]["result"][2]["time"] = "T0"
    with pytest.raises(SystemExit, match=r"call 2 \(editor, main\): managedFields differ"):
        replay.check(results)


def test_creates_of_one_kind(tmp_path: Path) -> None:
    record = Recorder()
    _writes(record)
    path = tmp_path / "calls.jsonl"
    record.write(path)
    assert [call["manager"] for call in Replay.load(path, "Pod").calls] == ["creator"]
    assert Replay.load(path, "ConfigMap").calls == []
