"""The demo's scenarios: each a list of steps a person watches, checked through the public API.

A :class:`Step` does something (apply objects, finish or delete pods), then waits until the
cluster reaches the state the step promises (``until``) and checks what must hold then
(``check``: every problem makes the demo fail, as a real cluster would not do that).

- ``kep5729``: PodGroups name a ResourceClaimTemplate; one claim per group, allocated once,
  reserved for the group, kept while pods come and go, released with the group.
- ``gang``: two gangs want more than half the GPUs each; one runs, the other waits whole (no
  partial allocation), and runs once the first is done.
- ``constraint``: the seed's Workload with a PodGroup-level ``matchAttribute: gpu/blockName``:
  every device of one pod-group instance comes from one block.
- ``deployment``: the seed's corrected example: a Deployment's pods join the Workload's gang.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from fakeapi.kube import KubeHelpers
from fakeapi.scheduler.client import PODS

NS = "default"
GPUS_PER_NODE = 4
DRIVER = "gpu.example.com"
BLOCK = "gpu/blockName"
MANIFESTS = resources.files("fakeapi.fixtures") / "manifests"


@dataclass
class Snapshot:
    """What the cluster holds, as lists of objects (read through the API)."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    slices: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    async def read(cls, cluster: KubeHelpers) -> Snapshot:
        return cls(await cluster.list("nodes"), await cluster.list("resourceslices"),
                   await cluster.list("resourceclaims"), await cluster.list("pods"),
                   await cluster.list("podgroups"))

    def phase(self, pod: dict[str, Any]) -> str:
        return (pod.get("status") or {}).get("phase") or "Pending"

    def running(self, prefix: str = "") -> list[dict[str, Any]]:
        return [p for p in self.pods if p["metadata"]["name"].startswith(prefix) and self.phase(p) == "Running"]


Action = Callable[[KubeHelpers, Snapshot], Awaitable[None]]


@dataclass
class Step:
    title: str
    action: Action
    until: Callable[[Snapshot], bool]
    check: Callable[[Snapshot], list[str]] = lambda s: []
    # The placement at the end of this step goes into the HTML page.
    picture: str = ""


@dataclass
class Scenario:
    name: str
    title: str
    steps: list[Step]


def group_of(pod: dict[str, Any]) -> str:
    """The pod-group instance a pod belongs to, as the picture labels it (else the pod itself)."""
    spec = pod.get("spec") or {}
    if (spec.get("schedulingGroup") or {}).get("podGroupName"):
        return spec["schedulingGroup"]["podGroupName"]
    ref = spec.get("workloadRef") or {}
    if ref:
        key = ref.get("podGroupReplicaKey")
        return f"{ref.get('name')}/{ref.get('podGroup')}" + (f"[{key}]" if key else "")
    return pod["metadata"]["name"]


def claim_holder(claim: dict[str, Any], snapshot: Snapshot) -> str:
    """Whom a claim's devices belong to in the picture: its PodGroup, or its pod's group."""
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if ref.get("resource") == "podgroups":
            return ref["name"]
        pod = next((p for p in snapshot.pods if p["metadata"]["name"] == ref.get("name")), None)
        if pod is not None:
            return group_of(pod)
    owners = claim["metadata"].get("ownerReferences") or []
    return owners[0]["name"] if owners else claim["metadata"]["name"]


def devices_of(claim: dict[str, Any]) -> list[tuple[str, str]]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return [(r["pool"], r["device"]) for r in results]


