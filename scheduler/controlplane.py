"""Wire the control plane together: one client, shared informers, and the loops that use them.

Start-up order matters: every loop registers its informers and handlers in its constructor,
then the factory starts all informers, waits until every cache holds a complete list, and only
then do the loops run — so no loop acts on a half-filled cache.  Stop cancels the loops first,
then the informers, then closes the HTTP session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any

from fakeapi.scheduler.client import ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.connection import Connection
from fakeapi.scheduler.controllers import names
from fakeapi.scheduler.controllers.clusterrole_aggregation import ClusterRoleAggregationController
from fakeapi.scheduler.controllers.devicetainteviction import DeviceTaintEvictionController
from fakeapi.scheduler.controllers.endpoints import EndpointsController
from fakeapi.scheduler.controllers.names import enabled_controllers
from fakeapi.scheduler.controllers.nodelifecycle import NodeLifecycleController
from fakeapi.scheduler.controllers.podgc import PodGCController
from fakeapi.scheduler.controllers.podgroup_protection import PodGroupProtectionController
from fakeapi.scheduler.controllers.resourceclaim import ResourceClaimController
from fakeapi.scheduler.controllers.serviceaccounts import ServiceAccountsController
from fakeapi.scheduler.controllers.tainteviction import TaintEvictionController
from fakeapi.scheduler.controllers.workloads import workload_controllers
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.kubelet import Kubelet
from fakeapi.scheduler.nodelease import NodeLeases
from fakeapi.scheduler.scheduler import Scheduler

from fakeapi.config import FeatureGates
from fakeapi.machinery.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# Event source components, as upstream names them.
SCHEDULER_COMPONENT = "default-scheduler"
CLAIM_CONTROLLER_COMPONENT = "resource_claim"
KUBELET_COMPONENT = "kubelet"
NODE_CONTROLLER_COMPONENT = "node-controller"

_DEFAULT_GATES = FeatureGates()


class ControlPlane:
    """Scheduler, ResourceClaim controller and kubelet emulation against one API server URL."""

    def __init__(self, server: str | Connection, *, gates: FeatureGates = _DEFAULT_GATES, kubelet: bool = True,
                 sync_timeout: float = 10.0, clock: Clock | None = None,
                 controllers: str | Iterable[str] | None = names.ALL) -> None:
        """``server``: a URL, or a :class:`Connection` with the CA and token of a secure server.
        ``clock``: the control plane's time (:class:`~fakeapi.scheduler.clock.ManualClock` in tests).
        ``controllers``: kube-controller-manager's ``--controllers`` list (see
        :mod:`~fakeapi.scheduler.controllers.names`), e.g. ``["resourceclaim-controller"]`` for
        the DRA loops alone; fewer controllers watch fewer resources, so start and stop cost less.
        ValueError names an unknown controller."""
        self.controllers = enabled_controllers(controllers)
        self.clock = clock or Clock()
        self._connection = server if isinstance(server, Connection) else Connection(server)
        self.server_url = self._connection.server
        self.gates = gates
        self._with_kubelet = kubelet
        self._sync_timeout = sync_timeout
        self._api: ApiClient | None = None
        self._factory: InformerFactory | None = None
        self._recorders: list[EventRecorder] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> ControlPlane:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Build every loop, sync the informers, then run the loops as background tasks."""
        api = self._api = ApiClient(self._connection, user_agent="fakeapi-control-plane")
        api.open()
        factory = self._factory = InformerFactory(api)
        loops: dict[str, Coroutine[Any, Any, None]] = {}
        try:
            loops["scheduler"] = Scheduler(api, factory, self.gates, self._recorder(SCHEDULER_COMPONENT),
                                           clock=self.clock).run()
            enabled = self.controllers
            if names.RESOURCE_CLAIM in enabled:
                controller = ResourceClaimController(api, factory, self.gates,
                                                     self._recorder(CLAIM_CONTROLLER_COMPONENT))
                loops[names.RESOURCE_CLAIM] = controller.run()
            if self.gates.DRADeviceTaints and names.DEVICE_TAINT_EVICTION in enabled:
                loops[names.DEVICE_TAINT_EVICTION] = DeviceTaintEvictionController(
                    api, factory, self._recorder(names.DEVICE_TAINT_EVICTION), self.clock).run()
            if names.CLUSTER_ROLE_AGGREGATION in enabled:
                loops[names.CLUSTER_ROLE_AGGREGATION] = ClusterRoleAggregationController(api, factory).run()
            if self.gates.GenericWorkload and names.PODGROUP_PROTECTION in enabled:
                loops[names.PODGROUP_PROTECTION] = PodGroupProtectionController(api, factory).run()
            loops.update(workload_controllers(api, factory, self.gates, self.clock, self._recorder, enabled))
            if enabled & {names.ENDPOINTS, names.ENDPOINT_SLICE}:
                loops[names.ENDPOINTS] = EndpointsController(api, factory).run()
            if names.SERVICE_ACCOUNT in enabled:
                loops[names.SERVICE_ACCOUNT] = ServiceAccountsController(api, factory).run()
            if names.POD_GC in enabled:
                loops[names.POD_GC] = PodGCController(api, factory, self.clock).run()
            if names.TAINT_EVICTION in enabled:
                loops[names.TAINT_EVICTION] = TaintEvictionController(
                    api, factory, self._recorder(names.TAINT_EVICTION), self.clock).run()
            if names.NODE_LIFECYCLE in enabled:
                loops[names.NODE_LIFECYCLE] = NodeLifecycleController(
                    api, factory, self._recorder(NODE_CONTROLLER_COMPONENT), self.clock).run()
            if self._with_kubelet:
                loops["kubelet"] = Kubelet(api, factory, self._recorder(KUBELET_COMPONENT), clock=self.clock).run()
                loops["node-lease"] = NodeLeases(api, factory, clock=self.clock).run()
            factory.start()
            await factory.wait_for_cache_sync(self._sync_timeout)
        except BaseException:
            for coro in loops.values():
                coro.close()
            await self.stop()
            raise
        for name, coro in loops.items():
            task = asyncio.create_task(coro, name=name)
            task.add_done_callback(_report_crash)
            self._tasks.append(task)

    async def stop(self) -> None:
        """Cancel the loops and informers and close the HTTP session; safe to call twice."""
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        if self._factory is not None:
            await self._factory.stop()
            self._factory = None
        recorders, self._recorders = self._recorders, []
        for recorder in recorders:
            await recorder.close()
        if self._api is not None:
            await self._api.close()
            self._api = None

    def _recorder(self, component: str) -> EventRecorder:
        assert self._api is not None
        # kube-scheduler records through events.k8s.io (series); the controllers and the kubelet through core/v1.
        recorder = EventRecorder(self._api, component, series=component == SCHEDULER_COMPONENT)
        self._recorders.append(recorder)
        return recorder


def _report_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("control-plane loop %s stopped", task.get_name(), exc_info=task.exception())
