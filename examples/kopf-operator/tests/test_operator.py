"""The operator, run by kopf's own test runner, against a fake cluster with GPUs."""

from pathlib import Path

from fakeapi.fixtures import manifest
from kopf.testing import KopfRunner

HERE = Path(__file__).parent.parent


def test_a_gpujob_runs_its_workers_on_gpus(fake_cluster, kubeconfig, namespace, monkeypatch):
    fake_cluster.apply(manifest("gpu-cluster.yaml"))
    fake_cluster.apply(HERE / "deploy" / "crd.yaml")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    with KopfRunner(["run", "--standalone", f"--namespace={namespace}", str(HERE / "gpujob_operator.py")]) as runner:
        fake_cluster.apply({"apiVersion": "example.dev/v1", "kind": "GpuJob", "metadata": {"name": "train"},
                            "spec": {"workers": 3}})
        job = fake_cluster.wait_for("gpujob", "train", "jsonpath={.status.phase}=Running", timeout=30)
        assert job["status"]["running"] == 3
        claims = fake_cluster.list("resourceclaims")
        assert sorted(c["status"]["reservedFor"][0]["name"] for c in claims) == ["train-0", "train-1", "train-2"]
        devices = [(r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
        assert len(set(devices)) == 3  # three distinct GPUs
        fake_cluster.delete("gpujob", "train", wait=True)
        for i in range(3):  # the garbage collector removes the pods it owned, and their claims
            fake_cluster.wait_for("pod", f"train-{i}", "delete", timeout=20)
    assert runner.exit_code == 0, runner.output
    assert runner.exception is None
