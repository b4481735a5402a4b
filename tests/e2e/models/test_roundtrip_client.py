"""The same objects through the official client's typed APIs: create, read back, compare.

The client deserializes every response into its own generated models (built from the upstream
1.37 OpenAPI), so a field the server drops, renames or mistypes comes back as None — or, for a
mistyped scalar, fails to deserialize.  Serializing the typed object back (by the client's own
attribute map) and comparing with ``sent + upstream defaults`` checks every field at once.
The v1alpha1 Workload has no typed API in client 37 (upstream removed it in 1.36), so it goes
through ``CustomObjectsApi``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

import pytest
from kubernetes import client, config

from fakeapi.cluster import FakeCluster
from tests.e2e.models import objects
from tests.e2e.models.objects import NS, payload, with_defaults

P = ParamSpec("P")
T = TypeVar("T")

# (API class, resource name in the client's method names, namespaced) per apiVersion/kind.
TYPED: dict[tuple[str, str], tuple[type, str, bool]] = {
    ("v1", "Namespace"): (client.CoreV1Api, "namespace", False),
    ("v1", "Node"): (client.CoreV1Api, "node", False),
    ("v1", "Pod"): (client.CoreV1Api, "pod", True),
    ("v1", "ConfigMap"): (client.CoreV1Api, "config_map", True),
    ("v1", "Event"): (client.CoreV1Api, "event", True),
    ("resource.k8s.io/v1", "DeviceClass"): (client.ResourceV1Api, "device_class", False),
    ("resource.k8s.io/v1", "ResourceClaim"): (client.ResourceV1Api, "resource_claim", True),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): (client.ResourceV1Api, "resource_claim_template", True),
    ("resource.k8s.io/v1", "ResourceSlice"): (client.ResourceV1Api, "resource_slice", False),
    ("resource.k8s.io/v1", "DeviceTaintRule"): (client.ResourceV1Api, "device_taint_rule", False),
    ("scheduling.k8s.io/v1beta1", "Workload"): (client.SchedulingV1beta1Api, "workload", True),
    ("scheduling.k8s.io/v1beta1", "PodGroup"): (client.SchedulingV1beta1Api, "pod_group", True),
    ("scheduling.k8s.io/v1", "PriorityClass"): (client.SchedulingV1Api, "priority_class", False),
    **{("apps/v1", kind): (client.AppsV1Api, resource, True)
       for kind, resource in (("Deployment", "deployment"), ("ReplicaSet", "replica_set"),
                              ("StatefulSet", "stateful_set"), ("DaemonSet", "daemon_set"),
                              ("ControllerRevision", "controller_revision"))},
    ("batch/v1", "Job"): (client.BatchV1Api, "job", True),
    ("batch/v1", "CronJob"): (client.BatchV1Api, "cron_job", True),
    ("policy/v1", "PodDisruptionBudget"): (client.PolicyV1Api, "pod_disruption_budget", True),
    **{("rbac.authorization.k8s.io/v1", kind): (client.RbacAuthorizationV1Api, resource, namespaced)
       for kind, resource, namespaced in (("Role", "role", True), ("ClusterRole", "cluster_role", False),
                                          ("RoleBinding", "role_binding", True),
                                          ("ClusterRoleBinding", "cluster_role_binding", False))},
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): (client.ApiextensionsV1Api,
                                                              "custom_resource_definition", False),
    **{("v1", kind): (client.CoreV1Api, resource, namespaced)
       for kind, resource, namespaced in (("Secret", "secret", True), ("ServiceAccount", "service_account", True),
                                          ("Service", "service", True), ("Endpoints", "endpoints", True),
                                          ("PersistentVolume", "persistent_volume", False),
                                          ("PersistentVolumeClaim", "persistent_volume_claim", True),
                                          ("ResourceQuota", "resource_quota", True),
                                          ("LimitRange", "limit_range", True), ("PodTemplate", "pod_template", True))},
    ("discovery.k8s.io/v1", "EndpointSlice"): (client.DiscoveryV1Api, "endpoint_slice", True),
    ("coordination.k8s.io/v1", "Lease"): (client.CoordinationV1Api, "lease", True),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): (client.AutoscalingV2Api, "horizontal_pod_autoscaler", True),
    ("events.k8s.io/v1", "Event"): (client.EventsV1Api, "event", True),
    **{("networking.k8s.io/v1", kind): (client.NetworkingV1Api, resource, namespaced)
       for kind, resource, namespaced in (("Ingress", "ingress", True), ("IngressClass", "ingress_class", False),
                                          ("NetworkPolicy", "network_policy", True))},
    **{("storage.k8s.io/v1", kind): (client.StorageV1Api, resource, namespaced)
       for kind, resource, namespaced in (("StorageClass", "storage_class", False), ("CSIDriver", "csi_driver", False),
                                          ("CSINode", "csi_node", False),
                                          ("CSIStorageCapacity", "csi_storage_capacity", True))},
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): (client.CertificatesV1Api,
                                                              "certificate_signing_request", False),
    **{("admissionregistration.k8s.io/v1", kind): (client.AdmissionregistrationV1Api, resource, False)
       for kind, resource in (("ValidatingWebhookConfiguration", "validating_webhook_configuration"),
                              ("MutatingWebhookConfiguration", "mutating_webhook_configuration"),
                              ("ValidatingAdmissionPolicy", "validating_admission_policy"),
                              ("ValidatingAdmissionPolicyBinding", "validating_admission_policy_binding"))},
}


async def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run one blocking client call off the event loop (the server shares this loop)."""
    return await asyncio.to_thread(fn, *args, **kwargs)


