"""Backoff: capped exponential delays, counted per key, with optional jitter."""

import pytest
from fakeapi.scheduler.backoff import Backoff


# Each caller's parameters: work queue (5 ms .. 30 s), reflector (50 ms .. 2 s), scheduling queue (1 s .. 10 s).
@pytest.mark.parametrize(
    ("base", "cap", "failures", "expected"),
    [
        (0.005, 30.0, 0, 0.005),
        (0.005, 30.0, 1, 0.01),
        (0.005, 30.0, 3, 0.04),
        (0.005, 30.0, 19, 30.0),
        (0.005, 30.0, 5000, 30.0),
        (0.05, 2.0, 5, 1.6),
        (0.05, 2.0, 6, 2.0),
        (1.0, 10.0, 3, 8.0),
        (1.0, 10.0, 4, 10.0),
    ],
    ids=["workqueue-first", "workqueue-second", "workqueue-fourth", "workqueue-capped", "huge-exponent",
         "reflector-below-cap", "reflector-capped", "queue-below-cap", "queue-capped"],
)
def test_delay(base, cap, failures, expected):
    assert Backoff(base, cap).delay(failures) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(1, 0.005), (2, 0.01), (4, 0.04), (20, 30.0), (200, 30.0)],
    ids=["first", "second", "fourth", "capped", "huge-exponent"],
)
def test_when_counts_failures_per_key(failures, expected):
    backoff: Backoff[str] = Backoff(0.005, 30.0)
    delays = [backoff.when("k") for _ in range(failures)]
    assert delays[-1] == pytest.approx(expected)
    assert backoff.retries("k") == failures
    assert backoff.when("other") == pytest.approx(0.005), "backoff is per key"


def test_forget_starts_over():
    backoff: Backoff[str] = Backoff(0.005, 30.0)
    for _ in range(5):
        backoff.when("k")
    backoff.forget("k")
    assert backoff.retries("k") == 0
    assert backoff.when("k") == pytest.approx(0.005)
    backoff.forget("never-failed")   # no error for an unknown key


@pytest.mark.parametrize(("failures", "nominal"), [(0, 0.05), (3, 0.4), (10, 2.0)],
                         ids=["first", "growing", "capped"])
def test_jitter_stays_within_its_band(failures, nominal):
    backoff: Backoff[str] = Backoff(0.05, 2.0, jitter=0.2)
    delays = [backoff.delay(failures) for _ in range(200)]
    assert all(nominal * 0.8 <= d <= nominal * 1.2 for d in delays)
    assert len(set(delays)) > 1, "jitter must vary the delay"
