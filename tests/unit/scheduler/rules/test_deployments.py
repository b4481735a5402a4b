"""Deployment arithmetic: the new set's size, old sets' scale-down, proportional scaling, annotations."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.rules import deployments as du
from fakeapi.scheduler.rules.daemons import daemon_node, daemon_pod_spec, should_run


def deployment(replicas, surge="25%", unavailable="25%", strategy="RollingUpdate", annotations=None):
    return {"metadata": {"name": "web", "generation": 2, "annotations": annotations or {}},
            "spec": {"replicas": replicas, "strategy": {"type": strategy, "rollingUpdate": {
                "maxSurge": surge, "maxUnavailable": unavailable}}}}


def rs(name, size, available=None, created="2027-01-01T00:00:00Z", revision=None):
    annotations = {du.REVISION: str(revision)} if revision is not None else {}
    return {"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations},
            "spec": {"replicas": size}, "status": {"availableReplicas": size if available is None else available}}


# controllers-notes §12 scenario 5: replicas 10, surge 3, unavailable 2.
@pytest.mark.parametrize(("old", "new", "expected"), [
    (rs("old", 10), rs("new", 0), 3), (rs("old", 8), rs("new", 3), 5), (rs("old", 10), rs("new", 3), 3),
    (rs("old", 0), rs("new", 12), 10),
], ids=["first-surge", "after-old-shrinks", "at-the-surge-limit", "above-replicas-shrinks"])
def test_new_replica_set_grows_within_max_surge(old, new, expected):
    assert du.new_rs_replicas(deployment(10), [old, new], new) == expected


def test_old_sets_shrink_within_max_unavailable_oldest_first():
    d = deployment(10)
    new = rs("new", 3, available=0)
    olds = [rs("older", 4, created="2027-01-01T00:00:00Z"), rs("old", 6, created="2027-01-02T00:00:00Z")]
    budget = du.max_scaled_down(d, [*olds, new], new)
    assert budget == 2  # 13 total - 8 minimum available - 3 new unavailable
    assert [(r["metadata"]["name"], size) for r, size in du.scale_down_old(olds, budget, unhealthy_only=False)] == \
        [("older", 2)]


def test_unhealthy_replicas_go_before_healthy_ones():
    olds = [rs("a", 4, available=1), rs("b", 6, available=6, created="2027-01-02T00:00:00Z")]
    assert [(r["metadata"]["name"], size) for r, size in du.scale_down_old(olds, 5, unhealthy_only=True)] == [("a", 1)]


@pytest.mark.parametrize(("replicas", "sizes", "expected"), [
    # 13 + surge 4 = 17: +7 in proportion (3.5 each, rounded down), the rest to the newest largest.
    (13, {"a": 5, "b": 5}, {"a": 8, "b": 9}),
    # 6 + surge 2 = 8: -2 in proportion (-1.6, -0.4 rounded up), the rest from the oldest largest.
    (6, {"a": 8, "b": 2}, {"a": 6, "b": 2}),
], ids=["grow", "shrink"])
def test_proportional_scaling_spreads_the_difference(replicas, sizes, expected):
    sets = [rs(name, size, created=f"2027-01-0{i + 1}T00:00:00Z") for i, (name, size) in enumerate(sizes.items())]
    result = du.proportions(deployment(replicas), sets)
    assert sum(result.values()) == replicas + du.fenceposts(deployment(replicas))[0]
    assert result == expected


def test_revision_annotations_on_reuse():
    d = deployment(3, annotations={"team": "ml", du.REVISION: "2", du.LAST_APPLIED: "{}"})
    reused = rs("web-a", 0, revision=1)
    annotations = du.rs_annotations(d, reused, 3)
    assert annotations == {"team": "ml", du.REVISION: "3", du.REVISION_HISTORY: "1"}
    assert du.replica_annotations(d) == {du.DESIRED_REPLICAS: "3", du.MAX_REPLICAS: "4"}


def test_recreate_has_no_surge_and_may_lose_everyone():
    assert du.fenceposts(deployment(4, strategy="Recreate")) == (0, 4)


NODE = {"metadata": {"name": "n1", "labels": {"gpu": "true"}}, "spec": {}}


@pytest.mark.parametrize(("spec", "node", "expected"), [
    ({}, NODE, (True, True)),
    ({"nodeSelector": {"gpu": "false"}}, NODE, (False, False)),
    ({}, {**NODE, "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}, (False, True)),
    ({}, {**NODE, "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]}}, (False, False)),
    ({}, {**NODE, "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]}},
     (True, True)),
], ids=["plain", "selector-mismatch", "no-schedule-taint", "no-execute-taint", "not-ready-tolerated"])
def test_daemon_pod_eligibility(spec, node, expected):
    assert should_run(spec, node) == expected


def test_daemon_pods_are_pinned_by_node_affinity():
    spec = daemon_pod_spec({"containers": [{"name": "c"}]}, "n1")
    assert daemon_node({"spec": spec}) == "n1" and "nodeName" not in spec
    assert {t["key"] for t in spec["tolerations"]} >= {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
