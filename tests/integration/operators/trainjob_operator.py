"""A real kopf operator for the test in ``test_kopf_operator.py`` (run with ``kopf run``).

A ``TrainJob`` (``training.example.com/v1``) asks for ``spec.workers`` pods, each with a GPU
claimed through a ResourceClaimTemplate.  The operator creates the template and the pods (owned
by the TrainJob), and keeps ``status.phase``/``status.running`` up to date from its pods.
"""

from __future__ import annotations

from typing import Any

import kopf
from kubernetes import client, config

GROUP, VERSION, PLURAL = "training.example.com", "v1", "trainjobs"
LABEL = "training.example.com/job"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    config.load_kube_config()
    settings.posting.enabled = False
    settings.watching.server_timeout = 30


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_workers(spec: dict[str, Any], name: str, namespace: str, body: kopf.Body, patch: kopf.Patch,
                   **_: Any) -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"{name}-gpu"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": spec["deviceClass"]}}]}}}}
    kopf.adopt(template, owner=body)
    client.ResourceV1Api().create_namespaced_resource_claim_template(namespace, template)
    for i in range(spec["workers"]):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"{name}-worker-{i}", "labels": {LABEL: name}},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"{name}-gpu"}],
                        "containers": [{"name": "train", "image": spec["image"],
                                        "resources": {"claims": [{"name": "gpu"}]}}]}}
        kopf.adopt(pod, owner=body)
        client.CoreV1Api().create_namespaced_pod(namespace, pod)
    patch.status["phase"] = "Pending"
    patch.status["running"] = 0


@kopf.on.event("", "v1", "pods", labels={LABEL: kopf.PRESENT})
def track_workers(body: kopf.Body, namespace: str, **_: Any) -> None:
    job = body["metadata"]["labels"][LABEL]
    pods = client.CoreV1Api().list_namespaced_pod(namespace, label_selector=f"{LABEL}={job}").items
    running = sum(1 for p in pods if p.status.phase == "Running")
    try:
        trainjob = client.CustomObjectsApi().get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, job)
    except client.ApiException as exc:
        if exc.status == 404:
            return  # the job is gone; its pods follow through garbage collection
        raise
    phase = "Running" if running == trainjob["spec"]["workers"] else "Pending"
    client.CustomObjectsApi().patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, job, {"status": {"phase": phase, "running": running}})