@pytest.fixture
def api_client(fake_api: FakeCluster) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(fake_api.kubeconfig_path))
    yield api
    api.close()


class Typed:
    """create/read of one kind through its typed API."""

    def __init__(self, api_client: client.ApiClient, obj: dict[str, Any]) -> None:
        api_class, self.resource, self.namespaced = TYPED[(obj["apiVersion"], obj["kind"])]
        self.api = api_class(api_client)

    def _method(self, verb: str) -> Callable[..., Any]:
        return getattr(self.api, f"{verb}_{'namespaced_' if self.namespaced else ''}{self.resource}")

    async def create(self, body: dict[str, Any], **kwargs: Any) -> Any:
        args = (NS, body) if self.namespaced else (body,)
        return await call(self._method("create"), *args, **kwargs)

    async def read(self, name: str) -> Any:
        args = (name, NS) if self.namespaced else (name,)
        return await call(self._method("read"), *args)


TYPED_OBJECTS = [o for o in objects.ALL if (o["apiVersion"], o["kind"]) in TYPED]


def test_every_object_but_the_v1alpha1_workload_has_a_typed_api() -> None:
    assert [o for o in objects.ALL if o not in TYPED_OBJECTS] == [objects.ALPHA_WORKLOAD]


@pytest.mark.parametrize("obj", TYPED_OBJECTS, ids=lambda o: f"{o['kind']}/{o['metadata']['name']}")
async def test_typed_create_and_read_keep_every_field(api_client: client.ApiClient, obj: dict[str, Any]) -> None:
    typed = Typed(api_client, obj)

    created = await typed.create(obj)
    read = await typed.read(obj["metadata"]["name"])

    expected = payload(with_defaults(obj))
    assert payload(as_wire(api_client.sanitize_for_serialization(created))) == expected
    assert payload(as_wire(api_client.sanitize_for_serialization(read))) == expected


def as_wire(value: Any) -> Any:
    """The client turns times into datetimes and writes them back with ``+00:00``; the API writes ``Z``."""
    if isinstance(value, dict):
        return {k: as_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_wire(v) for v in value]
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", value):
        return value.removesuffix("+00:00") + "Z"
    return value


