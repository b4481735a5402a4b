"""The workload kinds' validation over HTTP: upstream's 422 messages, immutability, defaults, scale."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fakeapi.scheduler.client import GVR, ApiClient

from fakeapi.cluster import FakeCluster
from fakeapi.errors import Invalid

DEPLOYMENTS = GVR("apps", "v1", "deployments", True)
STATEFULSETS = GVR("apps", "v1", "statefulsets", True)
JOBS = GVR("batch", "v1", "jobs", True)
CRONJOBS = GVR("batch", "v1", "cronjobs", True)
PDBS = GVR("policy", "v1", "poddisruptionbudgets", True)

POD = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": POD}}
JOB_POD = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"}, "spec": {"template": JOB_POD}}


def changed(obj: dict[str, Any], *path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    cur = out
    for key in path[:-1]:
        cur = cur.setdefault(key, {})
    cur[path[-1]] = value
    return out


@pytest.fixture
async def api(fake_api: FakeCluster):
    async with ApiClient(fake_api.url) as client:
        yield client


CASES = [
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "template", "metadata", "labels", value={"app": "db"}),
     'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"db"}: '
     "`selector` does not match template `labels`"),
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "selector", value={}),
     'Deployment.apps "web" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment'),
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "strategy", value={"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": "0%"}}),
     'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": '
     "may not be 0 when `maxSurge` is 0"),
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "strategy", value={"type": "Recreate", "rollingUpdate": {}}),
     'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when '
     "strategy `type` is 'Recreate'"),
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "template", "spec", "restartPolicy", value="Never"),
     'Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": '
     'supported values: "Always"'),
    (DEPLOYMENTS, changed(DEPLOYMENT, "spec", "replicas", value=-1),
     'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    (JOBS, changed(changed(JOB, "spec", "completionMode", value="Indexed"), "spec", "parallelism", value=2),
     'Job.batch "pi" is invalid: spec.completions: Required value: when completion mode is Indexed'),
    (JOBS, changed(JOB, "spec", "template", "spec", "restartPolicy", value="Always"),
     'Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
     'supported values: "OnFailure", "Never"'),
    (JOBS, changed(changed(JOB, "spec", "template", "spec", "restartPolicy", value="OnFailure"), "spec",
                   "podFailurePolicy", value={"rules": [{"action": "Ignore", "onPodConditions": [
                       {"type": "DisruptionTarget"}]}]}),
     'Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
     'only "Never" is supported when podFailurePolicy is specified'),
    (CRONJOBS, {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
                "spec": {"schedule": "0 3 * *", "jobTemplate": {"spec": {"template": JOB_POD}}}},
     'CronJob.batch "nightly" is invalid: spec.schedule: Invalid value: "0 3 * *": '
     "expected exactly 5 fields, found 4: [0 3 * *]"),
    (CRONJOBS, {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "n" * 53},
                "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": JOB_POD}}}},
     f'CronJob.batch "{"n" * 53}" is invalid: metadata.name: Invalid value: "{"n" * 53}": '
     "must be no more than 52 characters"),
    *((CRONJOBS, {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
                  "spec": {"schedule": "@daily", "timeZone": zone, "jobTemplate": {"spec": {"template": JOB_POD}}}},
       f'CronJob.batch "nightly" is invalid: spec.timeZone: Invalid value: "{zone}": {message}')
      for zone, message in (
          ("Europe", "unknown time zone Europe"),  # a directory of the database
          ("Mars/Olympus_Mons", "unknown time zone Mars/Olympus_Mons"),
          ("Europe/" + "x" * 300, "unknown time zone Europe/" + "x" * 300),  # no lookup of a name that long
          ("../etc/passwd", "unknown time zone ../etc/passwd"),
          ("", "timeZone must be nil or non-empty string"),
          ("local", "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))),
    (PDBS, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
     "minAvailable and maxUnavailable cannot be both set"),
    (STATEFULSETS, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": POD,
                             "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}},
     'StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Forbidden: PersistentVolumeClaims are not '
     "served by fakeapi"),
]


@pytest.mark.parametrize(("gvr", "body", "message"), CASES, ids=[
    "selector-mismatch", "empty-selector", "zero-surge-and-unavailable", "recreate-with-rolling", "restart-never",
    "negative-replicas", "indexed-without-completions", "job-restart-always", "failure-policy-needs-never",
    "bad-schedule", "cronjob-name-too-long", "time-zone-directory", "time-zone-unknown", "time-zone-too-long",
    "time-zone-path", "time-zone-empty", "time-zone-local", "pdb-both", "no-volume-claims"])
async def test_invalid_workloads_are_422_with_upstreams_message(api: ApiClient, gvr: GVR, body: dict,
                                                                message: str) -> None:
    with pytest.raises(Invalid) as refused:
        await api.create(gvr, "default", body)
    assert message in refused.value.message


async def test_selectors_are_immutable_and_defaults_filled(api: ApiClient) -> None:
    created = await api.create(DEPLOYMENTS, "default", DEPLOYMENT)
    assert (created["spec"]["replicas"], created["spec"]["revisionHistoryLimit"],
            created["spec"]["progressDeadlineSeconds"]) == (1, 10, 600)
    moved = changed(created, "spec", "selector", value={"matchLabels": {"app": "web", "tier": "x"}})
    moved["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    with pytest.raises(Invalid) as refused:
        await api.update(DEPLOYMENTS, "default", moved)
    assert "spec.selector: Invalid value: " in refused.value.message
    assert refused.value.message.endswith("field is immutable")
    job = await api.create(JOBS, "default", JOB)
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
        "job-name": "pi"}
    assert (job["spec"]["completions"], job["spec"]["parallelism"], job["spec"]["backoffLimit"],
            job["spec"]["completionMode"]) == (1, 1, 6, "NonIndexed")
    with pytest.raises(Invalid) as refused:
        await api.patch(JOBS, "default", "pi", {"spec": {"completions": 3}})
    assert "spec.completions: Invalid value: 3: field is immutable" in refused.value.message


async def test_scale_subresource_reads_and_writes_replicas(api: ApiClient) -> None:
    await api.create(DEPLOYMENTS, "default", DEPLOYMENT)
    scale = await api.get(DEPLOYMENTS, "default", "web/scale")
    assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]) == (
        "Scale", "autoscaling/v1", {"replicas": 1}, {"replicas": 0, "selector": "app=web"})
    scaled = await api.patch(DEPLOYMENTS, "default", "web", {"spec": {"replicas": 4}}, subresource="scale")
    assert scaled["spec"]["replicas"] == 4
    assert (await api.get(DEPLOYMENTS, "default", "web"))["spec"]["replicas"] == 4
    with pytest.raises(Invalid) as refused:
        await api.update(DEPLOYMENTS, "default", {**scale, "spec": {"replicas": -2}}, subresource="scale")
    assert refused.value.message == ('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -2: '
                                     "must be greater than or equal to 0")
