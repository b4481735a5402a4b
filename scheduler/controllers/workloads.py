"""The kube-controller-manager loops behind the workload kinds, built together.

Each loop registers its informers and handlers in its constructor, which the control plane
calls (before the factory syncs everything, or when the loop's first object appears: see
``triggers``); all share the control plane's clock.
Event sources carry upstream's controller names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Coroutine
from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers import names
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
                         recorder: Callable[[str], EventRecorder], enabled: Collection[str] = names.KNOWN,
                         ) -> dict[str, Callable[[], Coroutine[Any, Any, None]]]:
    """name -> a function building the controller and returning its run(), for every workload
    controller in ``enabled``; a controller registers its informers when built."""
    builders: dict[str, Callable[[], Any]] = {
        names.REPLICA_SET: lambda: ReplicaSetController(api, factory, recorder(names.REPLICA_SET), clock),
        names.DEPLOYMENT: lambda: DeploymentController(api, factory, recorder(names.DEPLOYMENT), clock),
        names.JOB: lambda: JobController(api, factory, recorder(names.JOB), clock, gates),
        names.TTL_AFTER_FINISHED: lambda: TTLAfterFinishedController(api, factory, clock),
        names.CRON_JOB: lambda: CronJobController(api, factory, recorder(names.CRON_JOB), clock),
        names.STATEFUL_SET: lambda: StatefulSetController(api, factory, recorder(names.STATEFUL_SET), clock),
        names.DAEMON_SET: lambda: DaemonSetController(api, factory, recorder(names.DAEMON_SET), clock),
        names.DISRUPTION: lambda: DisruptionController(api, factory, recorder("controllermanager"), clock),
    }
    return {name: (lambda build=build: build().run()) for name, build in builders.items() if name in enabled}