def gpu_nodes(count: int) -> list[dict[str, Any]]:
    """The shipped GPU cluster's DeviceClass, and its first node and slice ``count`` times: node
    ``gpu-node-N`` with 4 GPUs (2 A100, 2 H100) forming block ``block-N``."""
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "gpu-cluster.yaml").read_text()) if d]
    node = next(d for d in docs if d["kind"] == "Node")
    slice_ = next(d for d in docs if d["kind"] == "ResourceSlice")
    objects = [next(d for d in docs if d["kind"] == "DeviceClass")]
    for i in range(1, count + 1):
        name = f"gpu-node-{i}"
        n = copy.deepcopy(node)
        n["metadata"]["name"] = n["metadata"]["labels"]["kubernetes.io/hostname"] = name
        n["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
        s = copy.deepcopy(slice_)
        s["metadata"]["name"] = f"{name}-{DRIVER}"
        s["spec"]["nodeName"] = s["spec"]["pool"]["name"] = name
        for device in s["spec"]["devices"]:
            device["attributes"][BLOCK] = {"string": f"block-{i}"}
        objects += [n, s]
    return objects


def template(name: str, count: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": DRIVER, "count": count}}]}}}}


def pod(name: str, claim_template: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {**spec, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim_template}],
                     "containers": [{"name": "train", "image": "registry.example.com/trainer:1.0",
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def pod_group(name: str, min_count: int, claim_template: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if claim_template:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": claim_template}]
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def apply(objects: Callable[[], list[dict[str, Any]]]) -> Action:
    async def run(cluster: KubeHelpers, snapshot: Snapshot) -> None:
        await cluster.apply(objects())
    return run


def finish_pods(prefix: str = "") -> Action:
    """The pods' containers exit 0 (their status says Succeeded), then the pods are deleted."""
    async def run(cluster: KubeHelpers, snapshot: Snapshot) -> None:
        for p in snapshot.pods:
            if not p["metadata"]["name"].startswith(prefix):
                continue
            status = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p["metadata"]["name"]},
                      "status": {"phase": "Succeeded"}}
            await cluster.api.patch(PODS, NS, p["metadata"]["name"], status, subresource="status")
            await cluster.delete("pods", p["metadata"]["name"])
    return run


def delete(kind: str, *names: str) -> Action:
    async def run(cluster: KubeHelpers, snapshot: Snapshot) -> None:
        for name in names:
            await cluster.delete(kind, name)
    return run


def cluster_step(nodes: int) -> Step:
    return Step(f"A GPU cluster appears: {nodes} nodes with {GPUS_PER_NODE} GPUs each (one block per node)",
                apply(lambda: gpu_nodes(nodes)),
                lambda s: len(s.nodes) == nodes and len(s.slices) == nodes)


def no_device_twice(snapshot: Snapshot) -> list[str]:
    seen: dict[tuple[str, str], str] = {}
    problems = []
    for claim in snapshot.claims:
        for device in devices_of(claim):
            if device in seen:
                problems.append(f"device {device} is in claims {seen[device]} and {claim['metadata']['name']}")
            seen[device] = claim["metadata"]["name"]
    return problems


def one_block_per_group(snapshot: Snapshot) -> list[str]:
    blocks: dict[str, set[str]] = {}
    for claim in snapshot.claims:
        for pool, _ in devices_of(claim):
            blocks.setdefault(claim_holder(claim, snapshot), set()).add(f"block-{pool.rsplit('-', 1)[1]}")
    return [f"{group} got devices of blocks {sorted(b)}" for group, b in blocks.items() if len(b) > 1]


def kep5729(nodes: int, groups: int, pods_per_group: int) -> Scenario:
    names = [f"training-{i}" for i in range(groups)] if groups > 1 else ["training"]

    def generated(s: Snapshot) -> bool:
        recorded = [g for g in s.groups if (g.get("status") or {}).get("resourceClaimStatuses")]
        return len(recorded) == groups and len(s.claims) == groups

    def owned_by_groups(s: Snapshot) -> list[str]:
        return [f"claim {c['metadata']['name']} is owned by {c['metadata'].get('ownerReferences')}"
                for c in s.claims if [o["kind"] for o in c["metadata"].get("ownerReferences") or []] != ["PodGroup"]]

    def reserved_for_groups(s: Snapshot) -> list[str]:
        problems = [f"{len(s.claims)} claims for {groups} groups: pods must share their group's claim"] \
            if len(s.claims) != groups else []
        problems += [f"claim {c['metadata']['name']} is reserved for {c['status'].get('reservedFor')}"
                     for c in s.claims
                     if [r["resource"] for r in c["status"].get("reservedFor") or []] != ["podgroups"]]
        return problems + no_device_twice(s)

    def still_allocated(s: Snapshot) -> list[str]:
        return [f"claim {c['metadata']['name']} lost its allocation with the pods"
                for c in s.claims if not devices_of(c)]

    return Scenario("kep5729", "KEP-5729: ResourceClaims for PodGroups", [
        cluster_step(nodes),
        Step(f"{groups} PodGroup(s) name a ResourceClaimTemplate (2 GPUs): one claim is generated per group",
             apply(lambda: [template("two-gpus", 2), *(pod_group(n, pods_per_group, "two-gpus") for n in names)]),
             generated, owned_by_groups),
        Step(f"{pods_per_group} pods join each group: its claim is allocated once and reserved for the PodGroup",
             apply(lambda: [pod(f"{n}-worker-{i}", "two-gpus", schedulingGroup={"podGroupName": n})
                            for n in names for i in range(pods_per_group)]),
             lambda s: len(s.running()) == groups * pods_per_group, reserved_for_groups,
             picture="each PodGroup's one claim, shared by its pods"),
        Step("The pods finish and are deleted: the claims stay allocated for their groups",
             finish_pods(), lambda s: not s.pods, still_allocated),
        Step("The PodGroups are deleted: reservations released, allocations cleared, claims collected",
             delete("podgroups", *names), lambda s: not s.claims),
    ])


def gang(nodes: int, pods_per_group: int | None) -> Scenario:
    size = pods_per_group or nodes * GPUS_PER_NODE // 2 + 1

    def one_wins(s: Snapshot) -> bool:
        running = {g: len(s.running(f"{g}-")) for g in ("gang-a", "gang-b")}
        waiting = [p for p in s.pods if s.phase(p) != "Running"]
        return sorted(running.values()) == [0, size] and all(_unschedulable(p) for p in waiting)

    def all_or_nothing(s: Snapshot) -> list[str]:
        waiting = {p["metadata"]["name"] for p in s.pods if s.phase(p) != "Running"}
        holding = [c["metadata"]["name"] for c in s.claims if devices_of(c) and any(
            r.get("name") in waiting for r in (c.get("status") or {}).get("reservedFor") or [])]
        return [f"{name} holds devices for a waiting pod" for name in holding] + no_device_twice(s)

    async def finish_winner(cluster: KubeHelpers, snapshot: Snapshot) -> None:
        winner = "gang-a" if snapshot.running("gang-a-") else "gang-b"
        await finish_pods(f"{winner}-")(cluster, snapshot)
        await cluster.delete("podgroups", winner)

    return Scenario("gang", "Two gangs compete for GPUs: all or nothing", [
        cluster_step(nodes),
        Step(f"Two gangs of {size} pods, one GPU each, want {2 * size} of {nodes * GPUS_PER_NODE} GPUs: one wins, "
             "the other waits whole",
             apply(lambda: [template("one-gpu", 1), pod_group("gang-a", size), pod_group("gang-b", size),
                            *(pod(f"{g}-{i}", "one-gpu", schedulingGroup={"podGroupName": g})
                              for i in range(size) for g in ("gang-a", "gang-b"))]),
             one_wins, all_or_nothing, picture="the winning gang"),
        Step("The winner finishes and goes away: the waiting gang now fits, and runs",
             finish_winner, lambda s: len(s.running()) == size and len(s.pods) == size, no_device_twice,
             picture="the second gang, on the devices the first one freed"),
    ])


def _unschedulable(p: dict[str, Any]) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               for c in (p.get("status") or {}).get("conditions") or [])


def constraint(nodes: int, groups: int, pods_per_group: int) -> Scenario:
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "training"},
                "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": pods_per_group}},
                                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu",
                                                            "constraints": [{"matchAttribute": BLOCK}]}]}]}}

    def workers() -> list[dict[str, Any]]:
        return [pod(f"worker-{r}-{i}", "single-gpu", workloadRef={"name": "training", "podGroup": "workers",
                                                                   "podGroupReplicaKey": f"r{r}"})
                for r in range(groups) for i in range(pods_per_group)]

    return Scenario("constraint", "The seed's PodGroup-level constraint: one block per pod-group instance", [
        cluster_step(nodes),
        Step(f"A Workload's group asks for one GPU per pod, all of an instance in one {BLOCK}; {groups} instance(s) "
             f"of {pods_per_group} pods",
             apply(lambda: [template("single-gpu", 1), workload, *workers()]),
             lambda s: len(s.running()) == groups * pods_per_group,
             lambda s: one_block_per_group(s) + no_device_twice(s), picture="one block per pod-group instance"),
        Step("The Workload's pods are deleted: their claims go with them",
             finish_pods(), lambda s: not s.pods and not s.claims),
    ])


