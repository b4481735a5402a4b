"""Pure workload rules: victim order, fenceposts, hashes, index intervals, conditions."""

from __future__ import annotations

import pytest
from fakeapi.scheduler.rules.workloads import (
    format_intervals,
    parse_intervals,
    pods_to_delete,
    resolve_fenceposts,
    safe_encode,
    set_condition,
    template_hash,
    without_hash,
)

NOW = 1_800_000_000.0


def pod(name, *, node="", phase="Running", ready=True, created=NOW - 100, cost=None):
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                             "lastTransitionTime": "2027-01-15T08:00:00Z"}]}
    annotations = {"controller.kubernetes.io/pod-deletion-cost": str(cost)} if cost is not None else {}
    return {"metadata": {"name": name, "uid": name, "annotations": annotations,
                         "creationTimestamp": "2027-01-15T08:00:00Z" if created < NOW - 50 else "2027-01-15T08:59:00Z"},
            "spec": {"nodeName": node}, "status": status}


# controller-notes §12 scenario 1: A unscheduled, B not ready, C and D ready, D's node has a sibling.
SCENARIO = [pod("a", phase="Pending", ready=False), pod("b", node="n1", ready=False), pod("c", node="n2"),
            pod("d", node="n3")]
SIBLING = pod("x", node="n3")


@pytest.mark.parametrize(("count", "expected"), [
    (1, ["a"]), (2, ["a", "b"]), (3, ["a", "b", "d"]), (0, []),
], ids=["unscheduled-first", "then-not-ready", "then-colocated", "none"])
def test_victims_are_the_least_valuable_pods(count, expected):
    victims = pods_to_delete(SCENARIO, [*SCENARIO, SIBLING], count, NOW)
    assert [p["metadata"]["name"] for p in victims] == expected


def test_a_lower_deletion_cost_goes_first():
    pods = [pod("keep", node="n1", cost=10), pod("cheap", node="n2", cost=-5)]
    assert [p["metadata"]["name"] for p in pods_to_delete(pods, pods, 1, NOW)] == ["cheap"]


@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    ("25%", "25%", 10, (3, 2)), ("25%", "25%", 1, (1, 0)), ("0%", "10%", 3, (0, 1)), (0, 0, 5, (0, 1)),
    (2, "50%", 5, (2, 2)),
], ids=["ten", "one", "both-round-to-zero", "both-zero", "int-and-percent"])
def test_fenceposts_round_surge_up_and_unavailable_down(surge, unavailable, desired, expected):
    assert resolve_fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize(("indexes", "text"), [
    ([], ""), ([0], "0"), ([0, 2], "0,2"), ([1, 3, 4, 5, 7], "1,3-5,7"), ([5, 4, 3], "3-5"),
], ids=["none", "one", "apart", "mixed", "unsorted"])
def test_index_intervals_round_trip(indexes, text):
    assert format_intervals(indexes) == text
    assert parse_intervals(text) == set(indexes)


def test_template_hash_shape_and_collision_count():
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    first = template_hash(template)
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789") and 6 <= len(first) <= 10
    assert template_hash(template, 1) != first == template_hash(dict(template))
    assert safe_encode("0123") == "4567"  # each byte modulo 27 into the alphabet, as rand.SafeEncodeString


def test_equal_ignoring_the_hash_label():
    hashed = {"metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}}, "spec": {}}
    assert without_hash(hashed) == {"metadata": {"labels": {"app": "web"}}, "spec": {}}


def test_set_condition_keeps_the_transition_time_while_the_status_holds():
    first = set_condition([], "Ready", "True", "A", "", "t1")
    again = set_condition(first, "Ready", "True", "B", "m", "t2")
    flipped = set_condition(again, "Ready", "False", "C", "", "t3")
    assert again[0]["lastTransitionTime"] == "t1" and again[0]["reason"] == "B"
    assert flipped[0]["lastTransitionTime"] == "t3"
