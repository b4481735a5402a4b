"""Wire the control plane together: one client, shared informers, and the loops that use them.

Start-up order matters: every loop registers its informers and handlers in its constructor,
then the factory starts all informers, waits until every cache holds a complete list, and only
then do the loops run — so no loop acts on a half-filled cache.  A loop that waits for its first
object (``controllers.triggers``) keeps that order when it starts later: built, synced, then run.
Stop cancels the loops first, then the informers, then closes the HTTP session.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from fakeapi.scheduler.client import (
    CONTROL_PLANE_AGENT,
    CONTROLLER_MANAGER,
    KUBELET_MANAGER,
    SCHEDULER_MANAGER,
    ApiClient,
)
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
from fakeapi.scheduler.controllers.triggers import TRIGGERS
from fakeapi.scheduler.controllers.workloads import workload_controllers
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.informers.presence import Presence
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
_MANAGERS = (KUBELET_MANAGER, SCHEDULER_MANAGER, CONTROLLER_MANAGER)
_COMPONENT_MANAGERS = {SCHEDULER_COMPONENT: SCHEDULER_MANAGER, KUBELET_COMPONENT: KUBELET_MANAGER}

_DEFAULT_GATES = FeatureGates()
Loop = Coroutine[Any, Any, None]


class ControlPlane:
    """Scheduler, ResourceClaim controller and kubelet emulation against one API server URL."""

    def __init__(self, server: str | Connection, *, gates: FeatureGates = _DEFAULT_GATES, kubelet: bool = True,
                 sync_timeout: float = 10.0, clock: Clock | None = None,
                 controllers: str | Iterable[str] | None = names.ALL, presence: Presence | None = None) -> None:
        """``server``: a URL, or a :class:`Connection` with the CA and token of a secure server.
        ``clock``: the control plane's time (:class:`~fakeapi.scheduler.clock.ManualClock` in tests).
        ``controllers``: kube-controller-manager's ``--controllers`` list (see
        :mod:`~fakeapi.scheduler.controllers.names`), e.g. ``["resourceclaim-controller"]`` for
        the DRA loops alone; fewer controllers watch fewer resources, so start and stop cost less.
        ValueError names an unknown controller.  ``presence``: the API server's, when it shares
        this process (see :mod:`~fakeapi.scheduler.controllers.triggers`)."""
        self.controllers = enabled_controllers(controllers)
        self.clock = clock or Clock()
        self._connection = server if isinstance(server, Connection) else Connection(server)
        self.server_url = self._connection.server
        self.gates = gates
        self._with_kubelet = kubelet
        self._sync_timeout = sync_timeout
        self._api: ApiClient | None = None
        self._as: dict[str, ApiClient] = {}  # the client as each component's field manager
        self._factory: InformerFactory | None = None
        self._recorders: list[EventRecorder] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._presence = presence
        self._waiting: list[Callable[[], None]] = []  # cancel a loop's start on its first object

    async def __aenter__(self) -> ControlPlane:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Build every loop, sync the informers, then run the loops as background tasks (with a
        :class:`~fakeapi.scheduler.informers.presence.Presence`, the loops of ``TRIGGERS``
        whose objects do not exist yet are built, synced and run once one does)."""
        api = self._api = ApiClient(self._connection, user_agent=CONTROL_PLANE_AGENT, omit_managed_fields=True)
        api.open()
        self._as = {manager: api.as_manager(manager) for manager in _MANAGERS}
        factory = self._factory = InformerFactory(api, self._presence)
        loops: dict[str, Loop] = {}
        presence = self._presence
        try:
            for name, build in self._builders(factory).items():
                triggers = TRIGGERS.get(name)
                if presence is not None and triggers is not None and not presence.present(triggers):
                    start = functools.partial(self._start_late, name, build)
                    self._waiting.append(presence.when_present(triggers, start))
                else:
                    loops[name] = build()
            factory.start()
            await factory.wait_for_cache_sync(self._sync_timeout)
        except BaseException:
            for coro in loops.values():
                coro.close()
            await self.stop()
            raise
        for name, coro in loops.items():
            self._run(name, coro)

    def _builders(self, factory: InformerFactory) -> dict[str, Callable[[], Loop]]:
        """name -> a function that builds the loop (registering its informers and handlers) and
        returns its ``run()``, for every loop this control plane runs; each writes as its
        component's field manager."""
        enabled, gates, clock, recorder = self.controllers, self.gates, self.clock, self._recorder
        scheduler_api, kubelet_api = self._as[SCHEDULER_MANAGER], self._as[KUBELET_MANAGER]
        api = self._as[CONTROLLER_MANAGER]  # every controller's
        builders: dict[str, Callable[[], Loop]] = {
            "scheduler": lambda: Scheduler(scheduler_api, factory, gates, recorder(SCHEDULER_COMPONENT),
                                           clock=clock).run()}
        if names.RESOURCE_CLAIM in enabled:
            builders[names.RESOURCE_CLAIM] = lambda: ResourceClaimController(
                api, factory, gates, recorder(CLAIM_CONTROLLER_COMPONENT)).run()
        if gates.DRADeviceTaints and names.DEVICE_TAINT_EVICTION in enabled:
            builders[names.DEVICE_TAINT_EVICTION] = lambda: DeviceTaintEvictionController(
                api, factory, recorder(names.DEVICE_TAINT_EVICTION), clock).run()
        if names.CLUSTER_ROLE_AGGREGATION in enabled:
            builders[names.CLUSTER_ROLE_AGGREGATION] = lambda: ClusterRoleAggregationController(api, factory).run()
        if gates.GenericWorkload and names.PODGROUP_PROTECTION in enabled:
            builders[names.PODGROUP_PROTECTION] = lambda: PodGroupProtectionController(api, factory).run()
        builders.update(workload_controllers(api, factory, gates, clock, recorder, enabled))
        if enabled & {names.ENDPOINTS, names.ENDPOINT_SLICE}:
            builders[names.ENDPOINTS] = lambda: EndpointsController(api, factory).run()
        if names.SERVICE_ACCOUNT in enabled:
            builders[names.SERVICE_ACCOUNT] = lambda: ServiceAccountsController(api, factory).run()
        if names.POD_GC in enabled:
            builders[names.POD_GC] = lambda: PodGCController(api, factory, clock).run()
        if names.TAINT_EVICTION in enabled:
            builders[names.TAINT_EVICTION] = lambda: TaintEvictionController(
                api, factory, recorder(names.TAINT_EVICTION), clock).run()
        if names.NODE_LIFECYCLE in enabled:
            builders[names.NODE_LIFECYCLE] = lambda: NodeLifecycleController(
                api, factory, recorder(NODE_CONTROLLER_COMPONENT), clock).run()
        if self._with_kubelet:
            builders["kubelet"] = lambda: Kubelet(kubelet_api, factory, recorder(KUBELET_COMPONENT), clock=clock).run()
            builders["node-lease"] = lambda: NodeLeases(kubelet_api, factory, clock=clock).run()
        return builders

    def _run(self, name: str, coro: Loop) -> None:
        task = asyncio.create_task(coro, name=name)
        task.add_done_callback(_report_crash)
        self._tasks.append(task)

    def _start_late(self, name: str, build: Callable[[], Loop]) -> None:
        """The first object of ``name``'s triggers exists (called from the server's commit, which
        must not wait for it): build, sync and run the loop in a task of its own."""
        if self._factory is not None:  # not stopped meanwhile
            self._run(name, self._built_then_run(build))

    async def _built_then_run(self, build: Callable[[], Loop]) -> None:
        # Built inside the task: a task cancelled before its first step leaves nothing half-made.
        assert self._factory is not None
        coro = build()  # its informers start now, the others' are running
        try:
            await self._factory.wait_for_cache_sync(self._sync_timeout)
        except BaseException:
            coro.close()
            raise
        await coro

    async def stop(self) -> None:
        """Cancel the loops and informers and close the HTTP session; safe to call twice."""
        waiting, self._waiting = self._waiting, []
        for cancel in waiting:
            cancel()
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        if self._factory is not None:
            await self._factory.stop()
            self._factory = None
        recorders, self._recorders = self._recorders, []
        for recorder in recorders:
            await recorder.close()
        self._as = {}
        if self._api is not None:
            await self._api.close()
            self._api = None

    def _recorder(self, component: str) -> EventRecorder:
        assert self._api is not None
        # kube-scheduler records through events.k8s.io (series); the controllers and the kubelet through core/v1.
        api = self._as[_COMPONENT_MANAGERS.get(component, CONTROLLER_MANAGER)]
        recorder = EventRecorder(api, component, series=component == SCHEDULER_COMPONENT)
        self._recorders.append(recorder)
        return recorder


def _report_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("control-plane loop %s stopped", task.get_name(), exc_info=task.exception())
