"""Leader election with the official client's ``kubernetes.leaderelection`` over a coordination.k8s.io
Lease: two candidates, one leader; when the leader stops renewing, the other takes over once the
lease expires (the shortest durations the library accepts: 3 s lease, 1 s retry)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest
from fakeapi.fixtures.plugin import wait_for
from kubernetes import client
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call

LOCK = "controller-leader"


class Killed(Exception):
    """Raised into a killed candidate's election loop, which ends its thread."""


class Candidate:
    """One replica of a controller: runs the library's election loop in a thread until killed."""

    def __init__(self, identity: str, api_client: client.ApiClient) -> None:
        self.identity = identity
        self.leading = threading.Event()
        self.killed = False
        lock = LeaseLock(LOCK, "default", identity)
        lock.api_instance = client.CoordinationV1Api(api_client)
        read = lock.get

        def get(name: str, namespace: str) -> tuple[bool, object]:
            if self.killed:
                raise Killed  # the process died: it reads and renews nothing any more
            return read(name, namespace)

        lock.get = get  # type: ignore[method-assign]
        config = electionconfig.Config(lock, lease_duration=3, renew_deadline=2, retry_period=1,
                                       onstarted_leading=self.leading.set, onstopped_leading=lambda: None)
        election = leaderelection.LeaderElection(config)

        def run() -> None:
            with contextlib.suppress(Killed):
                election.run()

        self.thread = threading.Thread(target=run, daemon=True, name=f"candidate-{identity}")

    def kill(self) -> None:
        self.killed = True


@pytest.fixture
def candidates(api_client: client.ApiClient) -> Iterator[list[Candidate]]:
    pair = [Candidate("replica-a", api_client), Candidate("replica-b", api_client)]
    yield pair
    for candidate in pair:
        candidate.kill()
    for candidate in pair:
        candidate.thread.join(timeout=5)


async def test_one_leader_then_failover_when_it_stops_renewing(fake_api: FakeCluster, api_client: client.ApiClient,
                                                               candidates: list[Candidate]) -> None:
    coordination = client.CoordinationV1Api(api_client)
    for candidate in candidates:
        candidate.thread.start()

    leader = await wait_for(lambda: next((c for c in candidates if c.leading.is_set()), None),
                            message="a leader to be elected")
    follower = next(c for c in candidates if c is not leader)
    lease = await call(coordination.read_namespaced_lease, LOCK, "default")
    assert lease.spec.holder_identity == leader.identity and lease.spec.lease_duration_seconds == 3
    assert not follower.leading.is_set()

    leader.kill()

    await wait_for(follower.leading.is_set, timeout=15, message="the follower to take over")
    lease = await call(coordination.read_namespaced_lease, LOCK, "default")
    assert lease.spec.holder_identity == follower.identity
    assert lease.spec.renew_time >= lease.spec.acquire_time
