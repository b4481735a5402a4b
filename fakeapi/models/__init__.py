"""Typed models of every served kind (pydantic v2), the one source of schema facts.

``MODELS`` maps (group, version, kind) to the model class of the whole object.  Each module
covers one group/version; :mod:`fakeapi.models.schema` derives decoding (strict unknown-field
detection, Go type checks) and the OpenAPI components from the same classes.

The model modules evaluate their annotations when a class is made (no ``from __future__ import
annotations``), so pydantic reads types instead of compiling and evaluating ~2,000 strings at
import (~30 ms of ~410); the two whose models name themselves or a later class
(``apiextensions_v1``, ``scheduling_v1beta1``) keep the import.
"""

from __future__ import annotations

from pydantic import BaseModel

import fakeapi.models.admissionregistration_v1 as admissionregistration_v1
import fakeapi.models.apps_v1 as apps_v1  # the workload kinds, kept apart from the lines above
import fakeapi.models.authentication_v1 as authentication_v1
import fakeapi.models.authorization_v1 as authorization_v1
import fakeapi.models.autoscaling_v1 as autoscaling_v1
import fakeapi.models.autoscaling_v2 as autoscaling_v2
import fakeapi.models.batch_v1 as batch_v1
import fakeapi.models.certificates_v1 as certificates_v1
import fakeapi.models.coordination_v1 as coordination_v1
import fakeapi.models.core_v1_config as core_v1_config
import fakeapi.models.core_v1_services as core_v1_services
import fakeapi.models.core_v1_storage as core_v1_storage
import fakeapi.models.discovery_v1 as discovery_v1
import fakeapi.models.events_v1 as events_v1
import fakeapi.models.networking_v1 as networking_v1
import fakeapi.models.policy_v1 as policy_v1
import fakeapi.models.rbac_v1 as rbac_v1
import fakeapi.models.scheduling_v1 as scheduling_v1
import fakeapi.models.storage_v1 as storage_v1
import fakeapi.models.tokenrequest_v1 as tokenrequest_v1
from fakeapi.models import apiextensions_v1, core_v1, resource_v1, scheduling_v1alpha1, scheduling_v1beta1

MODELS: dict[tuple[str, str, str], type[BaseModel]] = {
    model.gvk: model
    for module in (core_v1, resource_v1, scheduling_v1beta1, scheduling_v1alpha1, apiextensions_v1)
    for model in module.MODELS.values()
}
# The workload kinds (apps/v1, batch/v1, policy/v1).
MODELS.update({model.gvk: model for module in (apps_v1, batch_v1, policy_v1) for model in module.MODELS.values()})
# RBAC and the access reviews (rbac.authorization.k8s.io, authorization.k8s.io, authentication.k8s.io).
MODELS.update({model.gvk: model for module in (rbac_v1, authorization_v1, authentication_v1)
               for model in module.MODELS.values()})
# The everyday kinds beside a controller's own (core Secret, ServiceAccount, Service, Endpoints,
# volumes, quotas, pod templates; EndpointSlice, Lease, events.k8s.io Event; the TokenRequest body).
MODELS.update({model.gvk: model for module in (core_v1_config, core_v1_services, core_v1_storage, discovery_v1,
                                               coordination_v1, events_v1, tokenrequest_v1)
               for model in module.MODELS.values()})
# The bodies of subresources that take a kind of their own (pods/eviction, .../scale): not stored,
# but decoded like every other body.
MODELS.update({model.gvk: model for model in (policy_v1.Eviction, autoscaling_v1.Scale)})
# scheduling.k8s.io/v1 PriorityClass.
MODELS.update({model.gvk: model for model in scheduling_v1.MODELS.values()})
# storage.k8s.io/v1 StorageClass, CSIDriver, CSINode and CSIStorageCapacity.
MODELS.update({model.gvk: model for model in storage_v1.MODELS.values()})
# certificates.k8s.io/v1 CertificateSigningRequest.
MODELS.update({model.gvk: model for model in certificates_v1.MODELS.values()})
# networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy.
MODELS.update({model.gvk: model for model in networking_v1.MODELS.values()})
# autoscaling/v2 HorizontalPodAutoscaler.
MODELS.update({model.gvk: model for model in autoscaling_v2.MODELS.values()})
# admissionregistration.k8s.io/v1: webhook configurations, admission policies and their bindings.
MODELS.update({model.gvk: model for model in admissionregistration_v1.MODELS.values()})
