"""Where the controller's pods and devices go, on a fake GPU cluster (plain, blocking tests)."""

from fakeapi.fixtures import manifest
from kubernetes import client
from training_controller import LABEL, reconcile


def training_job(name: str, groups: int, workers: int, gpus: int) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={LABEL: "true"}),
                              data={"groups": str(groups), "workers": str(workers), "gpus": str(gpus)})


def test_each_group_shares_one_claim_and_runs_where_its_devices_are(fake_cluster, kube_client, namespace):
    fake_cluster.apply(manifest("gpu-cluster.yaml"))  # a DeviceClass, 2 nodes of 4 GPUs
    job = client.CoreV1Api(kube_client).create_namespaced_config_map(namespace, training_job("llm", 2, 3, 2))
    reconcile(kube_client, job)
    for g in range(2):
        for w in range(3):
            fake_cluster.wait_for("pod", f"llm-{g}-{w}", "condition=Ready", timeout=20)
    assert reconcile(kube_client, job) is True  # idempotent, and now everything runs
    claims = {c["status"]["reservedFor"][0]["name"]: c for c in fake_cluster.list("resourceclaims")}
    assert sorted(claims) == ["llm-0", "llm-1"]  # one claim per PodGroup, not per pod
    for group, claim in claims.items():
        assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["podgroups"]
        results = claim["status"]["allocation"]["devices"]["results"]
        assert len(results) == 2
        nodes = {p["spec"]["nodeName"] for p in fake_cluster.list("pods", label_selector=f"{LABEL}=llm")
                 if p["spec"]["schedulingGroup"]["podGroupName"] == group}
        assert nodes == {r["pool"] for r in results}  # the pool of a node's GPUs is named after the node


def test_a_group_too_big_for_the_cluster_waits_whole(fake_cluster, kube_client, namespace):
    fake_cluster.apply(manifest("gpu-cluster.yaml"))
    job = client.CoreV1Api(kube_client).create_namespaced_config_map(namespace, training_job("huge", 1, 2, 6))
    reconcile(kube_client, job)
    pod = fake_cluster.wait_for("pod", "huge-0-0", "condition=PodScheduled=False", timeout=20)
    assert pod["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert all(p["spec"].get("nodeName") is None for p in fake_cluster.list("pods"))
