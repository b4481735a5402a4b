"""One realistic object per served kind (KEP examples), plus the defaults a 1.37 apiserver adds.

Both round-trip tests (kubectl and the official client) send these and compare what comes back
with ``sent + DEFAULTS[kind]`` (a merge: the defaults only add keys).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

DRIVER = "gpu.example.com"
NS = "default"


def resource(kind: str, name: str, spec: dict[str, Any], *, namespaced: bool = True,
             api_version: str = "resource.k8s.io/v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": NS} if namespaced else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def cel(expression: str) -> dict[str, Any]:
    return {"cel": {"expression": expression}}


DEVICE_CLASS = resource("DeviceClass", "gpu.example.com", {
    "selectors": [cel(f"device.driver == '{DRIVER}'")],
    "config": [{"opaque": {"driver": DRIVER, "parameters": {"sharing": {"strategy": "TimeSlicing"}}}}],
    "extendedResourceName": "example.com/gpu",
}, namespaced=False)

# KEP-4816 (prioritized list) + constraints + claim config: a big GPU, else two small ones on one NUMA node.
CLAIM_SPEC: dict[str, Any] = {"devices": {
    "requests": [
        {"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": DRIVER, "selectors": [cel("device.attributes['gpu.example.com'].model"
                                                                         " == 'H100'")]},
            {"name": "small", "deviceClassName": DRIVER, "count": 2,
             "tolerations": [{"key": "example.com/unhealthy", "effect": "NoSchedule"}]},
        ]},
        {"name": "nic", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All",
                                    "selectors": [cel("device.attributes['gpu.example.com'].rdma")]}},
    ],
    "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "gpu.example.com/numa"}],
    "config": [{"requests": ["gpu"], "opaque": {"driver": DRIVER, "parameters": {"mps": True}}}],
}}
CLAIM = resource("ResourceClaim", "gpu-claim", CLAIM_SPEC)
CLAIM_TEMPLATE = resource("ResourceClaimTemplate", "gpu-template", {
    "metadata": {"labels": {"app": "trainer"}},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
})

SLICE = resource("ResourceSlice", "node-1-gpus", {
    "driver": DRIVER, "nodeName": "node-1",
    "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
    "devices": [{
        "name": "gpu-0",
        "attributes": {"model": {"string": "H100"}, "numa": {"int": 0}, "rdma": {"bool": True},
                       "driverVersion": {"version": "1.2.3"}},
        "capacity": {"memory": {"value": "80Gi"}},
        # timeAdded given: the server stamps a missing one with the current time.
        "taints": [{"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule",
                    "timeAdded": "2026-11-30T08:00:00Z"}],
    }],
}, namespaced=False)

# KEP-4815: one physical GPU offered whole or as two halves. Since 1.35 the counters live in their
# own slice of the pool (a slice carries devices or sharedCounters, not both).
COUNTER_SLICE = resource("ResourceSlice", "node-2-counters", {
    "driver": DRIVER, "nodeName": "node-2",
    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 2},
    "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}],
}, namespaced=False)
PARTITIONABLE_SLICE = resource("ResourceSlice", "node-2-gpus", {
    "driver": DRIVER, "nodeName": "node-2",
    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 2},
    "devices": [
        {"name": "gpu-0", "consumesCounters": [{"counterSet": "gpu-0-counters",
                                                "counters": {"memory": {"value": "80Gi"}}}]},
        *({"name": f"gpu-0-half-{i}", "consumesCounters": [{"counterSet": "gpu-0-counters",
                                                            "counters": {"memory": {"value": "40Gi"}}}]}
          for i in (0, 1)),
    ],
}, namespaced=False)

TAINT_RULE = resource("DeviceTaintRule", "drain-gpu-0", {
    "deviceSelector": {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
    "taint": {"key": "example.com/maintenance", "value": "firmware", "effect": "NoExecute",
              "timeAdded": "2026-11-30T08:00:00Z"},
}, namespaced=False)

SCHEDULING = "scheduling.k8s.io/v1beta1"
WORKLOAD = resource("Workload", "trainer", {
    "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "trainer"},
    "podGroupTemplates": [{
        "name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
        "resourceClaims": [{"name": "shared-gpus", "resourceClaimTemplateName": "gpu-template"}],
    }],
}, api_version=SCHEDULING)
POD_GROUP = resource("PodGroup", "trainer-workers", {
    "workloadRef": {"workloadName": "trainer", "templateName": "workers"},
    "schedulingPolicy": {"gang": {"minCount": 4}},
    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
    "resourceClaims": [{"name": "shared-gpus", "resourceClaimTemplateName": "gpu-template"},
                       {"name": "dataset", "resourceClaimName": "gpu-claim"}],
}, api_version=SCHEDULING)
# The 1.35 Workload with the KEP-5729 draft's claims per pod-group instance.
ALPHA_WORKLOAD = resource("Workload", "trainer-alpha", {
    "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "trainer-alpha"},
    "podGroups": [{
        "name": "workers", "policy": {"gang": {"minCount": 2}},
        "resourceClaims": [{"name": "shared-gpus", "resourceClaimTemplateName": "gpu-template",
                            "constraints": [{"matchAttribute": "gpu.example.com/numa"}]}],
    }],
}, api_version="scheduling.k8s.io/v1alpha1")

POD = resource("Pod", "worker-0", {
    "schedulingGroup": {"podGroupName": "trainer-workers"},
    # "shared-gpus" matches the PodGroup's entry (same name and source), so it is the group's claim.
    "resourceClaims": [{"name": "shared-gpus", "resourceClaimTemplateName": "gpu-template"},
                       {"name": "own", "resourceClaimTemplateName": "gpu-template"}],
    "containers": [{"name": "train", "image": "registry.example.com/trainer:1.0",
                    "resources": {"requests": {"cpu": "2"}, "claims": [{"name": "own"}, {"name": "shared-gpus",
                                                                                     "request": "gpu"}]},
                    "ports": [{"containerPort": 8080}]}],
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
}, api_version="v1")
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"gpu": "true"}},
        "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trainer-config", "namespace": NS},
              "data": {"epochs": "10"}, "binaryData": {"seed": "AAEC"}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "training"}}
EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "worker-0.1", "namespace": NS},
         "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": NS, "name": "worker-0"},
         "reason": "FailedScheduling", "message": "0/1 nodes are available", "type": "Warning", "count": 1,
         "source": {"component": "default-scheduler"}}

# The workload kinds: pod templates carry claims and a pod group, as the seed's example does.
_TEMPLATE = {"metadata": {"labels": {"app": "trainer"}},
             "spec": {"schedulingGroup": {"podGroupName": "trainer-workers"},
                      "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
                      "containers": [{"name": "train", "image": "registry.example.com/trainer:1.0",
                                      "resources": {"claims": [{"name": "gpu"}]}}]}}
_SELECTOR = {"matchLabels": {"app": "trainer"}, "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
DEPLOYMENT = resource("Deployment", "trainer-deploy", {
    "replicas": 2, "selector": _SELECTOR, "template": _TEMPLATE, "minReadySeconds": 1,
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "50%"}},
}, api_version="apps/v1")
REPLICA_SET = resource("ReplicaSet", "trainer-rs", {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE},
                       api_version="apps/v1")
STATEFUL_SET = resource("StatefulSet", "trainer-sts", {
    "replicas": 0, "serviceName": "trainer", "selector": _SELECTOR, "template": _TEMPLATE,
    "podManagementPolicy": "Parallel", "ordinals": {"start": 1},
}, api_version="apps/v1")
DAEMON_SET = resource("DaemonSet", "trainer-ds", {
    "selector": _SELECTOR, "template": {**_TEMPLATE, "spec": {**_TEMPLATE["spec"], "nodeSelector": {"gpu": "none"}}},
    "updateStrategy": {"type": "OnDelete"},
}, api_version="apps/v1")
CONTROLLER_REVISION = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                       "metadata": {"name": "trainer-sts-1", "namespace": NS},
                       "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}
_JOB_TEMPLATE = {"metadata": {"labels": {"app": "trainer"}},
                 "spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"}}
JOB = resource("Job", "trainer-job", {
    "manualSelector": True, "selector": {"matchLabels": {"app": "trainer"}}, "suspend": True,
    "completions": 4, "parallelism": 2, "completionMode": "Indexed", "template": _JOB_TEMPLATE,
    "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                                   {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
    "successPolicy": {"rules": [{"succeededIndexes": "0-1", "succeededCount": 1}]},
}, api_version="batch/v1")
CRON_JOB = resource("CronJob", "trainer-nightly", {
    "schedule": "0 3 * * *", "timeZone": "Europe/Berlin", "concurrencyPolicy": "Forbid", "suspend": True,
    "jobTemplate": {"spec": {"backoffLimit": 2, "template": _JOB_TEMPLATE}},
}, api_version="batch/v1")
PDB = resource("PodDisruptionBudget", "trainer-pdb", {
    "maxUnavailable": "25%", "selector": {"matchLabels": {"app": "trainer"}},
    "unhealthyPodEvictionPolicy": "AlwaysAllow",
}, api_version="policy/v1")

RBAC = "rbac.authorization.k8s.io"
ROLE = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "trainer-reader", "namespace": NS},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]},
                  {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
                   "resourceNames": ["trainer-config"]}]}
CLUSTER_ROLE = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                "metadata": {"name": "trainer-viewer", "labels": {f"{RBAC}/aggregate-to-view": "true"}},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/trainer": "true"}}]},
                "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics"]}]}
ROLE_BINDING = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
                "metadata": {"name": "trainer-reads", "namespace": NS},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "trainer-reader"},
                "subjects": [{"kind": "ServiceAccount", "name": "trainer", "namespace": NS},
                             {"kind": "User", "name": "alice"}]}
CLUSTER_ROLE_BINDING = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
                        "metadata": {"name": "trainer-views"},
                        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "trainer-viewer"},
                        "subjects": [{"kind": "Group", "name": "trainers", "apiGroup": RBAC}]}

CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "trainjobs.training.example.com"},
       "spec": {"group": "training.example.com", "scope": "Namespaced",
                "names": {"plural": "trainjobs", "kind": "TrainJob", "shortNames": ["tj"]},
                "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                  "spec": {"type": "object", "properties": {"workers": {"type": "integer"}},
                                           "x-kubernetes-validations": [{"rule": "self.workers > 0"}]}}}}}]}}

ALL = (NAMESPACE, DEVICE_CLASS, CLAIM, CLAIM_TEMPLATE, SLICE, COUNTER_SLICE, PARTITIONABLE_SLICE, TAINT_RULE,
       WORKLOAD, POD_GROUP, ALPHA_WORKLOAD, POD, NODE, CONFIG_MAP, EVENT,
       DEPLOYMENT, REPLICA_SET, STATEFUL_SET, DAEMON_SET, CONTROLLER_REVISION, JOB, CRON_JOB, PDB,
       ROLE, CLUSTER_ROLE, ROLE_BINDING, CLUSTER_ROLE_BINDING, CRD)

_EXACT = {"allocationMode": "ExactCount", "count": 1}
DEFAULTS: dict[str, dict[str, Any]] = {
    # Namespace: the kubernetes finalizer (spec) is set on create.
    "training": {"spec": {"finalizers": ["kubernetes"]}},
    # rbac/v1 SetDefaults_Subject: User and Group subjects get the RBAC group.
    "trainer-reads": {"subjects": [{}, {"apiGroup": RBAC}]},
    # resource.k8s.io/v1 defaults: ExactCount with count 1, toleration operator Equal.
    "gpu-claim": {"spec": {"devices": {"requests": [
        {"firstAvailable": [_EXACT, {"allocationMode": "ExactCount", "tolerations": [{"operator": "Equal"}]}]},
        {},
    ]}}},
    "gpu-template": {"spec": {"spec": {"devices": {"requests": [{"exactly": _EXACT}]}}}},
    # apiextensions/v1 SetDefaults_CustomResourceDefinition(Spec).
    "trainjobs.training.example.com": {"spec": {"names": {"singular": "trainjob", "listKind": "TrainJobList"},
                                                "conversion": {"strategy": "None"}}},
    # PodGroup: disruptionMode defaults to single; the Priority admission plugin sets priority (no class: 0).
    "trainer-workers": {"spec": {"disruptionMode": {"single": {}}, "priority": 0}},
    # core/v1 SetDefaults_Pod/Container plus the Priority, ServiceAccount and DefaultTolerationSeconds
    # admission plugins (the tolerations follow the one sent).
    "worker-0": {"spec": {
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "securityContext": {}, "schedulerName": "default-scheduler", "enableServiceLinks": True,
        "priority": 0, "preemptionPolicy": "PreemptLowerPriority",
        "serviceAccountName": "default", "serviceAccount": "default",
        "tolerations": [{}, *({"key": f"node.kubernetes.io/{taint}", "operator": "Exists", "effect": "NoExecute",
                               "tolerationSeconds": 300} for taint in ("not-ready", "unreachable"))],
        "containers": [{"imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "ports": [{"protocol": "TCP"}]}],
    }},
}
# SetDefaults_PodSpec on every pod template (no Priority admission: that is for pods).
_TEMPLATE_DEFAULTS = {"spec": {
    "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "securityContext": {},
    "schedulerName": "default-scheduler",
    "containers": [{"imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File"}],
}}
_ALWAYS = {"spec": {**_TEMPLATE_DEFAULTS["spec"], "restartPolicy": "Always"}}
DEFAULTS.update({
    "trainer-deploy": {"spec": {"template": _ALWAYS, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600}},
    "trainer-rs": {"spec": {"template": _ALWAYS}},
    "trainer-sts": {"spec": {"template": _ALWAYS, "revisionHistoryLimit": 10,
                             "updateStrategy": {"type": "RollingUpdate",
                                                "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
                             "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain",
                                                                      "whenScaled": "Retain"}}},
    "trainer-ds": {"spec": {"template": _ALWAYS, "revisionHistoryLimit": 10}},
    "trainer-job": {"spec": {"template": _TEMPLATE_DEFAULTS, "backoffLimit": 6,
                             "podReplacementPolicy": "Failed",
                             "podFailurePolicy": {"rules": [{}, {"onPodConditions": [{"status": "True"}]}]}}},
    "trainer-nightly": {"spec": {"jobTemplate": {"spec": {"template": _TEMPLATE_DEFAULTS}},
                                 "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}},
})
"""Keys a 1.37 apiserver adds on create, by object name (lists merge element by element)."""

# The everyday kinds beside a controller's own.
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "trainer-creds", "namespace": NS},
          "type": "kubernetes.io/basic-auth", "data": {"username": "YWRtaW4=", "password": "czNjcmV0"}}
SERVICE_ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "trainer-sa", "namespace": NS},
                   "automountServiceAccountToken": False, "imagePullSecrets": [{"name": "registry"}]}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "trainer-svc", "namespace": NS},
           "spec": {"selector": {"app": "trainer"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                                              {"name": "metrics", "port": 9090, "protocol": "TCP"}]}}
ENDPOINTS = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "trainer-external", "namespace": NS},
             "subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"name": "http", "port": 8080}]}]}
PERSISTENT_VOLUME = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "trainer-data"},
                     "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                              "storageClassName": "manual", "hostPath": {"path": "/data"}}}
PERSISTENT_VOLUME_CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": "trainer-scratch", "namespace": NS},
                           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                                    "resources": {"requests": {"storage": "1Gi"}}}}
RESOURCE_QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu-quota", "namespace": NS},
                  "spec": {"hard": {"pods": "10", "requests.cpu": "4"}}}
LIMIT_RANGE = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": NS},
               "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"},
                                    "defaultRequest": {"cpu": "100m"}}]}}
POD_TEMPLATE = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "trainer-template", "namespace": NS},
                "template": {"metadata": {"labels": {"app": "trainer"}},
                             "spec": {"containers": [{"name": "train", "image": "registry.example.com/trainer:1.0"}]}}}
ENDPOINT_SLICE = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                  "metadata": {"name": "trainer-external-1", "namespace": NS,
                               "labels": {"kubernetes.io/service-name": "trainer-external"}},
                  "addressType": "IPv4", "endpoints": [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}],
                  "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}
LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "trainer-leader", "namespace": NS},
         "spec": {"holderIdentity": "trainer-0", "leaseDurationSeconds": 15, "leaseTransitions": 0,
                  "acquireTime": "2026-01-01T00:00:00.250000Z", "renewTime": "2026-01-01T00:00:10.250000Z"}}
EVENT_V1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "worker-0.2", "namespace": NS},
            "eventTime": "2026-01-01T00:00:00.125000Z", "reportingController": "example.com/trainer",
            "reportingInstance": "trainer-0", "action": "Train", "reason": "Started", "type": "Normal",
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": NS, "name": "worker-0"},
            "note": "training started"}
ALL = (*ALL, SECRET, SERVICE_ACCOUNT, SERVICE, ENDPOINTS, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, RESOURCE_QUOTA,
       LIMIT_RANGE, POD_TEMPLATE, ENDPOINT_SLICE, LEASE, EVENT_V1)
DEFAULTS.update({
    # SetDefaults_Service, then the cluster IP and families the service REST storage allocates (the
    # first address went to the kubernetes service).
    "trainer-svc": {"spec": {"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                         "clusterIP": "10.96.0.2", "clusterIPs": ["10.96.0.2"], "ipFamilyPolicy": "SingleStack",
                         "ipFamilies": ["IPv4"], "ports": [{"protocol": "TCP"}, {"targetPort": 9090}]}},
    "trainer-external": {"subsets": [{"ports": [{"protocol": "TCP"}]}]},
    "trainer-data": {"spec": {"persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}},
    "trainer-scratch": {"spec": {"volumeMode": "Filesystem"}},
    # Container resources are a value struct: {} when the template sets none.
    "trainer-template": {"template": {"spec": {**_ALWAYS["spec"],
                                               "containers": [{**_ALWAYS["spec"]["containers"][0], "resources": {}}]}}},
    # events.k8s.io/v1: deprecatedSource is a value struct (always present).
    "worker-0.2": {"deprecatedSource": {}},
})


def with_defaults(sent: dict[str, Any]) -> dict[str, Any]:
    """What the server should return for ``sent``: its fields plus the upstream defaults."""
    return merge(copy.deepcopy(sent), DEFAULTS.get(sent["metadata"]["name"], {}))


def merge(base: Any, extra: Any) -> Any:
    if isinstance(base, dict) and isinstance(extra, dict):
        for key, value in extra.items():
            base[key] = merge(base[key], value) if key in base else copy.deepcopy(value)
        return base
    if isinstance(base, list) and isinstance(extra, list):
        # Items beyond the sent ones are appended defaults (the default tolerations).
        assert len(extra) >= len(base)
        return [merge(b, e) for b, e in zip(base, extra, strict=False)] + copy.deepcopy(extra[len(base):])
    return extra


def with_field(obj: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with ``value`` set at ``path`` (keys and list indexes)."""
    out = copy.deepcopy(obj)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


