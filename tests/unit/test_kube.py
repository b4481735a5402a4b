"""The helpers' pure parts: naming kinds as kubectl does, kubectl-wait conditions, manifests,
and the readiness a NotReady node gets."""

from __future__ import annotations

import pytest

from fakeapi.disruptions import NOT_READY_TAINT, readiness_changes
from fakeapi.kube import ApiResource, find_resource, load_manifest, parse_condition

PODS = ApiResource("", "v1", "Pod", "pods", "pod", ("po",), True, ("status", "binding"))
EVENTS = ApiResource("", "v1", "Event", "events", "event", ("ev",))
NEW_EVENTS = ApiResource("events.k8s.io", "v1", "Event", "events", "event", ("ev",))
CLAIMS = ApiResource("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", "resourceclaim")
WORKLOADS_BETA = ApiResource("scheduling.k8s.io", "v1beta1", "Workload", "workloads", "workload")
WORKLOADS_ALPHA = ApiResource("scheduling.k8s.io", "v1alpha1", "Workload", "workloads", "workload")
ALL = [NEW_EVENTS, PODS, EVENTS, CLAIMS, WORKLOADS_BETA, WORKLOADS_ALPHA]


@pytest.mark.parametrize(("name", "api_version", "expected"), [
    ("Pod", None, PODS), ("pods", None, PODS), ("pod", None, PODS), ("po", None, PODS), ("PODS", None, PODS),
    ("events", None, EVENTS), ("events.events.k8s.io", None, NEW_EVENTS), ("ResourceClaim", None, CLAIMS),
    ("resourceclaims.resource.k8s.io", None, CLAIMS), ("workloads", None, WORKLOADS_BETA),
    ("Workload", "scheduling.k8s.io/v1alpha1", WORKLOADS_ALPHA), ("Pod", "v1", PODS),
    ("Pod", "apps/v1", None), ("pods", "v1", None), ("gadgets", None, None), ("pods.apps", None, None),
], ids=["kind", "plural", "singular", "short", "upper-plural", "core-wins", "group-qualified", "kind-of-group",
        "plural-group", "preferred-first", "exact-version", "core-version", "wrong-group", "manifest-needs-kind",
        "unknown", "wrong-qualifier"])
def test_find_resource(name, api_version, expected):
    assert find_resource(ALL, name, api_version) == expected


POD = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1"},
       "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"},
                                                     {"type": "PodScheduled", "status": "False"}]}}


@pytest.mark.parametrize(("condition", "obj", "holds"), [
    ("Ready", POD, True), ("condition=Ready", POD, True), ("condition=Ready=true", POD, True),
    ("condition=PodScheduled", POD, False), ("condition=PodScheduled=False", POD, True),
    ("Complete", POD, False), ("Ready", None, False), ("delete", None, True), ("delete", POD, False),
    ("jsonpath={.status.phase}=Running", POD, True), ("jsonpath={.status.phase}=Pending", POD, False),
    ("jsonpath={.spec.nodeName}", POD, True), ("jsonpath={.spec.priority}", POD, False),
    ("jsonpath='{.status.phase}'=Running", POD, True),
    (lambda pod: pod["spec"]["nodeName"] == "n1", POD, True), (lambda pod: True, None, False),
], ids=["type", "condition", "condition-value-case", "false-condition", "explicit-false", "absent-type",
        "absent-object", "delete-gone", "delete-present", "jsonpath-value", "jsonpath-other", "jsonpath-exists",
        "jsonpath-missing", "jsonpath-quoted", "callable", "callable-absent"])
def test_parse_condition(condition, obj, holds):
    assert parse_condition(condition)(obj) is holds


@pytest.mark.parametrize("condition", ["condition=A=B=C", "jsonpath=status.phase", ""],
                         ids=["extra", "no-dot", "empty"])
def test_parse_condition_refuses_what_kubectl_refuses(condition):
    with pytest.raises(ValueError, match="unsupported wait condition"):
        parse_condition(condition)


def test_load_manifest_reads_text_paths_and_objects(tmp_path):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: ConfigMap\n" \
           "metadata: {name: b}\n"
    path = tmp_path / "m.yaml"
    path.write_text(text)
    names = [[d["metadata"]["name"] for d in load_manifest(m)] for m in (text, path, str(path))]
    assert names == [["a", "b"]] * 3
    assert load_manifest({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})[0]["kind"] == "Namespace"


@pytest.mark.parametrize(("manifest", "message"), [
    ("just text", "not a Kubernetes object"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n", "ConfigMap without metadata.name"),
    ("apiVersion: v1\nkind: List\nitems: []\n", "apply the items of a List one by one"),
], ids=["scalar", "generate-name", "list"])
def test_load_manifest_refuses(manifest, message):
    with pytest.raises(ValueError, match=message):
        load_manifest(manifest)


def test_not_ready_replaces_ready_and_adds_the_lifecycle_taints_and_ready_undoes_it():
    node = {"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": "True"}]}}
    conditions, taints = readiness_changes(node, ready=False, now="2026-01-01T00:00:00Z")
    assert [(c["type"], c["status"]) for c in conditions] == [("MemoryPressure", "False"), ("Ready", "False")]
    assert conditions[1]["reason"] == "KubeletNotReady"
    assert [(t["key"], t["effect"]) for t in taints] == [("gpu", "NoSchedule"), (NOT_READY_TAINT, "NoSchedule"),
                                                         (NOT_READY_TAINT, "NoExecute")]
    node = {"spec": {"taints": taints}, "status": {"conditions": conditions}}
    conditions, taints = readiness_changes(node, ready=True, now="2026-01-01T00:01:00Z")
    ready = conditions[1]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "True", "KubeletReady")
    assert taints == [{"key": "gpu", "effect": "NoSchedule"}]
