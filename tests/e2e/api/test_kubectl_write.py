"""kubectl mutations: patch (strategic, merge, JSON), label, annotate, delete, wait, namespace cascade."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fakeapi.fixtures.plugin import Kubectl, wait_for
from kubernetes import client

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import call, claim, configmap, node, pod, started, to_yaml, watch_opened


async def get_json(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    return json.loads((await kubectl.run("get", *args, "-o", "json")).stdout)


async def finished(proc: asyncio.subprocess.Process, timeout: float = 10.0) -> tuple[int, str, str]:
    """Wait for a started kubectl to exit: (returncode, stdout, stderr)."""
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode or 0, out.decode(), err.decode()


def two_container_pod(name: str) -> dict[str, Any]:
    spec = pod(name)
    spec["spec"]["containers"] = [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]
    return spec


async def test_strategic_patch_merges_containers_by_name(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(two_container_pod("p1")))

    await kubectl.run("patch", "pod", "p1", "-p", '{"spec":{"containers":[{"name":"b","image":"nginx"}]}}')

    containers = (await get_json(kubectl, "pod", "p1"))["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("a", "busybox"), ("b", "nginx")]


async def test_strategic_patch_of_status_merges_conditions_by_type(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(node("n1")))
    for cond in ({"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"},
                 {"type": "Ready", "status": "False"}):
        await kubectl.run("patch", "node", "n1", "--subresource=status", "-p",
                          json.dumps({"status": {"conditions": [cond]}}))

    conditions = (await get_json(kubectl, "node", "n1"))["status"]["conditions"]
    assert {c["type"]: c["status"] for c in conditions} == {"Ready": "False", "MemoryPressure": "False"}


async def test_merge_patch_replaces_lists_and_deletes_with_null(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1", {"keep": "1", "drop": "2"})))

    await kubectl.run("patch", "configmap", "c1", "--type=merge", "-p", '{"data":{"drop":null,"new":"3"}}')

    assert (await get_json(kubectl, "configmap", "c1"))["data"] == {"keep": "1", "new": "3"}


async def test_merge_patch_of_dra_claim(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(claim("rc1")))

    await kubectl.run("patch", "resourceclaim", "rc1", "--type=merge", "-p", '{"metadata":{"labels":{"a":"b"}}}')

    assert (await get_json(kubectl, "resourceclaim", "rc1"))["metadata"]["labels"] == {"a": "b"}


async def test_json_patch_edits_a_list_element(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(two_container_pod("p1")))

    await kubectl.run("patch", "pod", "p1", "--type=json", "-p",
                      '[{"op":"test","path":"/spec/containers/1/name","value":"b"},'
                      '{"op":"replace","path":"/spec/containers/1/image","value":"nginx"}]')

    containers = (await get_json(kubectl, "pod", "p1"))["spec"]["containers"]
    assert [c["image"] for c in containers] == ["busybox", "nginx"]


async def test_failed_json_patch_test_op_changes_nothing(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1", {"a": "1"})))
    before = await get_json(kubectl, "configmap", "c1")

    out = await kubectl.run("patch", "configmap", "c1", "--type=json", "-p",
                            '[{"op":"test","path":"/data/a","value":"2"},{"op":"add","path":"/data/b","value":"x"}]',
                            check=False)

    assert out.returncode != 0
    assert await get_json(kubectl, "configmap", "c1") == before


async def test_label_add_overwrite_remove(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1", labels={"keep": "x"})))
    await kubectl.run("label", "configmap", "c1", "tier=db")

    refused = await kubectl.run("label", "configmap", "c1", "tier=web", check=False)
    assert "'tier' already has a value (db), and --overwrite is false" in refused.stderr

    await kubectl.run("label", "configmap", "c1", "tier=web", "--overwrite")
    assert (await get_json(kubectl, "configmap", "c1"))["metadata"]["labels"] == {"keep": "x", "tier": "web"}
    await kubectl.run("label", "configmap", "c1", "tier-")
    assert (await get_json(kubectl, "configmap", "c1"))["metadata"]["labels"] == {"keep": "x"}


async def test_label_with_stale_resource_version_conflicts(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1")))
    stale = (await get_json(kubectl, "configmap", "c1"))["metadata"]["resourceVersion"]
    await kubectl.run("label", "configmap", "c1", "moved=on")

    out = await kubectl.run("label", "configmap", "c1", "x=y", f"--resource-version={stale}", check=False)

    assert "Error from server (Conflict)" in out.stderr, out.stderr
    assert "x" not in (await get_json(kubectl, "configmap", "c1"))["metadata"]["labels"]


async def test_annotate_add_and_remove(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(claim("rc1")))

    await kubectl.run("annotate", "resourceclaim", "rc1", "note=hello world")
    assert (await get_json(kubectl, "resourceclaim", "rc1"))["metadata"]["annotations"]["note"] == "hello world"
    await kubectl.run("annotate", "resourceclaim", "rc1", "note-")
    assert "note" not in (await get_json(kubectl, "resourceclaim", "rc1"))["metadata"].get("annotations", {})


async def test_delete_waits_for_finalizers(kubectl: Kubectl, core: client.CoreV1Api) -> None:
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await kubectl.run("apply", "-f", "-", input=to_yaml(held))

    async def deletion_started() -> bool:
        held = await call(core.read_namespaced_config_map, "held", "default")
        return held.metadata.deletion_timestamp is not None

    async with started(kubectl, "delete", "configmap", "held", "--timeout=10s") as proc:
        await wait_for(deletion_started, message="deletionTimestamp on the held configmap")
        assert proc.returncode is None, "kubectl delete returned while the finalizer held the object"

        await kubectl.run("patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')

        code, out, err = await finished(proc)
    assert code == 0, err
    assert out.strip() == 'configmap "held" deleted from default namespace'
    gone = await kubectl.run("get", "configmap", "held", check=False)
    assert 'configmaps "held" not found' in gone.stderr


async def test_delete_of_missing_object_is_not_found(kubectl: Kubectl) -> None:
    out = await kubectl.run("delete", "resourceclaim", "nope", check=False)

    assert out.returncode != 0
    assert 'Error from server (NotFound): resourceclaims.resource.k8s.io "nope" not found' in out.stderr


@pytest.mark.parametrize("condition", ["condition=Ready", "condition=Ready=True",
                                       "jsonpath={.status.phase}=Running"],
                         ids=["condition", "condition-value", "jsonpath"])
async def test_wait_for_condition(fake_api: FakeCluster, kubectl: Kubectl, core: client.CoreV1Api,
                                  condition: str) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1")))
    async with started(kubectl, "wait", f"--for={condition}", "pod/p1", "--timeout=10s") as proc:
        # Flip the condition only once kubectl watches (WatchList: initial events, then the end bookmark).
        await watch_opened(fake_api)

        await call(core.patch_namespaced_pod_status, "p1", "default",
                   {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})

        code, out, err = await finished(proc)
    assert code == 0, err
    assert out.strip() == "pod/p1 condition met"


async def test_wait_for_condition_times_out(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1")))

    out = await kubectl.run("wait", "--for=condition=Ready", "pod/p1", "--timeout=300ms", check=False)

    assert out.returncode != 0
    assert "timed out waiting for the condition on pods/p1" in out.stderr


async def test_wait_for_delete(fake_api: FakeCluster, kubectl: Kubectl, resource_api: client.ResourceV1Api) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(claim("rc1")))
    async with started(kubectl, "wait", "--for=delete", "resourceclaim/rc1", "--timeout=10s") as proc:
        # Deleting before kubectl found the claim would make it exit 0 silently: wait for its watch.
        await watch_opened(fake_api)

        await call(resource_api.delete_namespaced_resource_claim, "rc1", "default")

        code, out, err = await finished(proc)
    assert code == 0, err
    assert out.strip() == "resourceclaim.resource.k8s.io/rc1 condition met"


async def test_namespace_delete_cascades(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        configmap("c1", namespace="team"), claim("rc1", namespace="team"),
        pod("p1") | {"metadata": {"name": "p1", "namespace": "team"}}))

    out = await kubectl.run("delete", "namespace", "team")

    assert out.stdout.strip() == 'namespace "team" deleted'
    left = await kubectl.run("get", "configmaps,resourceclaims,pods", "-n", "team", "-o", "name")
    assert left.stdout.strip() == ""
    gone = await kubectl.run("get", "namespace", "team", check=False)
    assert 'namespaces "team" not found' in gone.stderr


async def test_terminating_namespace_refuses_new_objects(kubectl: Kubectl) -> None:
    held = configmap("held", namespace="team")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await kubectl.run("apply", "-f", "-", input=to_yaml(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}, held))

    await kubectl.run("delete", "namespace", "team", "--wait=false")

    phase = (await get_json(kubectl, "namespace", "team"))["status"]["phase"]
    assert phase == "Terminating"
    refused = await kubectl.run("create", "-f", "-", input=to_yaml(configmap("late", namespace="team")),
                                check=False)
    assert "Error from server (Forbidden)" in refused.stderr
    assert "because it is being terminated" in refused.stderr

    await kubectl.run("patch", "configmap", "held", "-n", "team", "--type=merge",
                      "-p", '{"metadata":{"finalizers":null}}')
    await kubectl.run("wait", "--for=delete", "namespace/team", "--timeout=10s")


async def test_wait_for_create(kubectl: Kubectl) -> None:
    async with started(kubectl, "wait", "--for=create", "resourceclaim/late", "--timeout=10s") as proc:

        await kubectl.run("apply", "-f", "-", input=to_yaml(claim("late")))

        code, out, err = await finished(proc)
    assert code == 0, err
    assert out.strip() == "resourceclaim.resource.k8s.io/late condition met"


async def test_taint_and_cordon_a_node(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(node("n1")))

    await kubectl.run("taint", "nodes", "n1", "gpu=true:NoSchedule")
    await kubectl.run("cordon", "n1")
    spec = (await get_json(kubectl, "node", "n1"))["spec"]
    assert spec == {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}], "unschedulable": True}

    await kubectl.run("taint", "nodes", "n1", "gpu:NoSchedule-")
    await kubectl.run("uncordon", "n1")
    assert (await get_json(kubectl, "node", "n1"))["spec"] == {}


async def owner_and_dependent(kubectl: Kubectl, *, dependent_finalizers: list[str] | None = None) -> None:
    """ConfigMap "owner" and ConfigMap "dependent" that it owns (blockOwnerDeletion)."""
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("owner")))
    uid = (await get_json(kubectl, "configmap", "owner"))["metadata"]["uid"]
    dependent = configmap("dependent")
    dependent["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                                 "uid": uid, "blockOwnerDeletion": True}]
    if dependent_finalizers:
        dependent["metadata"]["finalizers"] = dependent_finalizers
    await kubectl.run("apply", "-f", "-", input=to_yaml(dependent))


@pytest.mark.parametrize(("cascade", "dependent_survives"), [
    ("background", False), ("foreground", False), ("orphan", True),
], ids=["background", "foreground", "orphan"])
async def test_delete_cascade(kubectl: Kubectl, cascade: str, dependent_survives: bool) -> None:
    await owner_and_dependent(kubectl)

    await kubectl.run("delete", "configmap", "owner", f"--cascade={cascade}", "--timeout=10s")

    if dependent_survives:
        assert "ownerReferences" not in (await get_json(kubectl, "configmap", "dependent"))["metadata"]
    else:
        await kubectl.run("wait", "--for=delete", "configmap/dependent", "--timeout=10s")
        assert (await kubectl.run("get", "configmaps", "-o", "name")).stdout == ""


async def test_foreground_delete_waits_for_blocking_dependents(kubectl: Kubectl) -> None:
    await owner_and_dependent(kubectl, dependent_finalizers=["example.com/hold"])

    await kubectl.run("delete", "configmap", "owner", "--cascade=foreground", "--wait=false")

    owner = (await get_json(kubectl, "configmap", "owner"))["metadata"]
    assert owner["finalizers"] == ["foregroundDeletion"] and owner["deletionTimestamp"]
    assert (await get_json(kubectl, "configmap", "dependent"))["metadata"]["deletionTimestamp"]
    await kubectl.run("patch", "configmap", "dependent", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    await kubectl.run("wait", "--for=delete", "configmap/owner", "--timeout=10s")


async def test_diff_uses_server_side_dry_run(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1", {"a": "1"})))

    same = await kubectl.run("diff", "-f", "-", input=to_yaml(configmap("c1", {"a": "1"})), check=False)
    changed = await kubectl.run("diff", "-f", "-", input=to_yaml(configmap("c1", {"a": "2"})), check=False)

    assert (same.returncode, same.stdout) == (0, "")
    assert changed.returncode == 1, changed.stderr
    assert '-  a: "1"' in changed.stdout and '+  a: "2"' in changed.stdout
    assert (await get_json(kubectl, "configmap", "c1"))["data"] == {"a": "1"}


async def test_edit_patches_what_the_editor_changed(kubectl: Kubectl, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(claim("rc1")))
    editor = tmp_path / "editor.py"
    # The "editor" adds a label under metadata, as a user would by hand.
    editor.write_text("import pathlib, sys\n"
                      "p = pathlib.Path(sys.argv[1])\n"
                      "edited = p.read_text().replace('\\nmetadata:\\n', '\\nmetadata:\\n  labels: {edited: ok}\\n')\n"
                      "p.write_text(edited)\n")
    monkeypatch.setenv("KUBE_EDITOR", f"{sys.executable} {editor}")

    out = await kubectl.run("edit", "resourceclaim", "rc1")

    assert out.stdout.strip() == "resourceclaim.resource.k8s.io/rc1 edited"
    assert (await get_json(kubectl, "resourceclaim", "rc1"))["metadata"]["labels"] == {"edited": "ok"}


@pytest.mark.parametrize("namespace", ["default", "kube-system", "kube-public"])
async def test_system_namespaces_cannot_be_deleted(kubectl: Kubectl, namespace: str) -> None:
    out = await kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)

    assert out.returncode != 0
    assert f'Error from server (Forbidden): namespaces "{namespace}" is forbidden: this namespace may not be deleted' \
        in out.stderr
    assert (await get_json(kubectl, "namespace", namespace))["status"]["phase"] == "Active"
