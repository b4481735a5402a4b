"""Job rules: pod failure policy, backoff, success policy, pending indexes, KEP-5547 compilation."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.rules import jobs as jr


def job(**spec):
    return {"metadata": {"name": "train", "namespace": "ml", "uid": "6a1f"}, "spec": spec}


def failed_pod(code=0, *, container="main", conditions=()):
    terminated = {"state": {"terminated": {"exitCode": code}}, "name": container}
    return {"metadata": {"name": "train-x", "namespace": "ml"},
            "status": {"phase": "Failed", "containerStatuses": [terminated], "conditions": list(conditions)}}


POLICY = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [5]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                    {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [5, 6]}}]}


@pytest.mark.parametrize(("pod", "expected"), [
    (failed_pod(5), ("FailJob", "Container main for pod ml/train-x failed with exit code 5 matching FailJob rule "
                                "at index 0")),
    (failed_pod(conditions=[{"type": "DisruptionTarget", "status": "True"}]),
     ("Ignore", "Pod ml/train-x has condition DisruptionTarget matching Ignore rule at index 1")),
    (failed_pod(7), ("Count", "Container main for pod ml/train-x failed with exit code 7 matching Count rule at "
                              "index 2")),
    (failed_pod(6), None),
], ids=["fail-job", "ignore-disruption", "count", "no-rule"])
def test_pod_failure_policy(pod, expected):
    assert jr.match_pod_failure_policy(job(podFailurePolicy=POLICY), pod) == expected


@pytest.mark.parametrize(("failures", "delay"), [(0, 0), (1, 10), (2, 20), (6, 320), (7, 600), (30, 600)],
                         ids=["none", "first", "second", "sixth", "capped", "far"])
def test_backoff_doubles_from_ten_seconds_to_ten_minutes(failures, delay):
    assert jr.backoff_delay(failures) == delay


@pytest.mark.parametrize(("rules", "completed", "expected"), [
    ([{"succeededIndexes": "0"}], {0}, 0),
    ([{"succeededIndexes": "0-2", "succeededCount": 2}], {1, 4}, None),
    ([{"succeededIndexes": "0-2", "succeededCount": 2}], {1, 2}, 0),
    ([{"succeededIndexes": "3"}, {"succeededCount": 2}], {0, 5}, 1),
], ids=["index-0", "count-short", "count-met", "second-rule"])
def test_success_policy(rules, completed, expected):
    assert jr.success_policy_match(job(successPolicy={"rules": rules}), completed) == expected


def test_pending_indexes_are_the_lowest_missing():
    assert jr.pending_indexes(6, {0, 2}, [1], 2) == [3, 4]
    assert jr.job_pod_name_prefix("x" * 70, 12) == "x" * 54 + "-12-"


@pytest.mark.parametrize(("scheduling", "parallelism", "expected"), [
    (None, 4, {"basic": {}}),
    ({"schedulingPolicy": {"gang": {}}}, 4, {"gang": {"minCount": 4}}),
    ({"schedulingPolicy": {"gang": {"minCount": 3}}}, 4, {"gang": {"minCount": 3}}),
    ({"schedulingPolicy": {"gang": {}}}, 0, {"gang": {"minCount": 1}}),
], ids=["omitted-is-basic", "gang-from-parallelism", "explicit-min-count", "clamped"])
def test_scheduling_policy(scheduling, parallelism, expected):
    assert jr.scheduling_policy(job(scheduling=scheduling, parallelism=parallelism)) == expected


def test_workload_and_pod_group_names():
    name = jr.workload_name(job())
    assert name.startswith("train-") and len(name) > len("train-")
    group = jr.pod_group_name(name, "train-pgt-0")
    assert group.startswith(f"{name}-train-pgt-0-") and len(jr.pod_group_name("w" * 300, "t" * 300)) <= 253


@pytest.mark.parametrize(("owner", "annotations", "template", "expected"), [
    (None, {}, {}, "both"),
    (None, {}, {"schedulingGroup": {"podGroupName": "mine"}}, "none"),
    ({"kind": "CronJob", "controller": True}, {}, {}, "none"),
    ({"kind": "JobSet", "controller": True}, {jr.GROUP_TEMPLATE_NAME: "workers"}, {}, "podgroup"),
], ids=["root", "bring-your-own-group", "cronjob-child", "delegated"])
def test_management_mode(owner, annotations, template, expected):
    meta = {"name": "j", "annotations": annotations, **({"ownerReferences": [owner]} if owner else {})}
    assert jr.management_mode({"metadata": meta, "spec": {"template": {"spec": template}}}, True) == expected
    assert jr.management_mode({"metadata": meta, "spec": {}}, False) == "none"
