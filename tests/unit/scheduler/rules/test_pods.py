"""Pod lifecycle predicates: terminal (phase) versus done (will never run)."""

import pytest
from fakeapi.scheduler.rules.pods import as_pod, is_assigned, is_pod_done, is_pod_terminal, is_terminating, node_of


def pod(phase=None, node="", deleting=False):
    p = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {}, "status": {}}
    if node:
        p["spec"]["nodeName"] = node
    if phase:
        p["status"]["phase"] = phase
    if deleting:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return p


# (pod, terminal, done): "done" adds pods deleted before they were ever scheduled.
CASES = [
    (pod(), False, False),
    (pod(phase="Pending", node="n"), False, False),
    (pod(phase="Running", node="n"), False, False),
    (pod(phase="Succeeded", node="n"), True, True),
    (pod(phase="Failed"), True, True),
    (pod(deleting=True), False, True),
    (pod(phase="Running", node="n", deleting=True), False, False),
    (pod(phase="Succeeded", node="n", deleting=True), True, True),
    ({"metadata": {"name": "bare"}}, False, False),
]
IDS = ["new", "bound", "running", "succeeded", "failed", "deleted-unscheduled", "deleted-bound-still-running",
       "deleted-after-success", "no-spec-no-status"]


@pytest.mark.parametrize(("p", "terminal", "done"), CASES, ids=IDS)
def test_is_pod_terminal(p, terminal, done):
    assert is_pod_terminal(p) is terminal


@pytest.mark.parametrize(("p", "terminal", "done"), CASES, ids=IDS)
def test_is_pod_done(p, terminal, done):
    assert is_pod_done(p) is done


@pytest.mark.parametrize(
    ("p", "assigned", "terminating"),
    [(pod(), False, False), (pod(node="n"), True, False), (pod(deleting=True), False, True)],
    ids=["pending", "bound", "deleting"],
)
def test_assigned_and_terminating(p, assigned, terminating):
    assert is_assigned(p) is assigned
    assert is_terminating(p) is terminating


def test_node_of_is_the_bound_node_or_empty():
    assert node_of({"spec": {"nodeName": "n1"}}) == "n1"
    assert node_of({"spec": {"nodeName": None}}) == node_of({"spec": {}}) == node_of({}) == ""


def test_as_pod_adds_type_meta_only_when_missing():
    listed = {"metadata": {"name": "p"}}
    assert as_pod(listed) == {"metadata": {"name": "p"}, "kind": "Pod", "apiVersion": "v1"}
    assert listed == {"metadata": {"name": "p"}}  # the cached object is left as it was
    full = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}
    assert as_pod(full) is full
