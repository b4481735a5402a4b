"""The runtime cost budget of CEL selectors: what exceeds it fails with upstream's error, for the
CEL adapter and for the allocator, instead of running out of memory or time.

The reported selectors run in a child process with a 1 GiB address-space limit, so that a
regression fails the test instead of exhausting the machine."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fakeapi.scheduler.dra.allocator import AllocationError

from fakeapi.machinery.cel import CelError, compile_selector, device_env
from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_COST, COST_LIMIT_EXCEEDED
from tests.unit.machinery.cel_inputs import ADMISSION_FREEZE, SCHEDULING_BLOWUP

from .builders import claim, device, request, run, slice_

DEVICE = {"name": "gpu-0", "attributes": {"model": {"string": "a100"}}, "capacity": {"memory": {"value": "40Gi"}}}

_CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from fakeapi.machinery.cel import compile_selector, device_env
expression, device = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
try:
    selector = compile_selector(expression)
    outcome = repr(selector.evaluate(device_env("gpu.example.com", device)))
except Exception as err:
    outcome = f"{type(err).__name__}: {err}"
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - start}))
"""


def compile_and_evaluate_limited(expression: str) -> dict[str, object]:
    """compile_selector + evaluate in a child limited to 1 GiB of address space."""
    done = subprocess.run([sys.executable, "-c", _CHILD, expression, json.dumps(DEVICE)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("expression", [SCHEDULING_BLOWUP, ADMISSION_FREEZE], ids=["reported-181", "reported-416"])
def test_reported_selectors_are_refused_not_run(expression: str) -> None:
    # Before the budget: MemoryError (std::bad_alloc) after 1.1-1.7 s.
    result = compile_and_evaluate_limited(expression)
    assert result["outcome"] == f"CelError: {COST_LIMIT_EXCEEDED}"
    assert result["seconds"] < 0.5


def env(**attributes: dict[str, object]) -> object:
    return device_env("gpu.example.com", {"name": "d", "attributes": attributes})


def test_engine_iteration_budget_is_the_cost_limit_error() -> None:
    # Cheap enough for the estimate, but the engine stops after 10,000 iterations.
    items = "[" + ",".join(["1"] * 101) + "]"
    selector = compile_selector(f"{items}.all(x, {items}.all(y, x == y || true))")
    assert selector.max_cost <= CEL_SELECTOR_EXPRESSION_MAX_COST
    with pytest.raises(CelError, match=COST_LIMIT_EXCEEDED):
        selector.evaluate(env())


def test_admission_probe_survives_engine_errors() -> None:
    # A dyn-valued selector is probed at compile time; the engine's budget error is not a
    # compile error (it used to escape as a RuntimeError, a 500 at admission).
    items = "[" + ",".join(["1"] * 101) + "]"
    compile_selector(f'{items}.all(x, {items}.all(y, true)) ? device.attributes["d"].ok : false')


def test_admission_probes_only_cheap_selectors() -> None:
    # The probe evaluation that finds non-bool results runs in the server's event loop, so only
    # for selectors estimated at a few milliseconds; this one (~50,000) is left to runtime.
    items = "[" + ",".join(["1"] * 90) + "]"
    with pytest.raises(CelError, match="must evaluate to bool"):
        compile_selector("[1, 2].all(x, x > 0) ? device.driver : false")
    selector = compile_selector(f"{items}.all(x, {items}.all(y, x == y)) ? device.driver : false")
    with pytest.raises(CelError, match="could not be converted to bool"):
        selector.evaluate(env())


def test_device_beyond_api_limits_is_estimated_with_its_own_sizes() -> None:
    # Within the limits (32 attributes) this costs ~80k; this device has 400 attributes.
    selector = compile_selector('device.attributes["gpu.example.com"].all(a, '
                                'device.attributes["gpu.example.com"].all(b, a != b || a == "x"))')
    assert selector.max_cost <= CEL_SELECTOR_EXPRESSION_MAX_COST
    assert selector.evaluate(env(**{f"a{i}": {"int": i} for i in range(32)})) is False
    with pytest.raises(CelError, match=COST_LIMIT_EXCEEDED):
        selector.evaluate(env(**{f"a{i}": {"int": i} for i in range(400)}))


def test_ordinary_selectors_still_evaluate() -> None:
    selector = compile_selector('device.attributes["gpu.example.com"].model == "a100"')
    assert selector.evaluate(device_env("gpu.example.com", DEVICE)) is True


def test_allocator_reports_the_cost_limit_for_the_claim() -> None:
    # Upstream: claim default/c: selector #0: CEL runtime error: operation cancelled: actual cost limit exceeded
    # (an expression that is safe to run without the budget: the engine stops it after 10,000 iterations).
    items = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    too_expensive = "".join(f"{items}.all(x{i}, " for i in range(7)) + "true" + ")" * 7
    slices = [slice_("slice-1", device("device-1"))]
    with pytest.raises(AllocationError, match=f"claim default/c: selector #0 on device driver-a/pool-1/device-1: "
                                              f"CEL runtime error: {COST_LIMIT_EXCEEDED}"):
        run(slices, [claim("c", request(selectors=(too_expensive,)))])
