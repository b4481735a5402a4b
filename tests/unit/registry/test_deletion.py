"""Deletion through the pipeline: preconditions, propagation finalizers, deletionTimestamp,
grace periods and namespace lifecycle — the kind rules coming from strategy hooks."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.errors import Conflict, Forbidden, Invalid, StatusError
from fakeapi.registry.subresources import finalize_namespace
from fakeapi.registry.writes import WriteOptions
from tests.unit.registry.builders import OPTS, configmap, events_of, kind, new_registry, pod

PRECONDITIONS = [
    ("matching", lambda meta: {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}, None),
    ("other-uid", lambda meta: {"uid": "x"}, "Precondition failed: UID in precondition: x"),
    ("stale-version", lambda meta: {"resourceVersion": "1"}, "Precondition failed: ResourceVersion in precondition: 1"),
]


@pytest.mark.parametrize(("pre", "message"), [c[1:] for c in PRECONDITIONS], ids=[c[0] for c in PRECONDITIONS])
def test_delete_preconditions(pre: Any, message: str | None) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    created, _ = registry.writes.create(cms, "default", configmap("a"), OPTS)
    options = {"preconditions": pre(created["metadata"])}
    if message is None:
        assert registry.writes.delete(cms, "default", "a", options)[1] is True
        assert registry.reads.find(cms, "default", "a") is None
    else:
        with pytest.raises(Conflict, match=message):
            registry.writes.delete(cms, "default", "a", options)


POLICIES = [
    # (id, DeleteOptions, finalizers the object gets; None: deleted at once)
    ("default", {}, None),
    ("background", {"propagationPolicy": "Background"}, None),
    ("orphan", {"propagationPolicy": "Orphan"}, ["orphan"]),
    ("foreground", {"propagationPolicy": "Foreground"}, ["foregroundDeletion"]),
    ("orphan-dependents-true", {"orphanDependents": True}, ["orphan"]),
    ("orphan-dependents-false", {"orphanDependents": False}, None),
    ("policy-wins-over-orphan-dependents", {"propagationPolicy": "Foreground", "orphanDependents": True},
     ["foregroundDeletion"]),
]


@pytest.mark.parametrize(("options", "finalizers"), [c[1:] for c in POLICIES], ids=[c[0] for c in POLICIES])
def test_propagation_policy_finalizers(options: dict, finalizers: list[str] | None) -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a"), OPTS)
    obj, gone = registry.writes.delete(cms, "default", "a", options)
    assert gone is (finalizers is None)
    if finalizers is not None:
        assert obj["metadata"]["finalizers"] == finalizers and obj["metadata"]["deletionTimestamp"]
        assert registry.reads.get(cms, "default", "a") == obj


def test_unknown_propagation_policy_is_422() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a"), OPTS)
    with pytest.raises(Invalid, match='Unsupported value: "Sideways"'):
        registry.writes.delete(cms, "default", "a", {"propagationPolicy": "Sideways"})


def test_finalizers_hold_the_object_until_the_last_one_goes() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a", finalizers=["x.io/one", "x.io/two"]), OPTS)
    deleting, gone = registry.writes.delete(cms, "default", "a", {})
    assert not gone and deleting["metadata"]["deletionTimestamp"]
    again, gone = registry.writes.delete(cms, "default", "a", {})
    assert not gone and again == deleting  # a second delete changes nothing
    with pytest.raises(Invalid, match="no new finalizers can be added if the object is being deleted"):
        registry.writes.update(cms, "default", "a", deleting | {
            "metadata": deleting["metadata"] | {"finalizers": ["x.io/one", "x.io/two", "x.io/three"]}}, OPTS)
    seen = events_of(registry)
    one_left, _ = registry.writes.update(cms, "default", "a", deleting | {
        "metadata": deleting["metadata"] | {"finalizers": ["x.io/two"]}}, OPTS)
    none_left = one_left | {"metadata": one_left["metadata"] | {"finalizers": []}}
    registry.writes.update(cms, "default", "a", none_left, OPTS)
    assert seen == [("MODIFIED", "a"), ("DELETED", "a")]
    assert registry.reads.find(cms, "default", "a") is None


GRACE = [
    # (id, pod spec, pod status, DeleteOptions, deletionGracePeriodSeconds; None: deleted at once)
    ("unbound", {}, {}, {}, None),
    ("bound-running", {"nodeName": "n"}, {"phase": "Running"}, {}, 30),
    ("bound-own-grace", {"nodeName": "n", "terminationGracePeriodSeconds": 5}, {"phase": "Running"}, {}, 5),
    ("bound-options-grace", {"nodeName": "n"}, {"phase": "Running"}, {"gracePeriodSeconds": 3}, 3),
    ("bound-grace-zero", {"nodeName": "n"}, {"phase": "Running"}, {"gracePeriodSeconds": 0}, None),
    ("bound-succeeded", {"nodeName": "n"}, {"phase": "Succeeded"}, {}, None),
]


@pytest.mark.parametrize(("spec", "status", "options", "grace"), [c[1:] for c in GRACE], ids=[c[0] for c in GRACE])
def test_pod_grace_periods(spec: dict, status: dict, options: dict, grace: int | None) -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    created, _ = registry.writes.create(pods, "default", pod("p", **spec), OPTS)
    if status:
        registry.writes.update(pods, "default", "p", created | {"status": status}, WriteOptions(subresource="status"))
    obj, gone = registry.writes.delete(pods, "default", "p", options)
    assert gone is (grace is None)
    if grace is not None:
        assert obj["metadata"]["deletionGracePeriodSeconds"] == grace


def test_a_shorter_grace_period_shortens_a_pending_deletion() -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    registry.writes.create(pods, "default", pod("p", nodeName="n"), OPTS)
    registry.writes.delete(pods, "default", "p", {})
    obj, _ = registry.writes.delete(pods, "default", "p", {"gracePeriodSeconds": 1})
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 1
    obj, _ = registry.writes.delete(pods, "default", "p", {"gracePeriodSeconds": 10})
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 1  # never lengthened


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_immortal_namespaces(name: str) -> None:
    registry = new_registry(namespaces=(name,))
    with pytest.raises(Forbidden, match="this namespace may not be deleted"):
        registry.writes.delete(registry.kinds.namespaces, "", name, {})


def test_namespace_terminates_until_finalized() -> None:
    registry = new_registry(namespaces=("default", "team"))
    namespaces = registry.kinds.namespaces
    terminating, gone = registry.writes.delete(namespaces, "", "team", {})
    assert not gone and terminating["status"]["phase"] == "Terminating"
    assert terminating["spec"]["finalizers"] == ["kubernetes"] and terminating["metadata"]["deletionTimestamp"]
    # An update cannot finish it: the kubernetes finalizer of spec is still there.
    registry.writes.patch(namespaces, "", "team", "merge", {"metadata": {"labels": {"a": "b"}}}, OPTS)
    assert registry.reads.find(namespaces, "", "team") is not None
    finalize_namespace(registry.writes, namespaces, "", "team", {"spec": {"finalizers": []}}, OPTS)
    assert registry.reads.find(namespaces, "", "team") is None


def test_namespace_without_spec_finalizers_goes_at_once() -> None:
    registry = new_registry()
    namespaces = registry.kinds.namespaces
    # A create always gets the kubernetes finalizer (an empty list is no list); finalize empties it.
    created = registry.writes.create(namespaces, "", {"metadata": {"name": "bare"}, "spec": {"finalizers": []}},
                                     OPTS)[0]
    assert created["spec"]["finalizers"] == ["kubernetes"]
    emptied = finalize_namespace(registry.writes, namespaces, "", "bare", {"spec": {"finalizers": []}}, OPTS)
    assert "finalizers" not in emptied["spec"]
    assert registry.writes.delete(namespaces, "", "bare", {})[1] is True


def test_a_created_namespace_keeps_its_finalizers_and_gets_the_kubernetes_one() -> None:
    registry = new_registry()
    created = registry.writes.create(registry.kinds.namespaces, "", {
        "metadata": {"name": "team"}, "spec": {"finalizers": ["example.com/audit"]}}, OPTS)[0]
    assert created["spec"]["finalizers"] == ["example.com/audit", "kubernetes"]


def test_dry_run_delete_keeps_the_object() -> None:
    registry = new_registry()
    cms = kind(registry, "configmaps")
    registry.writes.create(cms, "default", configmap("a", finalizers=["x.io/f"]), OPTS)
    registry.writes.create(cms, "default", configmap("b"), OPTS)
    seen = events_of(registry)
    marked, gone = registry.writes.delete(cms, "default", "a", {}, dry_run=True)
    assert not gone and marked["metadata"]["deletionTimestamp"]
    assert registry.writes.delete(cms, "default", "b", {}, dry_run=True)[1] is True
    assert seen == []
    assert "deletionTimestamp" not in registry.reads.get(cms, "default", "a")["metadata"]


def test_missing_object_is_404() -> None:
    registry = new_registry()
    with pytest.raises(StatusError) as err:
        registry.writes.delete(kind(registry, "configmaps"), "default", "nope", {})
    assert err.value.code == 404
