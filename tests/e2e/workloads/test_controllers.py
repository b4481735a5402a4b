"""The workload controllers through the API: rollouts within their bounds, replacement and victims,
Jobs that retry and fail, StatefulSet order, DaemonSet placement, CronJobs on an advanced clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fakeapi.fixtures import wait_for
from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.controllers.podcontrol import CRONJOBS, DAEMONSETS, DEPLOYMENTS, JOBS, REPLICASETS, STATEFULSETS

from tests.e2e.workloads.conftest import (
    NS,
    cluster_with_clock,
    deployment,
    has_condition,
    job,
    live,
    node,
    pods_of,
    template,
    wait_status,
)


def ready(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in live(pods) if any(c["type"] == "Ready" and c["status"] == "True"
                                          for c in p["status"].get("conditions") or [])]


async def test_rollout_stays_within_max_surge_and_max_unavailable() -> None:
    async with cluster_with_clock() as (_, api, clock):
        async def step() -> None:  # every pod started, then its ready-after passes
            await wait_for(lambda: _settled(api), message="the pods to start")
            await clock.advance(10)

        slow = template("web", annotations={"fakeapi.dev/ready-after": "10s"})
        spec = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}
        await api.create(DEPLOYMENTS, NS, deployment("web", 4, slow, **spec))
        while (await api.get(DEPLOYMENTS, NS, "web")).get("status", {}).get("availableReplicas") != 4:
            await step()
        await api.patch(DEPLOYMENTS, NS, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "nginx:2"}]}}}}, patch_type="strategic")
        steps = 0
        while True:
            pods = live(await pods_of(api, "app=web"))
            assert len(pods) <= 5, "more than replicas + maxSurge pods"
            assert len(ready(pods)) >= 4, "fewer than replicas - maxUnavailable ready pods"
            status = (await api.get(DEPLOYMENTS, NS, "web")).get("status", {})
            if status.get("updatedReplicas") == status.get("availableReplicas") == status.get("replicas") == 4 \
                    and status.get("observedGeneration") == 2:
                break
            await step()
            steps += 1
        assert steps >= 4  # one new pod at a time: the surge is 1
        images = {p["spec"]["containers"][0]["image"] for p in live(await pods_of(api, "app=web"))}
        assert images == {"nginx:2"}
        done = await api.get(DEPLOYMENTS, NS, "web")
        assert has_condition(done, "Progressing", "NewReplicaSetAvailable")


async def _count(api: ApiClient, label: str, n: int) -> bool:
    return len(live(await pods_of(api, label))) == n


async def _settled(api: ApiClient) -> bool:
    pods = live(await pods_of(api, "app=web"))
    return all(p["status"].get("phase") == "Running" for p in pods)


async def test_a_rollout_waiting_for_its_deadline_holds_one_timer_however_often_it_syncs() -> None:
    # Every sync of an unfinished rollout asks to be requeued at its progress deadline; as
    # client-go's AddAfter, the key waits on one timer (each sync had added one).
    async with cluster_with_clock() as (_, api, clock):
        await api.create(DEPLOYMENTS, NS, deployment("web", 2, template("web", annotations={
            "fakeapi.dev/ready-after": "1h"})))
        await wait_for(lambda: _running(api, "app=web", 2), message="2 running pods")
        await wait_status(api, DEPLOYMENTS, "web", lambda d: d["status"].get("observedGeneration") == 1)
        timers = clock.pending
        for generation in range(2, 7):  # each patch a new generation, so a sync the status shows
            await api.patch(DEPLOYMENTS, NS, "web", {"spec": {"revisionHistoryLimit": generation}})
            await wait_status(api, DEPLOYMENTS, "web",
                              lambda d, g=generation: d["status"].get("observedGeneration") == g)
        assert clock.pending == timers
        assert not has_condition(await api.get(DEPLOYMENTS, NS, "web"), "Available")


async def test_deleted_pod_is_replaced_and_scale_down_picks_the_least_valuable(api: ApiClient) -> None:
    await api.create(REPLICASETS, NS, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                                       "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "rs"}},
                                                "template": template("rs")}})
    pods = await wait_for(lambda: _running(api, "app=rs", 3), message="3 running pods")
    await api.delete(PODS, NS, pods[0]["metadata"]["name"])
    await wait_for(lambda: _running(api, "app=rs", 3, without=pods[0]["metadata"]["name"]), message="a replacement")
    # A fourth pod that cannot be scheduled: the ReplicaSet adopts it, and scaling down removes it first.
    stray = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"app": "rs"}},
             "spec": {"nodeSelector": {"nowhere": "true"}, "containers": [{"name": "main", "image": "nginx:1"}]}}
    await api.create(PODS, NS, stray)
    await wait_for(lambda: _count(api, "app=rs", 3), message="the surplus pod to be removed")
    names = {p["metadata"]["name"] for p in live(await pods_of(api, "app=rs"))}
    assert "stray" not in names  # unscheduled goes first, not a running pod
    await api.patch(REPLICASETS, NS, "rs", {"spec": {"replicas": 1}})
    await wait_for(lambda: _count(api, "app=rs", 1), message="scale down to 1")
    rs = await wait_status(api, REPLICASETS, "rs", lambda r: r["status"].get("replicas") == 1)
    assert rs["status"]["availableReplicas"] == 1 and rs["status"]["observedGeneration"] == 2


async def _running(api: ApiClient, label: str, n: int, without: str = "") -> list[dict[str, Any]] | None:
    pods = [p for p in live(await pods_of(api, label)) if p["status"].get("phase") == "Running"]
    return pods if len(pods) == n and all(p["metadata"]["name"] != without for p in pods) else None


async def test_failing_job_retries_up_to_its_backoff_limit_then_fails() -> None:
    async with cluster_with_clock() as (_, api, clock):
        failing = template("crash", annotations={"fakeapi.dev/run-for": "1s", "fakeapi.dev/exit-code": "2"},
                           restart="Never")
        await api.create(JOBS, NS, job("crash", failing, backoffLimit=2))
        for attempt in range(1, 4):
            await wait_for(lambda: _running(api, "job-name=crash", 1), message=f"attempt {attempt} running")
            await clock.advance(1)  # the pod exits 2
            await wait_status(api, JOBS, "crash", lambda j, n=attempt: j["status"].get("failed") == n)
            await clock.advance(10 * 2 ** (attempt - 1))  # the replacement backoff: 10 s, 20 s
        done = await wait_status(api, JOBS, "crash", lambda j: has_condition(j, "Failed"))
        failed = next(c for c in done["status"]["conditions"] if c["type"] == "Failed")
        assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded",
                                                         "Job has reached the specified backoff limit")
        assert has_condition(done, "FailureTarget", "BackoffLimitExceeded")
        assert done["status"]["failed"] == 3 and not done["status"].get("active")
        pods = await pods_of(api, "job-name=crash")
        assert all(not p["metadata"].get("finalizers") for p in pods)  # tracking finalizers released
        exit_codes = {p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] for p in pods}
        assert exit_codes == {2}


async def test_statefulset_creates_ordinals_in_order_and_daemonset_follows_nodes(api: ApiClient) -> None:
    await api.create(STATEFULSETS, NS, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                                        "spec": {"replicas": 3, "serviceName": "db",
                                                 "selector": {"matchLabels": {"app": "db"}},
                                                 "template": template("db")}})
    sts = await wait_status(api, STATEFULSETS, "db", lambda s: s["status"].get("readyReplicas") == 3)
    pods = sorted(await pods_of(api, "app=db"), key=lambda p: p["metadata"]["creationTimestamp"])
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    assert [(p["spec"]["hostname"], p["spec"]["subdomain"]) for p in pods] == [(f"db-{i}", "db") for i in range(3)]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {sts["status"]["updateRevision"]}
    await api.create(DAEMONSETS, NS, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                                      "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                               "template": template("agent")}})
    await wait_status(api, DAEMONSETS, "agent", lambda d: d["status"].get("numberReady") == 2)
    await api.create(NODES, None, node("node-c"))
    await api.create(NODES, None, node("node-d", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]))
    ds = await wait_status(api, DAEMONSETS, "agent", lambda d: d["status"].get("numberReady") == 3)
    assert ds["status"]["desiredNumberScheduled"] == 3  # the tainted node is not eligible
    assert sorted(p["spec"]["nodeName"] for p in await pods_of(api, "app=agent")) == ["node-a", "node-b", "node-c"]


async def test_cronjob_runs_on_an_advanced_clock() -> None:
    """Each advance settles the cluster: what the time sets off has happened, at its own time,
    when it returns, so the test reads the outcome without waiting and the stamps are exact."""
    async with cluster_with_clock() as (_, api, clock):
        created = await api.create(CRONJOBS, NS, {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
            "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": 1,
                     "jobTemplate": {"spec": {"template": template(
                         "tick", annotations={"fakeapi.dev/run-for": "30s"}, restart="Never")}}}})
        assert not (await api.list(JOBS, NS))["items"]
        # Just past the first */5 boundary after the CronJob's creation: each Job's 30 s run then
        # ends well before the next boundary, wherever the wall clock stood when the test began.
        boundary = (int(_epoch(created["metadata"]["creationTimestamp"])) // 300 + 1) * 300
        await clock.advance(boundary + 10 - clock.now())
        first = await _jobs(api, 1)
        assert first is not None, "the first scheduled Job"
        scheduled = first[0]["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        assert scheduled == _stamp(boundary)
        assert first[0]["metadata"]["name"] == f"tick-{boundary // 60}"
        assert first[0]["status"]["startTime"] == _stamp(boundary)
        assert await _running(api, "app=tick", 1), "the Job's pod runs"
        await clock.advance(30)  # the Job's pod ran 30 s and succeeded, at boundary + 30
        done = await api.get(JOBS, NS, first[0]["metadata"]["name"])
        assert has_condition(done, "Complete") and done["status"]["completionTime"] == _stamp(boundary + 30)
        # One advance across the next boundary: the second Job runs from +300 to +330, and the
        # history limit of 1 removes the first.
        await clock.advance(300)
        second = await _jobs(api, 1, other_than=first[0]["metadata"]["name"])
        assert second is not None, "the second Job, and the first removed by the history limit"
        assert (second[0]["status"]["startTime"], second[0]["status"]["completionTime"]) == (
            _stamp(boundary + 300), _stamp(boundary + 330))
        cronjob = await api.get(CRONJOBS, NS, "tick")
        assert (cronjob["status"]["lastScheduleTime"], cronjob["status"]["lastSuccessfulTime"]) == (
            _stamp(boundary + 300), _stamp(boundary + 330))
        assert not cronjob["status"].get("active")


async def _jobs(api: ApiClient, n: int, other_than: str = "") -> list[dict[str, Any]] | None:
    jobs = [j for j in (await api.list(JOBS, NS))["items"] if not j["metadata"].get("deletionTimestamp")]
    return jobs if len(jobs) == n and all(j["metadata"]["name"] != other_than for j in jobs) else None


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
