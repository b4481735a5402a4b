"""CEL selectors too expensive to run are rejected at admission, over HTTP, as upstream does:
422 Invalid with a FieldValueForbidden cause "too complex, exceeds cost limit" on the
expression's field path, answered at once.

The reported selectors used to freeze the server or exhaust its memory, so the server runs in a
child process with a 1 GiB address-space limit: a regression fails these tests instead of
exhausting the machine."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from fakeapi.machinery.cel_cost import TOO_COMPLEX
from tests.unit.machinery.cel_inputs import ADMISSION_FREEZE, SCHEDULING_BLOWUP

_SERVE_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from fakeapi.cli import main
sys.exit(main(["serve", "--no-control-plane"]))
"""
RESOURCE = "/apis/resource.k8s.io/v1"
ORDINARY = 'device.attributes["gpu.example.com"].model == "a100"'


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with subprocess.Popen([sys.executable, "-c", _SERVE_LIMITED], stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.startswith("serving on "), line
            yield line.removeprefix("serving on ").strip()
        finally:
            child.terminate()
            child.wait(timeout=10)


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    return status, json.loads(raw), time.perf_counter() - start


def selectors(expression: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": ORDINARY}}, {"cel": {"expression": expression}}]


def claim_spec(expression: str) -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                  "selectors": selectors(expression)}}]}}


# (collection, object, the expression's field path)
KINDS = {
    "ResourceClaim": ("namespaces/default/resourceclaims",
                      lambda e: {"kind": "ResourceClaim", "spec": claim_spec(e)},
                      "spec.devices.requests[0].exactly.selectors[1].cel.expression"),
    "ResourceClaimTemplate": ("namespaces/default/resourceclaimtemplates",
                              lambda e: {"kind": "ResourceClaimTemplate", "spec": {"spec": claim_spec(e)}},
                              "spec.spec.devices.requests[0].exactly.selectors[1].cel.expression"),
    "DeviceClass": ("deviceclasses", lambda e: {"kind": "DeviceClass", "spec": {"selectors": selectors(e)}},
                    "spec.selectors[1].cel.expression"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("expression", [SCHEDULING_BLOWUP, ADMISSION_FREEZE], ids=["reported-181", "reported-416"])
def test_too_expensive_selector_is_forbidden(server: str, kind: str, expression: str) -> None:
    collection, build, field = KINDS[kind]
    obj = {"apiVersion": "resource.k8s.io/v1", "metadata": {"name": "too-complex"}, **build(expression)}
    status, body, seconds = post(f"{server}{RESOURCE}/{collection}", obj)
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert body["message"] == f'{kind}.resource.k8s.io "too-complex" is invalid: {field}: Forbidden: {TOO_COMPLEX}'
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden", "message": f"Forbidden: {TOO_COMPLEX}",
                                          "field": field}]
    # Before the limit: 1.7 s and std::bad_alloc for the 416-character one (an evaluation at admission).
    assert seconds < 1.0


def test_ordinary_selector_is_admitted(server: str) -> None:
    obj = {"apiVersion": "resource.k8s.io/v1", "metadata": {"name": "ordinary"}, "kind": "ResourceClaim",
           "spec": claim_spec('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0')}
    status, body, _ = post(f"{server}{RESOURCE}/namespaces/default/resourceclaims", obj)
    assert status == 201, body
