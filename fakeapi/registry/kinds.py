"""Every served kind, declared once.  Adding a kind is adding one ``ResourceType`` here (and its
model and strategy beside the others).

Models and strategies come from ``fakeapi.models`` / ``fakeapi.validation`` by
(group, version, kind), so this table stays about identity, scope, subresources, selectors and
columns.
"""

from __future__ import annotations

from typing import Any

import fakeapi.registry.printers as printers
from fakeapi.models import MODELS
from fakeapi.models import events_v1 as events_v1_model
from fakeapi.registry import reviews
from fakeapi.registry.crds import CRD_COLUMNS
from fakeapi.registry.printers import (
    CLAIM_COLUMNS,
    CONFIGMAP_COLUMNS,
    CONTROLLER_REVISION_COLUMNS,
    CRONJOB_COLUMNS,
    DAEMONSET_COLUMNS,
    DEPLOYMENT_COLUMNS,
    EVENT_COLUMNS,
    JOB_COLUMNS,
    NAMESPACE_COLUMNS,
    NODE_COLUMNS,
    PDB_COLUMNS,
    POD_COLUMNS,
    REPLICASET_COLUMNS,
    SLICE_COLUMNS,
    STATEFULSET_COLUMNS,
    path,
    pod_row_conditions,
)
from fakeapi.registry.printers_admission import (
    VALIDATING_ADMISSION_POLICY_BINDING_COLUMNS,
    VALIDATING_ADMISSION_POLICY_COLUMNS,
    WEBHOOK_CONFIGURATION_COLUMNS,
)
from fakeapi.registry.printers_autoscaling import HPA_COLUMNS
from fakeapi.registry.printers_certificates import CSR_COLUMNS
from fakeapi.registry.printers_everyday import (
    ENDPOINT_SLICE_COLUMNS,
    ENDPOINTS_COLUMNS,
    LEASE_COLUMNS,
    LIMIT_RANGE_COLUMNS,
    PERSISTENT_VOLUME_CLAIM_COLUMNS,
    PERSISTENT_VOLUME_COLUMNS,
    POD_TEMPLATE_COLUMNS,
    RESOURCE_QUOTA_COLUMNS,
    SECRET_COLUMNS,
    SERVICE_ACCOUNT_COLUMNS,
    SERVICE_COLUMNS,
    converted,
)
from fakeapi.registry.printers_networking import INGRESS_CLASS_COLUMNS, INGRESS_COLUMNS, NETWORK_POLICY_COLUMNS
from fakeapi.registry.printers_storage import (
    CSI_DRIVER_COLUMNS,
    CSI_NODE_COLUMNS,
    CSI_STORAGE_CAPACITY_COLUMNS,
    STORAGE_CLASS_COLUMNS,
)
from fakeapi.registry.resource import FieldGetter, ResourceType
from fakeapi.registry.subresources import (
    APPROVAL,
    ATTACH,
    BINDING,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    EXEC,
    FINALIZE,
    LOG,
    PORT_FORWARD,
    SCALE,
    STATUS,
)
from fakeapi.registry.tokenrequest import TOKEN
from fakeapi.validation import STRATEGIES
from fakeapi.validation.strategy import Strategy


def _kind(group: str, version: str, kind: str, plural: str, *, namespaced: bool, **extra: Any) -> ResourceType:
    key = (group, version, kind)
    return ResourceType(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced,
                        model=MODELS.get(key), strategy=STRATEGIES.get(key, Strategy()), **extra)


RBAC = "rbac.authorization.k8s.io"

POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": path("spec", "nodeName"),
    "spec.schedulerName": path("spec", "schedulerName"),
    "spec.serviceAccountName": path("spec", "serviceAccountName"),
    "spec.restartPolicy": path("spec", "restartPolicy"),
    "spec.hostNetwork": lambda p: "true" if (p.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": path("status", "phase"),
    "status.podIP": path("status", "podIP"),
    "status.nominatedNodeName": path("status", "nominatedNodeName"),
}

# Upstream's event ToSelectableFields.
EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"involvedObject.{name}": path("involvedObject", name)
       for name in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": path("reason"), "reportingComponent": path("reportingComponent"),
    "source": path("source", "component"), "type": path("type"),
}

