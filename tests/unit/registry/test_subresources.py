"""Subresource handlers: pods/binding and namespaces/finalize, and their declarations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.errors import BadRequest, Conflict, Invalid, StatusError
from fakeapi.registry.kinds import KINDS
from fakeapi.registry.subresources import bind_pod, finalize_namespace
from fakeapi.registry.writes import WriteOptions
from tests.unit.registry.builders import OPTS, events_of, kind, new_registry, pod

BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
           "target": {"kind": "Node", "name": "node-1"}}


def test_binding_assigns_the_node_and_marks_the_pod_scheduled() -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    created, _ = registry.writes.create(pods, "default", pod("p"), OPTS)
    snapshot = copy.deepcopy(created)
    answer = bind_pod(registry.writes, pods, "default", "p", BINDING, OPTS)
    assert answer["status"] == "Success" and answer["code"] == 201
    bound = registry.reads.get(pods, "default", "p")
    assert bound["spec"]["nodeName"] == "node-1"
    assert [(c["type"], c["status"]) for c in bound["status"]["conditions"]] == [("PodScheduled", "True")]
    # The binding copies only what it changes: the revision it replaced stays as it was.
    assert created == snapshot and bound["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert bound["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def _bound(registry: Any, pods: Any) -> None:
    bind_pod(registry.writes, pods, "default", "p", BINDING, OPTS)


def _deleting(registry: Any, pods: Any) -> None:
    pods_meta = registry.reads.get(pods, "default", "p")
    registry.writes.update(pods, "default", "p", pods_meta | {
        "metadata": pods_meta["metadata"] | {"finalizers": ["x.io/hold"]}}, OPTS)
    registry.writes.delete(pods, "default", "p", {})


BIND_ERRORS = [
    ("no-target", lambda r, p: None, BINDING | {"target": {}}, Invalid, "target.name: Required value"),
    ("not-a-node", lambda r, p: None, BINDING | {"target": {"kind": "Pod", "name": "x"}}, Invalid,
     'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"'),
    # BindingREST: the binding names the pod it binds, as in the URL.
    ("no-name", lambda r, p: None, BINDING | {"metadata": {}}, BadRequest,
     "name in URL does not match name in Binding object"),
    ("other-name", lambda r, p: None, BINDING | {"metadata": {"name": "q"}}, BadRequest,
     "name in URL does not match name in Binding object"),
    ("other-uid", lambda r, p: None, BINDING | {"metadata": {"name": "p", "uid": "x"}}, Conflict,
     "UID in precondition: x"),
    ("already-bound", _bound, BINDING | {"target": {"name": "node-2"}}, Conflict,
     'pod p is already assigned to node "node-1"'),
    ("deleting", _deleting, BINDING, Conflict, "pod p is being deleted, cannot be assigned to a host"),
]


@pytest.mark.parametrize(("prepare", "binding", "error", "message"), [c[1:] for c in BIND_ERRORS],
                         ids=[c[0] for c in BIND_ERRORS])
def test_binding_errors(prepare: Any, binding: dict, error: type[StatusError], message: str) -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    registry.writes.create(pods, "default", pod("p"), OPTS)
    prepare(registry, pods)
    with pytest.raises(error, match=message):
        bind_pod(registry.writes, pods, "default", "p", binding, OPTS)


def test_dry_run_binding_stores_nothing() -> None:
    registry = new_registry()
    pods = kind(registry, "pods")
    registry.writes.create(pods, "default", pod("p"), OPTS)
    seen = events_of(registry)
    bind_pod(registry.writes, pods, "default", "p", BINDING, WriteOptions(dry_run=True))
    assert seen == [] and "nodeName" not in registry.reads.get(pods, "default", "p")["spec"]


def test_finalize_sets_spec_finalizers_and_an_unchanged_list_is_no_write() -> None:
    registry = new_registry(namespaces=("team",))
    namespaces = registry.kinds.namespaces
    seen = events_of(registry)
    same = finalize_namespace(registry.writes, namespaces, "", "team", {"spec": {"finalizers": ["kubernetes"]}}, OPTS)
    assert seen == []
    changed = finalize_namespace(registry.writes, namespaces, "", "team", {"spec": {"finalizers": ["x.io/f"]}}, OPTS)
    assert changed["spec"]["finalizers"] == ["x.io/f"] and same["spec"]["finalizers"] == ["kubernetes"]
    assert seen == [("MODIFIED", "team")]  # not deleting: emptying it later would not delete it either


DECLARED = [
    ("pods", {"status": ("get", "patch", "update"), "binding": ("create",), "eviction": ("create",),
              "log": ("get",), "exec": ("create", "get"), "attach": ("create", "get"),
              "portforward": ("create", "get"), "ephemeralcontainers": ("get", "patch", "update")}),
    ("serviceaccounts", {"token": ("create",)}),
    ("namespaces", {"status": ("get", "patch", "update"), "finalize": ("update",)}),
    ("configmaps", {}),
]


@pytest.mark.parametrize(("plural", "expected"), DECLARED, ids=[c[0] for c in DECLARED])
def test_subresources_are_declared_per_kind(plural: str, expected: dict) -> None:
    rt = next(k for k in KINDS if k.group == "" and k.plural == plural)
    assert {s.name: s.verbs for s in rt.subresources} == expected
    # Without a handler: the pipeline serves it (status, a scoped write) or the HTTP layer (connect).
    assert all((s.handler is None) == (s.name == "status" or bool(s.scope) or s.connect) for s in rt.subresources)
