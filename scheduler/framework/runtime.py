"""Runs the plugins of each extension point in order, as upstream's ``frameworkImpl``.

Plugins are sorted into extension points by the Protocols they implement
(:mod:`scheduler.framework.interface`).  Permit may answer Wait: the pod then becomes a
:class:`WaitingPod` that the binding task awaits until every waiting plugin allowed it, one
rejected it, or the timeout expired.  (Upstream keeps this extension point in 1.37; its gang
plugin no longer uses it, as the pod-group cycle decides a gang before anything is reserved.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from fakeapi.scheduler.framework.cycle_state import CycleState
from fakeapi.scheduler.framework.interface import (
    SUCCESS,
    BindPlugin,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
    ScorePlugin,
    SignPlugin,
    Status,
    unschedulable,
)
from fakeapi.scheduler.snapshot import NodeInfo

MAX_NODE_SCORE = 100

# (plugin class, Protocol) -> whether the class implements it; see _implements.
_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def _implements(plugin: Plugin, protocol: type) -> bool:
    """``isinstance(plugin, protocol)``, decided once per plugin class: a runtime-checkable
    Protocol check costs ~30 µs in Python 3.11, and every scheduler start sorts its plugins."""
    key = (type(plugin), protocol)
    found = _IMPLEMENTS.get(key)
    if found is None:
        found = _IMPLEMENTS[key] = isinstance(plugin, protocol)
    return found


class WaitingPod:
    """A pod held at Permit; resolved by allow/reject from plugins or by its timeout."""

    def __init__(self, pod: dict[str, Any], timeouts: dict[str, float]) -> None:
        self.pod = pod
        self.pending = dict(timeouts)   # plugin -> seconds
        self._result: asyncio.Future[Status] = asyncio.get_running_loop().create_future()

    def allow(self, plugin: str) -> None:
        self.pending.pop(plugin, None)
        if not self.pending and not self._result.done():
            self._result.set_result(SUCCESS)

    def reject(self, plugin: str, message: str) -> None:
        if not self._result.done():
            self._result.set_result(unschedulable(plugin, message))

    async def wait(self) -> Status:
        timeout = min(self.pending.values(), default=0.0)
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._result)
        except TimeoutError:
            plugin = min(self.pending, key=self.pending.__getitem__)
            return unschedulable(plugin, f"rejected due to timeout after waiting {timeout}s at plugin {plugin}")


class Framework:
    """The configured plugin chain of one scheduler profile."""

    def __init__(self, plugins: Sequence[Plugin]) -> None:
        self.plugins = list(plugins)
        self.pre_enqueue_plugins = [p for p in plugins if _implements(p, PreEnqueuePlugin)]
        self.pre_filter_plugins = [p for p in plugins if _implements(p, PreFilterPlugin)]
        self.filter_plugins = [p for p in plugins if _implements(p, FilterPlugin)]
        self.deferred_filter_plugins = [p for p in self.filter_plugins if getattr(p, "deferred", False)]
        self.eager_filter_plugins = [p for p in self.filter_plugins if not getattr(p, "deferred", False)]
        self.post_filter_plugins = [p for p in plugins if _implements(p, PostFilterPlugin)]
        self.score_plugins = [p for p in plugins if _implements(p, ScorePlugin)]
        self.reserve_plugins = [p for p in plugins if _implements(p, ReservePlugin)]
        self.permit_plugins = [p for p in plugins if _implements(p, PermitPlugin)]
        self.pre_bind_plugins = [p for p in plugins if _implements(p, PreBindPlugin)]
        self.bind_plugins = [p for p in plugins if _implements(p, BindPlugin)]
        self.waiting_pods: dict[str, WaitingPod] = {}
        # Who answers for the memoized part of a cycle (eager Filter, Score); None when one cannot sign.
        signers = list(dict.fromkeys([*self.eager_filter_plugins, *self.score_plugins]))
        self._signers = signers if all(_implements(p, SignPlugin) for p in signers) else None

    def events_to_register(self) -> Iterator[tuple[str, ClusterEventWithHint]]:
        """(plugin name, event with hint) for every plugin that can be woken up by events."""
        for plugin in self.plugins:
            if _implements(plugin, EnqueueExtensions):
                for event in plugin.events_to_register():
                    yield plugin.name, event

    # -- scheduling cycle (synchronous) --
    def run_pre_enqueue(self, pod: dict[str, Any]) -> Status:
        for plugin in self.pre_enqueue_plugins:
            status = plugin.pre_enqueue(pod)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_pre_filter(self, state: CycleState, pod: dict[str, Any], nodes: Sequence[NodeInfo]) -> Status:
        for plugin in self.pre_filter_plugins:
            status = plugin.pre_filter(state, pod, nodes)
            if status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)
            elif not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        """Every Filter plugin, in order; the first non-success answer wins."""
        return self._filter(self.filter_plugins, state, pod, node_info)

    def run_eager_filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        """The cheap Filter plugins only (see :meth:`deferred_active`)."""
        return self._filter(self.eager_filter_plugins, state, pod, node_info)

    def run_deferred_filter(self, state: CycleState, pod: dict[str, Any], node_info: NodeInfo) -> Status:
        return self._filter(self.deferred_filter_plugins, state, pod, node_info)

    def deferred_active(self, state: CycleState) -> bool:
        """Whether a costly, score-less Filter plugin (``deferred = True``) runs for this pod.

        Such plugins (DynamicResources: one allocator search per node) cannot change the
        ranking of the nodes they accept, so the scheduler may run them on candidates in score
        order and stop at the first that passes instead of on every candidate.
        """
        return any(p.name not in state.skip_filter for p in self.deferred_filter_plugins)

    @staticmethod
    def _filter(plugins: Sequence[FilterPlugin], state: CycleState, pod: dict[str, Any],
                node_info: NodeInfo) -> Status:
        skip = state.skip_filter
        for plugin in plugins:
            if skip and plugin.name in skip:
                continue
            status = plugin.filter(state, pod, node_info)
            if status.code != Code.SUCCESS:
                return status if status.plugin else status.with_plugin(plugin.name)
        return SUCCESS

    def run_post_filter(self, state: CycleState, pod: dict[str, Any], statuses: dict[str, Status]) -> Status:
        """Upstream joins the reasons of every PostFilter plugin that could not help."""
        reasons: list[str] = []
        for plugin in self.post_filter_plugins:
            status = plugin.post_filter(state, pod, statuses)
            if status.is_success:
                return status
            reasons.extend(status.reasons)
        return Status(Code.UNSCHEDULABLE, tuple(reasons))

    def sign_pod(self, state: CycleState, pod: dict[str, Any]) -> Hashable | None:
        """After PreFilter: a value equal for pods that get the same eager-Filter statuses and
        scores on a node in the same state, or None.  As upstream signs a pod only when every
        filter and score plugin can, one plugin without a fragment for the pod leaves it unsigned."""
        if self._signers is None:
            return None
        fragments = []
        for plugin in self._signers:
            fragment = plugin.sign(pod)
            if fragment is None:
                return None
            fragments.append(fragment)
        return (*fragments, frozenset(state.skip_filter), frozenset(state.skip_score))

    def run_score(self, state: CycleState, pod: dict[str, Any], nodes: Sequence[NodeInfo]) -> list[int]:
        """Weighted sum of every score plugin, per node (same order as ``nodes``)."""
        totals = [0] * len(nodes)
        for plugin in self.score_plugins:
            if plugin.name in state.skip_score:
                continue
            for i, info in enumerate(nodes):
                totals[i] += plugin.weight * plugin.score(state, pod, info)
        return totals

    def run_reserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        for plugin in self.reserve_plugins:
            status = plugin.reserve(state, pod, node_name)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: dict[str, Any], node_name: str) -> None:
        for plugin in reversed(self.reserve_plugins):
            plugin.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        """Success, a rejection, or Wait after registering the pod as waiting."""
        timeouts: dict[str, float] = {}
        for plugin in self.permit_plugins:
            status, timeout = plugin.permit(state, pod, node_name)
            if status.code == Code.WAIT:
                timeouts[plugin.name] = timeout
            elif not status.is_success:
                return status.with_plugin(plugin.name)
        if timeouts:
            self.waiting_pods[pod["metadata"]["uid"]] = WaitingPod(pod, timeouts)
            return Status(Code.WAIT)
        return SUCCESS

    # -- binding cycle (asynchronous) --
    async def wait_on_permit(self, pod: dict[str, Any]) -> Status:
        waiting = self.waiting_pods.get(pod["metadata"]["uid"])
        if waiting is None:
            return SUCCESS
        try:
            return await waiting.wait()
        finally:
            self.waiting_pods.pop(pod["metadata"]["uid"], None)

    async def run_pre_bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        for plugin in self.pre_bind_plugins:
            status = await plugin.pre_bind(state, pod, node_name)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: dict[str, Any], node_name: str) -> Status:
        for plugin in self.bind_plugins:
            status = await plugin.bind(state, pod, node_name)
            if status.code != Code.SKIP:
                return status if status.is_success else status.with_plugin(plugin.name)
        return Status(Code.ERROR, ("no bind plugin bound the pod",))
