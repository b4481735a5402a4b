"""Per-kind admission strategies (defaulting, gate-dependent dropping, admission, validation).

``STRATEGIES`` maps (group, version, kind) to the kind's :class:`~fakeapi.validation.strategy.Strategy`.
Pure helpers live beside them: :mod:`.names` (format checks), :mod:`.common` (ObjectMeta,
lists, immutability), one module per API group.
"""

from __future__ import annotations

import fakeapi.validation.admissionregistration as admissionregistration
import fakeapi.validation.autoscaling as autoscaling
import fakeapi.validation.certificates as certificates
import fakeapi.validation.coordination as coordination
import fakeapi.validation.core_config as core_config
import fakeapi.validation.csi as csi
import fakeapi.validation.discovery as discovery
import fakeapi.validation.events as events
import fakeapi.validation.networking as networking
import fakeapi.validation.priority as priority
import fakeapi.validation.rbac as rbac
import fakeapi.validation.services as services
import fakeapi.validation.storage as storage
import fakeapi.validation.storageclass as storageclass
from fakeapi.validation import apiextensions, apps, batch, core, devices, policy, resource, scheduling
from fakeapi.validation.strategy import Strategy

STRATEGIES: dict[tuple[str, str, str], Strategy] = {
    **{("", "v1", kind): s for kind, s in core.STRATEGIES.items()},
    **{("resource.k8s.io", "v1", kind): s for kind, s in (resource.STRATEGIES | devices.STRATEGIES).items()},
    ("scheduling.k8s.io", "v1beta1", "Workload"): scheduling.WorkloadV1beta1Strategy(),
    ("scheduling.k8s.io", "v1beta1", "PodGroup"): scheduling.PodGroupStrategy(),
    ("scheduling.k8s.io", "v1alpha1", "Workload"): scheduling.WorkloadV1alpha1Strategy(),
    **{("apiextensions.k8s.io", "v1", kind): s for kind, s in apiextensions.STRATEGIES.items()},
    **{("apps", "v1", kind): s for kind, s in apps.STRATEGIES.items()},
    ("batch", "v1", "Job"): batch.JobStrategy(),
    ("batch", "v1", "CronJob"): batch.CronJobStrategy(),
    **{("policy", "v1", kind): s for kind, s in policy.STRATEGIES.items()},
    **{("rbac.authorization.k8s.io", "v1", kind): s for kind, s in rbac.STRATEGIES.items()},
    # The everyday kinds beside a controller's own.
    **{("", "v1", kind): s for kind, s in (core_config.STRATEGIES | services.STRATEGIES | storage.STRATEGIES).items()},
    **{("discovery.k8s.io", "v1", kind): s for kind, s in discovery.STRATEGIES.items()},
    **{("coordination.k8s.io", "v1", kind): s for kind, s in coordination.STRATEGIES.items()},
    **{("events.k8s.io", "v1", kind): s for kind, s in events.STRATEGIES.items()},
    ("scheduling.k8s.io", "v1", "PriorityClass"): priority.PriorityClassStrategy(),
    **{(networking.GROUP, "v1", kind): s for kind, s in networking.STRATEGIES.items()},
    **{("storage.k8s.io", "v1", kind): s for kind, s in (storageclass.STRATEGIES | csi.STRATEGIES).items()},
    **{("certificates.k8s.io", "v1", kind): s for kind, s in certificates.STRATEGIES.items()},
    **{("autoscaling", "v2", kind): s for kind, s in autoscaling.STRATEGIES.items()},
    **{("admissionregistration.k8s.io", "v1", kind): s for kind, s in admissionregistration.STRATEGIES.items()},
}
