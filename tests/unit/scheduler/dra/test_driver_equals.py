"""Selectors that only compare ``device.driver`` with a literal skip the CEL engine: which
expressions qualify, and that their verdicts and errors are the engine's."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.dra.devices import DriverEquals, driver_equality
from fakeapi.scheduler.dra.errors import AllocationError

from fakeapi.machinery.cel import CelError, compile_selector, device_env

from .builders import CLASS_A, DRIVER_A, claim, device, device_class, request, run, slice_, summary

RECOGNISED = [
    pytest.param('device.driver == "gpu.example.com"', "gpu.example.com", id="driver-first"),
    pytest.param('"gpu.example.com" == device.driver', "gpu.example.com", id="literal-first"),
    pytest.param("device.driver == 'gpu.example.com'", "gpu.example.com", id="single-quotes"),
    pytest.param(' \t\n device.driver=="gpu.example.com"\r\f ', "gpu.example.com", id="cel-whitespace"),
    pytest.param('device.driver == ""', "", id="empty-literal"),
    pytest.param('device.driver == "gpü"', "gpü", id="non-ascii"),
]

NOT_RECOGNISED = [
    pytest.param('device.driver == "gpu\\u002eexample.com"', id="escape"),
    pytest.param('device.driver == r"gpu.example.com"', id="raw-string"),
    pytest.param('device.driver == """gpu.example.com"""', id="triple-quoted"),
    pytest.param('device.driver != "gpu.example.com"', id="not-equal"),
    pytest.param('device.driver == "gpu.example.com" || true', id="more-after"),
    pytest.param('(device.driver == "gpu.example.com")', id="parenthesised"),
    pytest.param('device.driver\u00a0== "gpu.example.com"', id="non-cel-whitespace"),
    pytest.param('device.driver == "a" "b"', id="two-literals"),
    pytest.param('device.attributes["gpu.example.com"].driver == "x"', id="an-attribute"),
]


@pytest.mark.parametrize(("expression", "driver"), RECOGNISED)
def test_driver_comparisons_are_recognised(expression, driver):
    assert driver_equality(expression) == DriverEquals(driver)


@pytest.mark.parametrize("expression", NOT_RECOGNISED)
def test_other_selectors_go_to_cel(expression):
    assert driver_equality(expression) is None


@pytest.mark.parametrize(("expression", "driver"), RECOGNISED)
@pytest.mark.parametrize("device_driver", ["gpu.example.com", "other.example.com", "", "gpü"])
def test_verdict_is_the_cel_engines(expression, driver, device_driver):
    env = device_env(device_driver, {"name": "d", "attributes": {"model": {"string": "a100"}}})
    assert driver_equality(expression).evaluate(env) is compile_selector(expression).evaluate(env)


def test_allocation_through_a_driver_class_places_as_before():
    slices = [slice_("slice-1", device("device-1"), device("device-2"))]
    assert summary(run(slices, [claim("claim-0", request(count=2))])) == [
        [("req-0", DRIVER_A, "pool-1", "device-1"), ("req-0", DRIVER_A, "pool-1", "device-2")]]
    other = device_class("class-a", "other.example.com")
    assert run(slices, [claim("claim-0", request())], classes=(other,)) is None


def test_a_device_cel_cannot_read_still_fails_a_driver_class():
    # Upstream converts every attribute before evaluating any selector: a bad version is an
    # error even for a selector that never reads it.
    bad = device("device-1").with_attrs(driverVersion=("not-a-version",))
    with pytest.raises(AllocationError, match="CEL runtime error"):
        run([slice_("slice-1", bad)], [claim("claim-0", request())], classes=(CLASS_A,))
    with pytest.raises(CelError):
        device_env(DRIVER_A, bad)
