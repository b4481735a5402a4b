"""A training-job controller written with the official client, as a downstream project has one.

A ConfigMap labelled ``example.dev/training=true`` asks for ``groups`` pod groups of ``workers``
pods, each group sharing one claim of ``gpus`` GPUs (KEP-5729).  :func:`reconcile` creates the
Workload, the PodGroups and the pods (idempotently); :func:`run` watches the ConfigMaps and
reconciles, resuming its watch from the last revision, re-listing on 410 Expired, and retrying
its status update on 409 Conflict.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

LABEL = "example.dev/training"
PHASE = "example.dev/phase"
GROUP, VERSION = "scheduling.k8s.io", "v1beta1"


def _create(fn: Callable[..., object], *args: object) -> None:
    try:
        fn(*args)
    except ApiException as exc:
        if exc.status != 409:  # AlreadyExists: reconciled before
            raise


def reconcile(api: client.ApiClient, job: client.V1ConfigMap) -> bool:
    """Create what ``job`` asks for; True once every pod runs."""
    ns, name = job.metadata.namespace, job.metadata.name
    groups, workers = int(job.data.get("groups", "1")), int(job.data.get("workers", "2"))
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.example.com", "count": int(job.data.get("gpus", "1"))}}]}}}}
    _create(custom.create_namespaced_custom_object, "resource.k8s.io", "v1", ns, "resourceclaimtemplates", template)
    claims = [{"name": "gpu", "resourceClaimTemplateName": name}]
    workload = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workload", "metadata": {"name": name},
                "spec": {"podGroupTemplates": [{"name": "workers", "resourceClaims": claims,
                                                "schedulingPolicy": {"gang": {"minCount": workers}}}]}}
    _create(custom.create_namespaced_custom_object, GROUP, VERSION, ns, "workloads", workload)
    for g in range(groups):
        group = f"{name}-{g}"
        pod_group = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PodGroup", "metadata": {"name": group},
                     "spec": {"workloadRef": {"workloadName": name, "templateName": "workers"},
                              "schedulingPolicy": {"gang": {"minCount": workers}}, "resourceClaims": claims}}
        _create(custom.create_namespaced_custom_object, GROUP, VERSION, ns, "podgroups", pod_group)
        for w in range(workers):
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{group}-{w}", "labels": {LABEL: name}},
                   "spec": {"schedulingGroup": {"podGroupName": group}, "resourceClaims": claims,
                            "containers": [{"name": "train", "image": "trainer:1",
                                            "resources": {"claims": [{"name": "gpu"}]}}]}}
            _create(core.create_namespaced_pod, ns, pod)
    pods = core.list_namespaced_pod(ns, label_selector=f"{LABEL}={name}").items
    return len(pods) == groups * workers and all(p.status.phase == "Running" for p in pods)


def _mark_running(core: client.CoreV1Api, ns: str, name: str) -> None:
    """Record the phase with optimistic concurrency: re-read and retry on 409."""
    while True:
        job = core.read_namespaced_config_map(name, ns)
        job.metadata.annotations = {**(job.metadata.annotations or {}), PHASE: "Running"}
        try:
            core.replace_namespaced_config_map(name, ns, job)
            return
        except ApiException as exc:
            if exc.status != 409:
                raise


def run(api: client.ApiClient, namespace: str, stop: threading.Event) -> None:
    """List and watch the training ConfigMaps until ``stop``; a 410 re-lists."""
    core = client.CoreV1Api(api)
    while not stop.is_set():
        listing = core.list_namespaced_config_map(namespace, label_selector=f"{LABEL}=true")
        version = listing.metadata.resource_version
        pending = list(listing.items)
        try:
            while not stop.is_set():
                for job in pending:
                    if (job.metadata.annotations or {}).get(PHASE) != "Running" and reconcile(api, job):
                        _mark_running(core, namespace, job.metadata.name)
                pending = []
                for event in watch.Watch().stream(core.list_namespaced_config_map, namespace,
                                                  label_selector=f"{LABEL}=true", resource_version=version,
                                                  timeout_seconds=1):
                    version = event["object"].metadata.resource_version
                    if event["type"] in ("ADDED", "MODIFIED"):
                        pending.append(event["object"])
                if not pending:  # nothing new: look again at jobs whose pods were not running yet
                    pending = core.list_namespaced_config_map(namespace, label_selector=f"{LABEL}=true").items
        except ApiException as exc:
            if exc.status != 410:
                raise
