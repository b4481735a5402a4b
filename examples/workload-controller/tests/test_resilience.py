"""The controller's loop survives what a busy cluster does to it (fakeapi's fault injection)."""

import threading

import pytest
from fakeapi.fixtures import manifest
from kubernetes import client
from test_placement import training_job
from training_controller import PHASE, run


@pytest.mark.fakeapi_only
def test_survives_a_410_and_a_conflict_storm(fake_cluster, kube_client, namespace):
    fake_cluster.apply(manifest("gpu-cluster.yaml"))
    stop = threading.Event()
    controller = threading.Thread(target=run, args=(kube_client, namespace, stop), daemon=True)
    controller.start()
    try:
        # Every update of the job's ConfigMap is refused three times (409, as under a storm of
        # concurrent writers), and the controller's watch is cut and its revision compacted
        # away, so resuming it answers 410 Expired.
        with fake_cluster.faults.fail(verb="update", resource="configmaps", code=409, count=3) as storm:
            client.CoreV1Api(kube_client).create_namespaced_config_map(namespace, training_job("llm", 1, 2, 1))
            fake_cluster.compact()
            fake_cluster.close_watches()
            job = fake_cluster.wait_for("configmap", "llm", lambda cm: cm["metadata"].get("annotations", {})
                                        .get(PHASE) == "Running", timeout=30)
        assert storm.fired == 3
        assert job["metadata"]["annotations"][PHASE] == "Running"
        assert controller.is_alive()  # it survived, rather than crashed and got lucky
    finally:
        stop.set()
        controller.join(10)
