"""Taint-based eviction (kube-controller-manager's ``taint-eviction-controller``,
``pkg/controller/tainteviction``): pods on a node with NoExecute taints they do not tolerate go.

- A taint no toleration of the pod matches: the pod is evicted at once.
- All tolerated: it is evicted after the shortest ``tolerationSeconds`` among the tolerations
  that match, counted from the taints' ``timeAdded`` (from when the controller saw them for a
  taint without one); tolerations without ``tolerationSeconds`` tolerate for ever.  An eviction
  already scheduled keeps its time when taints or tolerations change.  Upstream counts from when
  it saw the taints, which in a cluster is ``timeAdded`` give or take milliseconds; counting
  from ``timeAdded`` keeps a ``ManualClock`` test's eviction where the test expects it however
  late the controller sees the taint while the clock jumps.
- The taints removed, or tolerated for ever: a scheduled eviction is cancelled (an Event
  "Cancelling deletion of Pod ...").

Eviction is upstream's: an Event ``TaintManagerEviction`` ("Marking for deletion Pod ..."), a
``DisruptionTarget`` condition (``DeletionByTaintManager``) and a delete with the pod's own grace
period.  Every pod gets the DefaultTolerationSeconds admission's 300 s tolerations of the
``not-ready`` and ``unreachable`` taints, so a node made NotReady (``FakeCluster.node_not_ready``)
loses its pods five minutes of the control plane's clock later.  Pods already being deleted are
left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fakeapi.scheduler.client import NODES, PODS, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.taintdeletion import disruption_condition, mark_and_delete
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.pods import node_name_keys, node_of
from fakeapi.scheduler.rules.workloads import parse_time
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.machinery.nodeselector import toleration_tolerates

NAME = "taint-eviction-controller"
EVENT_REASON = "TaintManagerEviction"
DISRUPTION = disruption_condition("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")

_NODE_INDEX = "taint-eviction/node"

# Work items: ("node", "", name), ("pod", namespace, name), ("evict", namespace, name).
Item = tuple[str, str, str]


def no_execute_taints(node: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], ...]:
    """The node's taints with effect NoExecute."""
    taints = ((node or {}).get("spec") or {}).get("taints") or ()
    return tuple(t for t in taints if t.get("effect") == "NoExecute")


def toleration_delay(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]) -> float | None:
    """Seconds a pod with ``tolerations`` may stay on a node with the NoExecute ``taints``
    (upstream's ``GetMatchingTolerations`` and ``getMinTolerationTime``): 0 when some taint is
    not tolerated, None when the matching tolerations tolerate for ever."""
    limits: list[int] = []
    forever = False
    for taint in taints:
        matching = [t for t in tolerations if toleration_tolerates(t, taint)]
        if not matching:
            return 0.0
        for toleration in matching:
            if toleration.get("tolerationSeconds") is None:
                forever = True
            else:
                limits.append(int(toleration["tolerationSeconds"]))
    if not limits:
        return None if forever else 0.0
    return float(max(min(limits), 0))


def taints_added(taints: Sequence[Mapping[str, Any]], now: float) -> float:
    """When the pod's tolerations start to count: the latest ``timeAdded`` of the taints, or
    ``now`` when one has none (or a time still to come)."""
    added = [parse_time(t.get("timeAdded")) for t in taints]
    known = [t for t in added if t is not None]
    return min(now, max(known)) if known and len(known) == len(added) else now


class TaintEvictionController:
    """Deletes pods from nodes whose NoExecute taints they do not tolerate (see the module)."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._recorder = recorder
        self._clock = clock
        self._queue: WorkQueue[Item] = WorkQueue(clock=clock)
        # NoExecute taints per node that has any.
        self._tainted: dict[str, tuple[Mapping[str, Any], ...]] = {}
        # Scheduled evictions by (namespace, name): the pod's UID and when it is due.
        self._scheduled: dict[tuple[str, str], tuple[str, float]] = {}
        self._pods = factory.informer(PODS)
        self._pods.add_index(_NODE_INDEX, node_name_keys)
        factory.informer(NODES).add_event_handler(lambda n: self._on_node(None, n), self._on_node,
                                                  lambda n: self._on_node(n, None))
        self._pods.add_event_handler(lambda p: self._on_pod(None, p), self._on_pod, lambda p: self._on_pod(p, None))

    async def run(self) -> None:
        """Process nodes and pods until cancelled."""
        await process(self._queue, self._sync, name=NAME, workers=8)

    def _on_node(self, old: dict | None, new: dict | None) -> None:
        taints = no_execute_taints(new)
        if old is not None and new is not None and no_execute_taints(old) == taints:
            return
        name = (new or old or {})["metadata"]["name"]
        if taints:
            self._tainted[name] = taints
        else:
            self._tainted.pop(name, None)
        self._queue.add(("node", "", name))

    def _on_pod(self, old: dict | None, new: dict | None) -> None:
        if old is not None and new is not None and (
                (old.get("spec") or {}).get("tolerations") == (new.get("spec") or {}).get("tolerations")
                and node_of(old) == node_of(new)):
            return
        meta = (new or old or {})["metadata"]
        if new is None:
            self._scheduled.pop((meta["namespace"], meta["name"]), None)
        elif self._tainted or self._scheduled:
            self._queue.add(("pod", meta["namespace"], meta["name"]))

    async def _sync(self, item: Item) -> None:
        kind, namespace, name = item
        now = self._clock.now()
        if kind == "node":
            taints = self._tainted.get(name)
            for pod in self._pods.lister.by_index(_NODE_INDEX, name):
                if taints:
                    self._process(pod, taints, now)
                else:
                    self._cancel(pod)
        elif kind == "pod":
            pod = self._pods.lister.get(namespace, name)
            if pod is None:
                self._scheduled.pop((namespace, name), None)
            elif taints := self._tainted.get(node_of(pod)):
                self._process(pod, taints, now)
        else:
            await self._evict(namespace, name, now)

    def _process(self, pod: dict, taints: Sequence[Mapping[str, Any]], now: float) -> None:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return
        key = (meta["namespace"], meta["name"])
        delay = toleration_delay(taints, (pod.get("spec") or {}).get("tolerations") or ())
        if delay is None:
            self._cancel(pod)
            return
        if delay > 0 and key in self._scheduled:
            return  # upstream keeps the eviction scheduled first
        due = taints_added(taints, now) + delay
        self._scheduled[key] = (meta["uid"], due)
        self._queue.add_after(("evict", *key), due - now)

    def _cancel(self, pod: dict) -> None:
        meta = pod["metadata"]
        if self._scheduled.pop((meta["namespace"], meta["name"]), None) is not None:
            self._recorder.event(pod, "Normal", EVENT_REASON,
                                 f"Cancelling deletion of Pod {meta['namespace']}/{meta['name']}")

    async def _evict(self, namespace: str, name: str, now: float) -> None:
        scheduled = self._scheduled.get((namespace, name))
        if scheduled is None:
            return  # cancelled
        uid, due = scheduled
        if due > now:  # rescheduled later meanwhile
            self._queue.add_after(("evict", namespace, name), due - now)
            return
        await mark_and_delete(self._api, self._recorder, self._clock, namespace, name, uid, DISRUPTION,
                              (EVENT_REASON, f"Marking for deletion Pod {namespace}/{name}"))
        self._scheduled.pop((namespace, name), None)  # kept until done: a failed attempt is retried