async def test_v1alpha1_workload_round_trips_through_custom_objects(api_client: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(api_client)
    obj = objects.ALPHA_WORKLOAD

    await call(custom.create_namespaced_custom_object, "scheduling.k8s.io", "v1alpha1", NS, "workloads", obj)
    read = await call(custom.get_namespaced_custom_object, "scheduling.k8s.io", "v1alpha1", NS, "workloads",
                      obj["metadata"]["name"])

    assert payload(read) == payload(obj)


async def test_typed_fields_deep_in_the_dra_and_scheduling_kinds(api_client: client.ApiClient) -> None:
    # Spot checks by attribute: a renamed JSON field would leave these None.
    resource = client.ResourceV1Api(api_client)
    scheduling = client.SchedulingV1beta1Api(api_client)
    core = client.CoreV1Api(api_client)
    await call(resource.create_namespaced_resource_claim, NS, objects.CLAIM)
    await call(resource.create_resource_slice, objects.SLICE)
    await call(resource.create_resource_slice, objects.COUNTER_SLICE)
    await call(scheduling.create_namespaced_pod_group, NS, objects.POD_GROUP)
    await call(core.create_namespaced_pod, NS, objects.POD)

    claim = await call(resource.read_namespaced_resource_claim, "gpu-claim", NS)
    small = claim.spec.devices.requests[0].first_available[1]
    assert (small.count, small.allocation_mode, small.tolerations[0].operator) == (2, "ExactCount", "Equal")
    assert claim.spec.devices.constraints[0].match_attribute == "gpu.example.com/numa"
    assert claim.spec.devices.config[0].opaque.parameters == {"mps": True}

    device = (await call(resource.read_resource_slice, "node-1-gpus")).spec.devices[0]
    assert device.attributes["numa"].int == 0 and device.attributes["rdma"].bool is True
    assert device.capacity["memory"].value == "80Gi" and device.taints[0].effect == "NoSchedule"
    counters = (await call(resource.read_resource_slice, "node-2-counters")).spec.shared_counters[0]
    assert counters.counters["memory"].value == "80Gi"

    group = await call(scheduling.read_namespaced_pod_group, "trainer-workers", NS)
    assert group.spec.scheduling_policy.gang.min_count == 4
    assert group.spec.workload_ref.template_name == "workers"
    assert [c.resource_claim_template_name for c in group.spec.resource_claims] == ["gpu-template", None]

    pod = await call(core.read_namespaced_pod, "worker-0", NS)
    assert pod.spec.scheduling_group.pod_group_name == "trainer-workers"
    assert pod.spec.containers[0].resources.claims[1].request == "gpu"


def status_body(err: client.ApiException) -> dict[str, Any]:
    return json.loads(err.body)


@pytest.mark.parametrize(("obj", "path", "value", "cause"), [
    (objects.CLAIM, ("spec", "devices"),
     {"requests": [{"name": f"r{i}", "exactly": {"deviceClassName": objects.DRIVER}} for i in range(33)]},
     {"reason": "FieldValueTooMany", "message": "Too many: 33: must have at most 32 items",
      "field": "spec.devices.requests"}),
    (objects.POD_GROUP, ("spec", "schedulingPolicy", "gang", "minCount"), 0,
     {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.schedulingPolicy.gang.minCount"}),
    (objects.SLICE, ("spec", "devices", 0, "attributes", "model", "string"), "x" * 65,
     {"reason": "FieldValueTooLong", "message": "Too long: may not be more than 64 bytes",
      "field": "spec.devices[0].attributes[model].string"}),
], ids=["33-requests", "gang-min-count", "attribute-too-long"])
async def test_invalid_object_is_a_422_with_the_upstream_cause(api_client: client.ApiClient, obj: dict[str, Any],
                                                              path: tuple[str | int, ...], value: Any,
                                                              cause: dict[str, str]) -> None:
    bad = objects.with_field(obj, path, value)

    with pytest.raises(client.ApiException) as info:
        await Typed(api_client, obj).create(bad)

    body = status_body(info.value)
    assert (info.value.status, body["reason"], body["details"]["kind"]) == (422, "Invalid", obj["kind"])
    assert body["details"]["causes"] == [cause]


async def test_strict_field_validation_is_a_400_naming_the_field(api_client: client.ApiClient) -> None:
    # The typed APIs refuse unknown fields client-side (pydantic models), so send the raw dict.
    bad = objects.with_field(objects.CLAIM, ("spec", "devices", "constraints", 0, "matchAttrib"), "x")
    custom = client.CustomObjectsApi(api_client)

    with pytest.raises(client.ApiException) as info:
        await call(custom.create_namespaced_custom_object, "resource.k8s.io", "v1", NS, "resourceclaims", bad,
                   field_validation="Strict")

    assert info.value.status == 400
    assert status_body(info.value)["message"] == (
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding error: '
        'unknown field "spec.devices.constraints[0].matchAttrib"')
