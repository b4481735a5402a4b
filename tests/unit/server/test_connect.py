"""Pod logs rendered from the pod: lifecycle lines, the annotations' text, PodLogOptions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fakeapi.errors import BadRequest, Invalid
from fakeapi.server.connect import LogLine, LogOptions, container_log, pick_container, render

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)


def pod(*containers: str, state: dict[str, Any] | None = None, annotations: dict[str, str] | None = None,
        init: tuple[str, ...] = ()) -> dict[str, Any]:
    statuses = [{"name": c, "state": state or {"running": {"startedAt": "2026-01-01T00:00:00Z"}}} for c in containers]
    return {"metadata": {"name": "p", "annotations": annotations or {}},
            "spec": {"containers": [{"name": c, "image": f"img-{c}"} for c in containers],
                     "initContainers": [{"name": c, "image": "i"} for c in init]},
            "status": {"containerStatuses": statuses}}


@pytest.mark.parametrize(("candidate", "requested", "chosen"), [
    (pod("a"), None, "a"),
    (pod("a", "b"), "b", "b"),
    (pod("a", "b", annotations={"kubectl.kubernetes.io/default-container": "b"}), None, "b"),
], ids=["only", "named", "default-annotation"])
def test_the_container_a_request_means(candidate: dict[str, Any], requested: str | None, chosen: str) -> None:
    assert pick_container(candidate, requested) == chosen


def test_several_containers_need_a_name() -> None:
    with pytest.raises(BadRequest, match=r"choose one of: \[a b\] or one of the init containers: \[setup\]"):
        pick_container(pod("a", "b", init=("setup",)), None)


def test_a_log_is_the_lifecycle_around_the_annotations() -> None:
    terminated = {"terminated": {"startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:05Z",
                                 "exitCode": 3, "reason": "Error"}}
    lines = container_log(pod("a", state=terminated, annotations={"fakeapi.dev/log": "one\ntwo",
                                                                  "fakeapi.dev/log.a": "\nthree\n"}), "a")
    assert [line.text for line in lines] == ['fakeapi: started container "a" (image img-a)', "one", "two", "three",
                                             'fakeapi: container "a" terminated with exit code 3 (Error)']
    assert lines[-1].time == "2026-01-01T00:00:05Z"


def test_a_waiting_container_has_no_log() -> None:
    with pytest.raises(BadRequest, match='container "a" in pod "p" is waiting to start: ImagePullBackOff'):
        container_log(pod("a", state={"waiting": {"reason": "ImagePullBackOff"}}), "a")


LINES = [LogLine("2026-01-01T00:00:00Z", "first"), LogLine("2026-01-01T00:05:00Z", "second"),
         LogLine("2026-01-01T00:09:00Z", "third")]


@pytest.mark.parametrize(("query", "out"), [
    ({}, b"first\nsecond\nthird\n"),
    ({"tailLines": "2"}, b"second\nthird\n"),
    ({"tailLines": "0"}, b""),
    ({"sinceSeconds": "120"}, b"third\n"),
    ({"sinceTime": "2026-01-01T00:05:00Z"}, b"second\nthird\n"),
    ({"limitBytes": "8"}, b"first\nse"),
    ({"timestamps": "true", "tailLines": "1"}, b"2026-01-01T00:09:00.000000000Z third\n"),
    # Further back than Python's datetime reaches (Go's reach year 0): every line.
    ({"sinceSeconds": "9223372036854775807"}, b"first\nsecond\nthird\n"),
    ({"sinceSeconds": "99999999999"}, b"first\nsecond\nthird\n"),
    ({"sinceTime": "0000-01-01T00:00:00Z"}, b"first\nsecond\nthird\n"),
    ({"sinceTime": "9999-12-31T23:59:59-01:00"}, b""),
], ids=["all", "tail", "tail-zero", "since-seconds", "since-time", "limit-bytes", "timestamps",
        "since-seconds-max", "since-seconds-before-year-1", "since-year-0", "since-year-10000"])
def test_log_options(query: dict[str, str], out: bytes) -> None:
    assert render(LINES, LogOptions.parse(query, "p", NOW)) == out


@pytest.mark.parametrize(("query", "error"), [
    ({"limitBytes": "0"}, (Invalid, "limitBytes: Invalid value: 0: must be greater than 0")),
    ({"sinceSeconds": "1", "sinceTime": "2026-01-01T00:00:00Z"},
     (Invalid, "at most one of `sinceTime` or `sinceSeconds` may be specified")),
    ({"tailLines": "x"}, (BadRequest, 'strconv.ParseInt: parsing "x": invalid syntax')),
    ({"sinceTime": "yesterday"}, (BadRequest, 'parsing time "yesterday"')),
], ids=["limit-zero", "both-since", "not-a-number", "bad-time"])
def test_bad_log_options(query: dict[str, str], error: tuple[type[Exception], str]) -> None:
    with pytest.raises(error[0], match=error[1]):
        LogOptions.parse(query, "p", NOW)