def deployment(nodes: int, replicas: int) -> Scenario:
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "seed-example-corrected.yaml").read_text()) if d]
    for d in docs:
        if d["kind"] == "Deployment":
            d["spec"]["replicas"] = replicas
        if d["kind"] == "Workload":
            d["spec"]["podGroups"][0]["policy"]["gang"]["minCount"] = replicas
    return Scenario("deployment", "The seed's example, corrected: a Deployment joins a Workload's gang", [
        cluster_step(nodes),
        Step(f"The Workload, its template and a Deployment of {replicas} replicas carrying the workloadRef",
             apply(lambda: docs), lambda s: len(s.running()) == replicas,
             lambda s: one_block_per_group(s) + no_device_twice(s), picture="the Deployment's gang"),
        Step("The Deployment is deleted: its ReplicaSet, pods and claims are collected",
             delete("deployments", "training"), lambda s: not s.pods and not s.claims),
    ])


SCENARIOS = ("kep5729", "gang", "constraint", "deployment")


def build(name: str, *, nodes: int, groups: int, pods_per_group: int | None) -> Scenario:
    """The scenario ``name`` for the demo's flags (``ValueError`` when it cannot fit the cluster)."""
    gpus = nodes * GPUS_PER_NODE
    if name == "kep5729":
        per_group = pods_per_group or 3
        if 2 * groups > gpus:
            raise ValueError(f"{groups} groups of 2 GPUs do not fit {gpus} GPUs: add --nodes")
        return kep5729(nodes, groups, per_group)
    if name == "gang":
        if pods_per_group is not None and not gpus // 2 < pods_per_group <= gpus:
            raise ValueError(f"for one gang to win, --pods-per-group must be between {gpus // 2 + 1} and {gpus}")
        return gang(nodes, pods_per_group)
    if name == "constraint":
        per_group = pods_per_group or 2
        if per_group > GPUS_PER_NODE or groups > nodes:
            raise ValueError(f"each instance needs one block of {GPUS_PER_NODE} GPUs: at most {GPUS_PER_NODE} pods "
                             f"per group and {nodes} groups on {nodes} nodes")
        return constraint(nodes, groups, per_group)
    if name == "deployment":
        replicas = pods_per_group or 2
        if replicas > GPUS_PER_NODE:
            raise ValueError(f"the gang's devices come from one block: at most {GPUS_PER_NODE} replicas")
        return deployment(nodes, replicas)
    raise ValueError(f"unknown scenario {name!r}: one of {', '.join(SCENARIOS)}")