KINDS: tuple[ResourceType, ...] = (
    _kind("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",),
          subresources=(STATUS, FINALIZE), tracks_generation=False, returns_deleted_object=True,
          field_selectors={"status.phase": path("status", "phase")}, columns=NAMESPACE_COLUMNS),
    _kind("", "v1", "Node", "nodes", namespaced=False, short_names=("no",),
          subresources=(STATUS,), tracks_generation=False,
          field_selectors={"spec.unschedulable": path("spec", "unschedulable")}, columns=NODE_COLUMNS),
    _kind("", "v1", "Pod", "pods", namespaced=True, short_names=("po",), categories=("all",),
          subresources=(STATUS, BINDING, EVICTION, LOG, EXEC, ATTACH, PORT_FORWARD, EPHEMERAL_CONTAINERS),
          tracks_generation=False, returns_deleted_object=True,
          field_selectors=POD_FIELDS, columns=POD_COLUMNS, row_conditions=pod_row_conditions),
    _kind("", "v1", "Event", "events", namespaced=True, short_names=("ev",), tracks_generation=False,
          field_selectors=EVENT_FIELDS,
          columns=EVENT_COLUMNS),
    _kind("", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",), tracks_generation=False,
          columns=CONFIGMAP_COLUMNS),
    _kind("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", namespaced=False, returns_deleted_object=True),
    _kind("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", namespaced=True,
          subresources=(STATUS,), returns_deleted_object=True, columns=CLAIM_COLUMNS),
    _kind("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", namespaced=True,
          returns_deleted_object=True),
    _kind("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", namespaced=False, returns_deleted_object=True,
          field_selectors={"spec.nodeName": path("spec", "nodeName"), "spec.driver": path("spec", "driver"),
                           "spec.pool.name": path("spec", "pool", "name")},
          columns=SLICE_COLUMNS),
    _kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", namespaced=False,
          subresources=(STATUS,)),
    # v1 first: the group's preferred version, as upstream's (GA) PriorityClass makes it.
    _kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False, short_names=("pc",),
          columns=printers.PRIORITY_CLASS_COLUMNS),
    _kind("scheduling.k8s.io", "v1beta1", "Workload", "workloads", namespaced=True, separate_storage=True),
    _kind("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", namespaced=True,
          subresources=(STATUS,)),
    _kind("scheduling.k8s.io", "v1alpha1", "Workload", "workloads", namespaced=True, separate_storage=True),
    _kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False,
          short_names=("crd", "crds"), categories=("api-extensions",), subresources=(STATUS,), columns=CRD_COLUMNS),
    _kind("apps", "v1", "Deployment", "deployments", namespaced=True, short_names=("deploy",), categories=("all",),
          subresources=(STATUS, SCALE), columns=DEPLOYMENT_COLUMNS),
    _kind("apps", "v1", "ReplicaSet", "replicasets", namespaced=True, short_names=("rs",), categories=("all",),
          subresources=(STATUS, SCALE), columns=REPLICASET_COLUMNS),
    _kind("apps", "v1", "StatefulSet", "statefulsets", namespaced=True, short_names=("sts",), categories=("all",),
          subresources=(STATUS, SCALE), columns=STATEFULSET_COLUMNS),
    _kind("apps", "v1", "DaemonSet", "daemonsets", namespaced=True, short_names=("ds",), categories=("all",),
          subresources=(STATUS,), columns=DAEMONSET_COLUMNS),
    _kind("apps", "v1", "ControllerRevision", "controllerrevisions", namespaced=True,
          columns=CONTROLLER_REVISION_COLUMNS),
    _kind("batch", "v1", "Job", "jobs", namespaced=True, categories=("all",), subresources=(STATUS,),
          columns=JOB_COLUMNS),
    _kind("batch", "v1", "CronJob", "cronjobs", namespaced=True, short_names=("cj",), categories=("all",),
          subresources=(STATUS,), columns=CRONJOB_COLUMNS),
    _kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", namespaced=True, short_names=("pdb",),
          subresources=(STATUS,), columns=PDB_COLUMNS),
    # RBAC, and the access reviews: create-only, answered by the server's authorizer, never stored.
    _kind(RBAC, "v1", "Role", "roles", namespaced=True, tracks_generation=False, columns=printers.ROLE_COLUMNS),
    _kind(RBAC, "v1", "ClusterRole", "clusterroles", namespaced=False, tracks_generation=False,
          columns=printers.ROLE_COLUMNS),
    _kind(RBAC, "v1", "RoleBinding", "rolebindings", namespaced=True, tracks_generation=False,
          columns=printers.BINDING_COLUMNS),
    _kind(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False, tracks_generation=False,
          columns=printers.BINDING_COLUMNS),
    _kind("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False,
          review=reviews.self_subject_access_review),
    _kind("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False,
          review=reviews.subject_access_review),
    _kind("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced=True,
          review=reviews.local_subject_access_review),
    _kind("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", namespaced=False,
          review=reviews.self_subject_rules_review),
    _kind("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False,
          review=reviews.token_review),
    _kind("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False,
          review=reviews.self_subject_review),
    # The everyday kinds beside a controller's own.  events.k8s.io/v1 Events are the core Events,
    # converted on the way in and out (as upstream stores both in one place).
    _kind("", "v1", "Secret", "secrets", namespaced=True, tracks_generation=False,
          field_selectors={"type": path("type")}, columns=SECRET_COLUMNS),
    _kind("", "v1", "ServiceAccount", "serviceaccounts", namespaced=True, short_names=("sa",), subresources=(TOKEN,),
          tracks_generation=False, columns=SERVICE_ACCOUNT_COLUMNS),
    _kind("", "v1", "Service", "services", namespaced=True, short_names=("svc",), categories=("all",),
          subresources=(STATUS,), tracks_generation=False, columns=SERVICE_COLUMNS),
    _kind("", "v1", "Endpoints", "endpoints", namespaced=True, short_names=("ep",), tracks_generation=False,
          columns=ENDPOINTS_COLUMNS),
    _kind("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False, short_names=("pv",),
          subresources=(STATUS,), tracks_generation=False, columns=PERSISTENT_VOLUME_COLUMNS),
    _kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced=True, short_names=("pvc",),
          subresources=(STATUS,), tracks_generation=False, columns=PERSISTENT_VOLUME_CLAIM_COLUMNS),
    _kind("", "v1", "ResourceQuota", "resourcequotas", namespaced=True, short_names=("quota",),
          subresources=(STATUS,), tracks_generation=False, columns=RESOURCE_QUOTA_COLUMNS),
    _kind("", "v1", "LimitRange", "limitranges", namespaced=True, short_names=("limits",), tracks_generation=False,
          columns=LIMIT_RANGE_COLUMNS),
    _kind("", "v1", "PodTemplate", "podtemplates", namespaced=True, columns=POD_TEMPLATE_COLUMNS),
    _kind("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", namespaced=True,
          columns=ENDPOINT_SLICE_COLUMNS),
    _kind("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True, tracks_generation=False,
          columns=LEASE_COLUMNS),
    _kind("events.k8s.io", "v1", "Event", "events", namespaced=True, short_names=("ev",), tracks_generation=False,
          stored_as=("", "events"), read_view=events_v1_model.from_core, write_view=events_v1_model.to_core,
          field_selectors={label: path(*label.split(".")) for label in events_v1_model.FIELD_LABELS},
          columns=converted(EVENT_COLUMNS, events_v1_model.to_core)),
    # networking.k8s.io/v1: an Ingress's controller reports through its status subresource.
    _kind("networking.k8s.io", "v1", "Ingress", "ingresses", namespaced=True, short_names=("ing",),
          subresources=(STATUS,), columns=INGRESS_COLUMNS),
    _kind("networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False,
          columns=INGRESS_CLASS_COLUMNS),
    _kind("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", namespaced=True, short_names=("netpol",),
          columns=NETWORK_POLICY_COLUMNS),
    # storage.k8s.io/v1: of the four, only CSIDrivers get a generation (their strategy sets it upstream).
    _kind("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False, short_names=("sc",),
          tracks_generation=False, columns=STORAGE_CLASS_COLUMNS),
    _kind("storage.k8s.io", "v1", "CSIDriver", "csidrivers", namespaced=False, columns=CSI_DRIVER_COLUMNS),
    _kind("storage.k8s.io", "v1", "CSINode", "csinodes", namespaced=False, tracks_generation=False,
          columns=CSI_NODE_COLUMNS),
    _kind("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", namespaced=True,
          tracks_generation=False, columns=CSI_STORAGE_CAPACITY_COLUMNS),
    # certificates.k8s.io/v1: no signer runs; an approved request gets its certificate from a client
    # acting as the signer (through /status).
    _kind("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", namespaced=False,
          short_names=("csr",), subresources=(STATUS, APPROVAL), tracks_generation=False,
          field_selectors={"spec.signerName": path("spec", "signerName")}, columns=CSR_COLUMNS),
    # autoscaling/v2: stored and validated; no autoscaler runs, so status is what clients write.
    _kind("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", namespaced=True,
          short_names=("hpa",), categories=("all",), subresources=(STATUS,), columns=HPA_COLUMNS),
    # admissionregistration.k8s.io/v1: webhook configurations stored and validated (their webhooks
    # called when enabled); ValidatingAdmissionPolicies stored, validated and enforced.
    _kind("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
          namespaced=False, categories=("api-extensions",), columns=WEBHOOK_CONFIGURATION_COLUMNS),
    _kind("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
          namespaced=False, categories=("api-extensions",), columns=WEBHOOK_CONFIGURATION_COLUMNS),
    # Enforced on every write their bindings match (fakeapi.registry.policies).
    _kind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies",
          namespaced=False, categories=("api-extensions",), subresources=(STATUS,),
          columns=VALIDATING_ADMISSION_POLICY_COLUMNS),
    _kind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
          "validatingadmissionpolicybindings", namespaced=False, categories=("api-extensions",),
          columns=VALIDATING_ADMISSION_POLICY_BINDING_COLUMNS),
)
