"""The pytest plugin as a user's project meets it: fixtures, markers and the failure dump."""

from __future__ import annotations

import pytest

from tests.e2e import UNRELATED_PLUGINS

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"

USER_TESTS = '''
import aiohttp
import pytest

POD = {"metadata": {"name": "stuck"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


async def test_fails_with_a_pending_pod(fake_api):
    async with aiohttp.ClientSession(base_url=fake_api.url) as session:
        async with session.post("/api/v1/namespaces/default/pods", json=POD) as resp:
            assert resp.status == 201
    assert False, "the pod never ran"


async def test_passes(fake_api):
    async with aiohttp.ClientSession(base_url=fake_api.url) as session:
        async with session.get("/version") as resp:
            assert resp.status == 200


async def test_fails_with_a_pod_that_fits_nowhere(fake_cluster):
    [pod] = await fake_cluster.apply({"apiVersion": "v1", "kind": "Pod", **POD, "metadata": {"name": "nowhere"}})
    await fake_cluster.events(pod, reason="FailedScheduling")
    assert False, "no node for the pod"


@pytest.mark.fakeapi(feature_gates="DRAWorkloadResourceClaims=false")
async def test_marker_sets_feature_gates(fake_cluster):
    assert fake_cluster.gates.DRAWorkloadResourceClaims is False
'''


def test_failing_test_reports_the_cluster_state_and_passing_ones_do_not(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess(*UNRELATED_PLUGINS, "-rA")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert out.count("fakeapi cluster") == 2
    result.stdout.fnmatch_lines(["*pods (1):*", "*default/stuck  Pending  node=-*", "*resourceclaims (0):*"])
    # The scheduler's events.k8s.io/v1 Event, read back as the core Event the report lists.
    result.stdout.fnmatch_lines(["*events (last *):*",
                                 "*Warning Pod/nowhere FailedScheduling: no nodes available to schedule pods"])