def payload(obj: dict[str, Any]) -> dict[str, Any]:
    """The user-written part of an object: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


# scheduling.k8s.io/v1 PriorityClass: preemptionPolicy defaults to PreemptLowerPriority.
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "trainer-high"},
                  "value": 1000, "description": "Training that may preempt batch work."}
ALL = (*ALL, PRIORITY_CLASS)
DEFAULTS["trainer-high"] = {"preemptionPolicy": "PreemptLowerPriority"}

# storage.k8s.io/v1.  The class is not the default one, so claims elsewhere keep no class.
STORAGE = "storage.k8s.io/v1"
STORAGE_CLASS = {"apiVersion": STORAGE, "kind": "StorageClass", "metadata": {"name": "trainer-ssd"},
                 "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3", "encrypted": "true"},
                 "allowVolumeExpansion": True, "mountOptions": ["noatime"],
                 "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.ebs.csi.aws.com/zone",
                                                                   "values": ["us-east-1a", "us-east-1b"]}]}]}
CSI_DRIVER = {"apiVersion": STORAGE, "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"},
              "spec": {"attachRequired": True, "podInfoOnMount": True, "fsGroupPolicy": "File",
                       "tokenRequests": [{"audience": "sts.amazonaws.com", "expirationSeconds": 3600}],
                       "serviceAccountTokenInSecrets": True}}
# Named as its node; node-2 (the one with partitionable GPUs) since names are unique across ALL.
CSI_NODE = {"apiVersion": STORAGE, "kind": "CSINode", "metadata": {"name": "node-2"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-0123456789abcdef0",
                                  "topologyKeys": ["topology.ebs.csi.aws.com/zone"],
                                  "allocatable": {"count": 25}}]}}
CSI_STORAGE_CAPACITY = {"apiVersion": STORAGE, "kind": "CSIStorageCapacity",
                        "metadata": {"name": "csisc-trainer-ssd-us-east-1a", "namespace": NS},
                        "storageClassName": "trainer-ssd", "capacity": "500Gi", "maximumVolumeSize": "16Ti",
                        "nodeTopology": {"matchLabels": {"topology.ebs.csi.aws.com/zone": "us-east-1a"}}}
ALL = (*ALL, STORAGE_CLASS, CSI_DRIVER, CSI_NODE, CSI_STORAGE_CAPACITY)
DEFAULTS.update({
    "trainer-ssd": {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
    "ebs.csi.aws.com": {"spec": {"storageCapacity": False, "volumeLifecycleModes": ["Persistent"],
                                 "requiresRepublish": False, "seLinuxMount": False}},
})

# networking.k8s.io/v1.  The Ingress names its class, so no default class is needed; its paths
# reach a Service by port number, by port name (the default backend) and a non-Service resource.
NETWORKING = "networking.k8s.io/v1"
INGRESS_CLASS = {"apiVersion": NETWORKING, "kind": "IngressClass", "metadata": {"name": "trainer-nginx"},
                 "spec": {"controller": "k8s.io/ingress-nginx",
                          "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                                         "name": "external-lb", "scope": "Namespace", "namespace": NS}}}
INGRESS = {"apiVersion": NETWORKING, "kind": "Ingress",
           "metadata": {"name": "trainer-web", "namespace": NS,
                        "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/"}},
           "spec": {"ingressClassName": "trainer-nginx",
                    "defaultBackend": {"service": {"name": "trainer-svc", "port": {"name": "metrics"}}},
                    "tls": [{"hosts": ["trainer.example.com", "*.trainer.example.com"], "secretName": "trainer-tls"}],
                    "rules": [{"host": "trainer.example.com", "http": {"paths": [
                        {"path": "/api", "pathType": "Prefix",
                         "backend": {"service": {"name": "trainer-svc", "port": {"number": 9090}}}},
                        {"path": "/static", "pathType": "ImplementationSpecific",
                         "backend": {"resource": {"apiGroup": "k8s.example.com", "kind": "StorageBucket",
                                                  "name": "static-assets"}}}]}}]}}
NETWORK_POLICY = {"apiVersion": NETWORKING, "kind": "NetworkPolicy",
                  "metadata": {"name": "trainer-isolation", "namespace": NS},
                  "spec": {"podSelector": {"matchLabels": {"app": "trainer"}},
                           "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                                                      "kubernetes.io/metadata.name": "monitoring"}},
                                                  "podSelector": {"matchLabels": {"app": "prometheus"}}},
                                                 {"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}}],
                                        "ports": [{"protocol": "TCP", "port": 9090},
                                                  {"port": 32000, "endPort": 32768}]}],
                           "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                                       "ports": [{"protocol": "UDP", "port": 53}]}]}}
ALL = (*ALL, INGRESS_CLASS, INGRESS, NETWORK_POLICY)
DEFAULTS.update({
    # SetDefaults_NetworkPolicy (Egress too, as the policy has egress rules) and the port's TCP.
    "trainer-isolation": {"spec": {"policyTypes": ["Ingress", "Egress"],
                                   "ingress": [{"ports": [{}, {"protocol": "TCP"}]}]}},
})

# certificates.k8s.io/v1.  A real PKCS#10 request (EC P-256, CN=trainer, O=ml-team), made once with
# cryptography and kept here.  The server records who asked: the open cluster's insecure superuser.
CSR_PEM = b"""-----BEGIN CERTIFICATE REQUEST-----
MIHgMIGGAgEAMCQxEDAOBgNVBAMMB3RyYWluZXIxEDAOBgNVBAoMB21sLXRlYW0w
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQMTHPtG4mTLbGxtbUAc0OcoB2cFQid
9iyQMoZtflLxlTvgYDJYvN6Vn7skviXn89do06UW89E32WqvvlqZF750oAAwCgYI
KoZIzj0EAwIDSQAwRgIhAPJjZ+11sKqBsu3KLE7XTZQGLQvkjj5JghoA6ihwu5Yp
AiEAxDsMInusk5DTXmKuOx1Z42XyN+w+xxvJi8hldxPjmos=
-----END CERTIFICATE REQUEST-----
"""
CSR = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
       "metadata": {"name": "trainer-client"},
       "spec": {"request": base64.b64encode(CSR_PEM).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                "expirationSeconds": 86400, "usages": ["digital signature", "client auth"]}}
ALL = (*ALL, CSR)
DEFAULTS["trainer-client"] = {"spec": {"username": "system:unsecured",
                                       "groups": ["system:masters", "system:authenticated"]}}

# autoscaling/v2: an HPA beside the Deployment, on CPU and a per-pod custom metric, scaling down
# slowly.  minReplicas and the scale-up rules are left to the v2 defaults.
HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "trainer-hpa", "namespace": NS},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "trainer-deploy"},
                "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                                 "type": "Utilization", "averageUtilization": 70}}},
                            {"type": "Pods", "pods": {
                                "metric": {"name": "requests_per_second",
                                           "selector": {"matchLabels": {"verb": "GET"}}},
                                "target": {"type": "AverageValue", "averageValue": "500m"}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600, "tolerance": "50m",
                                           "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}
ALL = (*ALL, HPA)
DEFAULTS["trainer-hpa"] = {"spec": {"minReplicas": 1, "behavior": {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    "scaleDown": {"selectPolicy": "Max"}}}}

# admissionregistration.k8s.io/v1: what an operator's install manifest carries (stored, never
# called).  The validating webhook is reached through a Service with a CA bundle and two match
# conditions; the mutating one by URL, with its own policies, selectors and a wildcard rule.
ADMISSION = "admissionregistration.k8s.io/v1"
WEBHOOK_CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIBtrainer\n-----END CERTIFICATE-----\n").decode()
VALIDATING_WEBHOOK = {
    "apiVersion": ADMISSION, "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "trainer-validating-webhook", "labels": {"app.kubernetes.io/name": "trainer"}},
    "webhooks": [{"name": "vtrainjob.training.example.com", "sideEffects": "None",
                  "admissionReviewVersions": ["v1", "v1beta1"],
                  "clientConfig": {"caBundle": WEBHOOK_CA,
                                   "service": {"namespace": NS, "name": "trainer-webhook",
                                               "path": "/validate-training-example-com-v1-trainjob"}},
                  "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["training.example.com"],
                             "apiVersions": ["v1"], "resources": ["trainjobs", "trainjobs/status"],
                             "scope": "Namespaced"}],
                  "matchConditions": [
                      {"name": "exclude-kubelet", "expression": '!("system:nodes" in request.userInfo.groups)'},
                      {"name": "labelled", "expression": "has(object.metadata.labels)"}]}]}
MUTATING_WEBHOOK = {
    "apiVersion": ADMISSION, "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "trainer-mutating-webhook"},
    "webhooks": [{"name": "mpod.training.example.com", "sideEffects": "NoneOnDryRun", "admissionReviewVersions": ["v1"],
                  "failurePolicy": "Ignore", "matchPolicy": "Exact", "timeoutSeconds": 5,
                  "reinvocationPolicy": "IfNeeded",
                  "clientConfig": {"url": "https://trainer-webhook.example.com:9443/mutate-v1-pod"},
                  "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                                                              "operator": "NotIn", "values": ["kube-system"]}]},
                  "objectSelector": {"matchLabels": {"training.example.com/inject": "true"}},
                  "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}]}
ALL = (*ALL, VALIDATING_WEBHOOK, MUTATING_WEBHOOK)
DEFAULTS.update({
    # SetDefaults_ValidatingWebhook, the service's port 443.
    "trainer-validating-webhook": {"webhooks": [{
        "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "timeoutSeconds": 10, "clientConfig": {"service": {"port": 443}}}]},
    # SetDefaults_Rule: scope * (the rest was sent).
    "trainer-mutating-webhook": {"webhooks": [{"rules": [{"scope": "*"}]}]},
})

# A ValidatingAdmissionPolicy and its binding (enforced: this one only warns, on TrainJobs).
ADMISSION_POLICY = {
    "apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "trainer-jobs"},
    "spec": {"failurePolicy": "Ignore",
             "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"],
                                                     "apiGroups": ["training.example.com"], "apiVersions": ["v1"],
                                                     "resources": ["trainjobs"]}]},
             "matchConditions": [{"name": "not-system",
                                  "expression": "!request.userInfo.username.startsWith('system:')"}],
             "variables": [{"name": "workers", "expression": "object.spec.workers"}],
             "validations": [{"expression": "variables.workers <= 64", "reason": "Forbidden",
                              "messageExpression": "'at most 64 workers, not ' + string(variables.workers)"}]}}
ADMISSION_POLICY_BINDING = {
    "apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "trainer-jobs-warn"},
    "spec": {"policyName": "trainer-jobs", "validationActions": ["Warn", "Audit"],
             "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}}}}
ALL = (*ALL, ADMISSION_POLICY, ADMISSION_POLICY_BINDING)
DEFAULTS.update({
    # SetDefaults_MatchResources and SetDefaults_Rule; the status, a value struct, reads back empty.
    "trainer-jobs": {"spec": {"matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {},
                                                   "objectSelector": {}, "resourceRules": [{"scope": "*"}]}},
                     "status": {}},
    "trainer-jobs-warn": {"spec": {"matchResources": {"matchPolicy": "Equivalent", "objectSelector": {}}}},
})
