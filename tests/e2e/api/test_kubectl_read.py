"""kubectl reads: server-side tables, -o yaml round trips, label selectors, get -w, explain."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import yaml
from fakeapi.fixtures.plugin import Kubectl
from kubernetes import client

from tests.e2e.api.conftest import (
    call,
    claim,
    columns,
    configmap,
    device_class,
    event,
    node,
    pod,
    resource_slice,
    started,
    table,
    to_yaml,
)


async def read_until(proc: asyncio.subprocess.Process, wanted: str, timeout: float = 5.0) -> list[str]:
    """Lines printed by ``proc`` up to and including the first containing ``wanted``."""
    assert proc.stdout is not None
    seen: list[str] = []
    async with asyncio.timeout(timeout):
        while not seen or wanted not in seen[-1]:
            line = await proc.stdout.readline()
            assert line, f"kubectl exited before printing {wanted!r}; printed {seen}"
            seen.append(line.decode().rstrip("\n"))
    return seen


@pytest.mark.parametrize(("args", "header"), [
    (("pods",), ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]),
    (("pods", "-o", "wide"),
     ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]),
    (("configmaps",), ["NAME", "DATA", "AGE"]),
    (("nodes",), ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]),
    (("namespaces",), ["NAME", "STATUS", "AGE"]),
    (("resourceclaims",), ["NAME", "STATE", "AGE"]),
    (("deviceclasses",), ["NAME", "AGE"]),
], ids=["pods", "pods-wide", "configmaps", "nodes", "namespaces", "resourceclaims", "deviceclasses"])
async def test_table_headers_match_upstream(kubectl: Kubectl, args: tuple[str, ...], header: list[str]) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1"), configmap("c1", {"a": "1"}), node("n1"),
                                                        device_class(), claim("rc1")))

    out = await kubectl.run("get", *args)

    assert columns(out.stdout.splitlines()[0]) == header


async def test_pod_rows_show_status_and_node(kubectl: Kubectl, core: client.CoreV1Api) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(node("n1"), pod("bound"), pod("waiting")))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    await call(core.create_namespaced_pod_binding, "bound", "default", binding, _preload_content=False)

    rows = table((await kubectl.run("get", "pods", "-o", "wide")).stdout)

    assert rows["bound"][2] == "Pending" and rows["bound"][6] == "n1"
    assert rows["waiting"][2] == "Pending" and rows["waiting"][6] == "<none>"
    assert rows["waiting"][1] == "0/1"


async def test_configmap_row_counts_data(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("c1", {"a": "1", "b": "2"})))

    rows = table((await kubectl.run("get", "configmaps")).stdout)

    assert rows["c1"][:2] == ["c1", "2"]
    assert re.fullmatch(r"\d+s", rows["c1"][-1])


async def test_get_yaml_round_trips_through_replace(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1", labels={"app": "web"}), claim("rc1")))

    for kind, name in [("pod", "p1"), ("resourceclaim", "rc1")]:
        exported = (await kubectl.run("get", kind, name, "-o", "yaml")).stdout
        obj = yaml.safe_load(exported)
        obj["metadata"]["labels"] = {"edited": "yes"}

        await kubectl.run("replace", "-f", "-", input=yaml.safe_dump(obj))

        after = yaml.safe_load((await kubectl.run("get", kind, name, "-o", "yaml")).stdout)
        assert after["metadata"]["labels"] == {"edited": "yes"}
        assert after["spec"] == obj["spec"]
        assert after["metadata"]["uid"] == obj["metadata"]["uid"]
        # The exported resourceVersion is now stale: replaying it must conflict.
        stale = await kubectl.run("replace", "-f", "-", input=exported, check=False)
        assert "Error from server (Conflict)" in stale.stderr, stale.stderr


@pytest.mark.parametrize(("selector", "expected"), [
    ("tier=web", ["a"]),
    ("tier!=web", ["b", "c"]),
    ("tier in (web,db)", ["a", "b"]),
    ("tier notin (web)", ["b", "c"]),
    ("tier", ["a", "b"]),
    ("!tier", ["c"]),
    ("tier,app=x", ["a"]),
], ids=["equals", "not-equals", "in", "notin", "exists", "not-exists", "and"])
async def test_label_selectors(kubectl: Kubectl, selector: str, expected: list[str]) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("a", labels={"tier": "web", "app": "x"}),
                                                        configmap("b", labels={"tier": "db"}),
                                                        configmap("c", labels={"app": "x"})))

    out = await kubectl.run("get", "configmaps", "-l", selector, "-o", "jsonpath={.items[*].metadata.name}")

    assert out.stdout.split() == expected


async def test_bad_label_selector_is_rejected(kubectl: Kubectl) -> None:
    out = await kubectl.run("get", "configmaps", "-l", "tier in web", check=False)
    assert out.returncode != 0


async def test_get_watch_prints_changes(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("first")))

    async with started(kubectl, "get", "configmaps", "--watch", "--output-watch-events") as proc:
        head = await read_until(proc, "first")
        assert columns(head[0])[:2] == ["EVENT", "NAME"]
        assert columns(head[1])[:2] == ["ADDED", "first"]

        await kubectl.run("apply", "-f", "-", input=to_yaml(configmap("second")))
        assert columns((await read_until(proc, "second"))[-1])[:2] == ["ADDED", "second"]

        await kubectl.run("label", "configmap", "first", "changed=yes")
        assert columns((await read_until(proc, "first"))[-1])[:2] == ["MODIFIED", "first"]

        await kubectl.run("delete", "configmap", "second")
        assert columns((await read_until(proc, "second"))[-1])[:2] == ["DELETED", "second"]


async def test_get_watch_of_pods_shows_the_binding(kubectl: Kubectl, core: client.CoreV1Api) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(node("n1"), pod("p1")))

    async with started(kubectl, "get", "pods", "-o", "wide", "--watch") as proc:
        await read_until(proc, "p1")
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
        await call(core.create_namespaced_pod_binding, "p1", "default", binding, _preload_content=False)

        assert columns((await read_until(proc, "n1"))[-1])[6] == "n1"


@pytest.mark.parametrize(("target", "expected"), [
    ("resourceclaims.spec.devices.requests.exactly",
     ["GROUP:      resource.k8s.io", "KIND:       ResourceClaim", "VERSION:    v1"]),
    ("deviceclasses.spec.selectors.cel.expression", ["FIELD: expression <string>"]),
    ("pods.spec.nodeName", ["KIND:       Pod", "FIELD: nodeName <string>"]),
], ids=["resourceclaim", "deviceclass", "pod"])
async def test_explain(kubectl: Kubectl, target: str, expected: list[str]) -> None:
    out = await kubectl.run("explain", target)

    lines = out.stdout.splitlines()
    assert all(line in lines for line in expected), out.stdout



async def test_discovery_lists_served_groups(kubectl: Kubectl) -> None:
    versions = (await kubectl.run("api-versions")).stdout.split()
    resources = (await kubectl.run("api-resources", "--api-group=resource.k8s.io", "-o", "name")).stdout.split()

    assert {"v1", "resource.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"} <= set(versions)
    assert resources == [f"{r}.resource.k8s.io" for r in
                         ("deviceclasses", "devicetaintrules", "resourceclaims", "resourceclaimtemplates",
                          "resourceslices")]
    server = json.loads((await kubectl.run("version", "-o", "json")).stdout)["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "37")


async def test_get_in_chunks_returns_everything_in_order(kubectl: Kubectl) -> None:
    names = [f"cm-{i}" for i in range(5)]
    await kubectl.run("apply", "-f", "-", input=to_yaml(*(configmap(n) for n in reversed(names))))

    out = await kubectl.run("get", "configmaps", "--chunk-size=2", "-o", "name", "-v=6")

    assert out.stdout.split() == [f"configmap/{n}" for n in names]
    assert out.stderr.count("limit=2") == 3, "kubectl should have fetched three pages"


async def test_describe_shows_the_objects_events(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1")))
    p1 = json.loads((await kubectl.run("get", "pod", "p1", "-o", "json")).stdout)
    # An event about an earlier pod of the same name (another uid) must not show.
    earlier = event("p1.0", p1, message="old pod")
    earlier["involvedObject"]["uid"] = "0000"
    await kubectl.run("apply", "-f", "-", input=to_yaml(event("p1.1", p1, message="0/3 nodes are available"), earlier))

    out = (await kubectl.run("describe", "pod", "p1")).stdout

    events = out[out.index("Events:"):]
    assert "FailedScheduling" in events and "default-scheduler" in events
    assert "0/3 nodes are available" in events and "old pod" not in events


async def test_events_for_an_object(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(pod("p1"), pod("p2")))
    pods = json.loads((await kubectl.run("get", "pods", "-o", "json")).stdout)["items"]
    await kubectl.run("apply", "-f", "-", input=to_yaml(event("e1", pods[0], message="about p1"),
                                                        event("e2", pods[1], message="about p2")))

    out = await kubectl.run("events", "--for", "pod/p1")

    assert "about p1" in out.stdout and "about p2" not in out.stdout


async def test_claim_state_follows_its_status(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(claim("rc1"), pod("p1")))
    uid = (await kubectl.run("get", "pod", "p1", "-o", "jsonpath={.metadata.uid}")).stdout
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]}}
    states = [table((await kubectl.run("get", "resourceclaims")).stdout)["rc1"][1]]

    # What a scheduler does: allocate, then reserve for the pod, through the status subresource.
    for status in ({"allocation": allocation}, {"reservedFor": [{"resource": "pods", "name": "p1", "uid": uid}]}):
        await kubectl.run("patch", "resourceclaim", "rc1", "--subresource=status", "--type=merge",
                          "-p", json.dumps({"status": status}))
        states.append(table((await kubectl.run("get", "resourceclaims")).stdout)["rc1"][1])

    assert states == ["pending", "allocated", "allocated,reserved"]


async def test_resource_slice_row(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(resource_slice("n1-gpus", "n1", pool="pool-a")))

    rows = table((await kubectl.run("get", "resourceslices")).stdout)

    assert rows["NAME"] == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert rows["n1-gpus"][:4] == ["n1-gpus", "n1", "gpu.example.com", "pool-a"]
