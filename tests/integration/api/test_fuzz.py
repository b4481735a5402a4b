"""Fuzzing the served API from its own ``/openapi/v3`` documents with schemathesis: no answer is a
5xx, and every error is a ``metav1.Status`` (kind Status, apiVersion v1, status Failure, code equal
to the HTTP status, a message).

Each group-version document is loaded on its own, as clients do (the root index only points at
them); every operation gets ``FAKEAPI_FUZZ_EXAMPLES`` generated requests, 1 in the suite with a
fixed seed (``make fuzz`` runs many more).  A fuzzed ``watch=true`` is dropped: a watch holds its
connection open by design (``test_watch.py`` covers watches).  schemathesis calls synchronously,
so the cluster serves from a thread of its own.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings

from fakeapi.cluster import FakeCluster
from fakeapi.registry.kinds import KINDS

EXAMPLES = int(os.environ.get("FAKEAPI_FUZZ_EXAMPLES", "1"))
# Every served group version has a document of its own.
GROUP_VERSIONS = sorted({f"apis/{k.group}/{k.version}" if k.group else f"api/{k.version}" for k in KINDS})


@pytest.fixture
def server_url() -> Iterator[str]:
    """A fresh API server, serving from its own thread and event loop until the test ends."""
    ready = threading.Event()
    running: dict[str, Any] = {}

    async def serve() -> None:
        stop = asyncio.Event()
        async with FakeCluster(control_plane=False) as cluster:
            running.update(url=cluster.url, loop=asyncio.get_running_loop(), stop=stop)
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(10), "the server did not start"
    yield running["url"]
    running["loop"].call_soon_threadsafe(running["stop"].set)
    thread.join(10)


def status_problem(response: requests.Response) -> str | None:
    """What is wrong with an answer: a 5xx, or an error that is not a proper Status."""
    code = response.status_code
    if code >= 500:
        return f"{code}: {response.text[:300]}"
    if code < 400:
        return None
    try:
        body: Any = response.json()
    except ValueError:
        return f"{code} is not JSON: {response.text[:300]}"
    expected = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    if not isinstance(body, dict) or {k: body.get(k) for k in expected} != expected or not body.get("message"):
        return f"{code} is not a failure Status: {response.text[:300]}"
    return None


def test_status_problem_flags_what_it_should() -> None:
    def answer(code: int, body: bytes) -> requests.Response:
        response = requests.Response()
        response.status_code, response._content = code, body
        return response

    good = b'{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"message":"x"}'
    assert status_problem(answer(404, good)) is None
    assert status_problem(answer(200, b"{}")) is None
    assert status_problem(answer(500, good.replace(b"404", b"500"))).startswith("500")
    assert "not JSON" in status_problem(answer(404, b"oops"))
    assert "not a failure Status" in status_problem(answer(409, good))  # code differs from the answer's
    assert "not a failure Status" in status_problem(answer(404, good.replace(b'"x"', b'""')))


@pytest.mark.parametrize("group_version", GROUP_VERSIONS)
def test_fuzzed_requests_get_no_5xx_and_proper_status_errors(server_url: str, group_version: str) -> None:
    session = requests.Session()
    document = session.get(f"{server_url}/openapi/v3/{group_version}", timeout=10).json()
    operations = [result.ok() for result in schemathesis.openapi.from_dict(document).get_all_operations()]
    assert operations, f"{group_version} documents no operation"
    problems: list[str] = []
    for operation in operations:

        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def call(case: Any) -> None:
            if isinstance(case.query, dict):
                case.query.pop("watch", None)
            response = case.call(base_url=server_url, session=session, timeout=10)
            problem = status_problem(response)
            if problem is not None:
                problems.append(f"{problem}\n  {case.as_curl_command()}")

        call()
    assert not problems, "\n".join(problems)
