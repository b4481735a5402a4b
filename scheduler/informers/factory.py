"""One shared informer per resource, started and synced together.

Every loop of the control plane (scheduler, claim controller, kubelet) asks the factory for the
informers it needs *before* ``start()``; they then share one watch and one cache per resource.

With a :class:`~fakeapi.scheduler.informers.presence.Presence` (the API server shares the
process), an informer whose resource has no object is synced at once with its cache empty, which
is the truth, and opens its watch when the server commits the resource's first object: a test
pays the watches of the resources it uses, not of every resource a loop may read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fakeapi.scheduler.client import GVR, ApiClient
from fakeapi.scheduler.informers.informer import Informer
from fakeapi.scheduler.informers.presence import Presence

from fakeapi.machinery.tasks import cancel_and_wait


class InformerFactory:
    """Creates, starts and stops the shared informers of one :class:`ApiClient`."""

    def __init__(self, api: ApiClient, presence: Presence | None = None) -> None:
        self._api = api
        self._presence = presence
        self._informers: dict[GVR, Informer] = {}
        self._tasks: dict[GVR, asyncio.Task[None]] = {}
        self._deferred: dict[GVR, Callable[[], None]] = {}  # waiting for a first object: cancel
        self._started = False

    def informer(self, gvr: GVR) -> Informer:
        """The shared informer for ``gvr``; created on first use, started if the factory runs."""
        informer = self._informers.get(gvr)
        if informer is None:
            informer = self._informers[gvr] = Informer(self._api, gvr)
            if self._started:
                self._start_one(gvr, informer)
        return informer

    def start(self) -> None:
        """Run every informer not yet running as a task of the running loop."""
        self._started = True
        for gvr, informer in self._informers.items():
            if gvr not in self._tasks and gvr not in self._deferred:
                self._start_one(gvr, informer)

    async def wait_for_cache_sync(self, timeout: float = 10.0) -> None:
        """Return once every informer has delivered its first list; TimeoutError otherwise."""
        try:
            async with asyncio.timeout(timeout):
                # In turn rather than gathered: the informers sync concurrently anyway, and an
                # awaited event that is already set costs no task.
                for informer in list(self._informers.values()):
                    await informer.wait_synced()
        except TimeoutError:
            still = [i.gvr.plural for i in self._informers.values() if not i.has_synced]
            raise TimeoutError(f"informers not synced after {timeout}s: {still}") from None

    async def stop(self) -> None:
        """Cancel every informer task and wait for it to finish."""
        deferred, self._deferred = self._deferred, {}
        for cancel in deferred.values():
            cancel()
        tasks = list(self._tasks.values())
        self._tasks.clear()
        self._started = False
        await cancel_and_wait(tasks)

    def _start_one(self, gvr: GVR, informer: Informer) -> None:
        resource = (gvr.group, gvr.version, gvr.plural)
        if self._presence is not None and not self._presence.exists(resource):
            informer.assume_empty()
            self._deferred[gvr] = self._presence.when_present([resource], lambda: self._start_deferred(gvr))
            return
        self._run(gvr, informer)

    def _start_deferred(self, gvr: GVR) -> None:
        """The resource's first object was committed (called from the server's commit)."""
        if self._deferred.pop(gvr, None) is None or not self._started:
            return
        informer = self._informers[gvr]
        informer.expect_list()
        self._run(gvr, informer)

    def _run(self, gvr: GVR, informer: Informer) -> None:
        name = f"informer-{gvr.plural}.{gvr.group or 'core'}/{gvr.version}"
        self._tasks[gvr] = asyncio.create_task(informer.run(), name=name)
