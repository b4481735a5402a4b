"""A kopf operator: a GpuJob asks for ``spec.workers`` pods with one GPU each."""

from __future__ import annotations

import os
from typing import Any

import kopf
from kubernetes import client, config

LABEL = "example.dev/gpujob"


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    return kopf.login_with_kubeconfig(**kwargs)  # KUBECONFIG as it is now, not at import time


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))  # read now: the test sets it
    settings.posting.enabled = False


@kopf.on.create("example.dev", "v1", "gpujobs")
def create_workers(spec: dict[str, Any], name: str, namespace: str, body: kopf.Body, **_: Any) -> dict[str, Any]:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.example.com"}}]}}}}
    kopf.adopt(template, owner=body)
    client.ResourceV1Api().create_namespaced_resource_claim_template(namespace, template)
    for i in range(spec["workers"]):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-{i}", "labels": {LABEL: name}},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": name}],
                        "containers": [{"name": "work", "image": "worker:1",
                                        "resources": {"claims": [{"name": "gpu"}]}}]}}
        kopf.adopt(pod, owner=body)
        client.CoreV1Api().create_namespaced_pod(namespace, pod)
    return {"workers": spec["workers"]}


@kopf.on.event("", "v1", "pods", labels={LABEL: kopf.PRESENT})
def report(body: kopf.Body, namespace: str, **_: Any) -> None:
    name = body["metadata"]["labels"][LABEL]
    pods = client.CoreV1Api().list_namespaced_pod(namespace, label_selector=f"{LABEL}={name}").items
    running = sum(p.status.phase == "Running" for p in pods)
    try:
        job = client.CustomObjectsApi().get_namespaced_custom_object("example.dev", "v1", namespace, "gpujobs", name)
    except client.ApiException as exc:
        if exc.status == 404:  # the job is being deleted with its pods
            return
        raise
    phase = "Running" if running and running == job["spec"]["workers"] else "Pending"
    client.CustomObjectsApi().patch_namespaced_custom_object_status(
        "example.dev", "v1", namespace, "gpujobs", name, {"status": {"phase": phase, "running": running}})
