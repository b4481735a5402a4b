"""The kube-controller-manager loops behind the workload kinds, built together.

Each loop registers its informers and handlers in its constructor (so the factory syncs them
with everything else) and returns its ``run()`` coroutine; all share the control plane's clock.
Event sources carry upstream's controller names.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.cronjob import CronJobController
from fakeapi.scheduler.controllers.daemonset import DaemonSetController
from fakeapi.scheduler.controllers.deployment import DeploymentController
from fakeapi.scheduler.controllers.disruption import DisruptionController
from fakeapi.scheduler.controllers.job import JobController
from fakeapi.scheduler.controllers.replicaset import ReplicaSetController
from fakeapi.scheduler.controllers.statefulset import StatefulSetController
from fakeapi.scheduler.controllers.ttlafterfinished import TTLAfterFinishedController
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory

from fakeapi.config import FeatureGates


def workload_controllers(api: ApiClient, factory: InformerFactory, gates: FeatureGates, clock: Clock,
                         recorder: Callable[[str], EventRecorder]) -> dict[str, Coroutine[Any, Any, None]]:
    """name -> run() of every workload controller."""
    return {
        "replicaset-controller": ReplicaSetController(api, factory, recorder("replicaset-controller"), clock).run(),
        "deployment-controller": DeploymentController(api, factory, recorder("deployment-controller"), clock).run(),
        "job-controller": JobController(api, factory, recorder("job-controller"), clock, gates).run(),
        "ttl-after-finished-controller": TTLAfterFinishedController(api, factory, clock).run(),
        "cronjob-controller": CronJobController(api, factory, recorder("cronjob-controller"), clock).run(),
        "statefulset-controller": StatefulSetController(api, factory, recorder("statefulset-controller"),
                                                        clock).run(),
        "daemonset-controller": DaemonSetController(api, factory, recorder("daemonset-controller"), clock).run(),
        "disruption-controller": DisruptionController(api, factory, recorder("controllermanager"), clock).run(),
    }
