"""ClusterRole aggregation (kube-controller-manager's ``clusterrole-aggregation`` loop).

A ClusterRole with an ``aggregationRule`` gets, as its rules, the rules of every ClusterRole its
selectors select (:func:`fakeapi.machinery.aggregation.aggregated_rules`): ``admin``, ``edit``
and ``view`` grow when a CRD's installer labels a role ``aggregate-to-view``.  Any ClusterRole
change re-checks every aggregated role; the rules are written by server-side apply with
upstream's field manager.
"""

from __future__ import annotations

import logging

from fakeapi.scheduler.client import GVR, ApiClient
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import NotFound
from fakeapi.machinery.aggregation import aggregated_rules
from fakeapi.machinery.selectors import SelectorError

log = logging.getLogger(__name__)

CLUSTER_ROLES = GVR("rbac.authorization.k8s.io", "v1", "clusterroles", False)
FIELD_MANAGER = "clusterrole-aggregation-controller"


class ClusterRoleAggregationController:
    """Keeps the rules of aggregated ClusterRoles equal to what their selectors select."""

    def __init__(self, api: ApiClient, factory: InformerFactory) -> None:
        self._api = api
        self._queue: WorkQueue[str] = WorkQueue()
        self._roles = factory.informer(CLUSTER_ROLES)
        self._roles.add_event_handler(self._enqueue_aggregated, lambda old, new: self._enqueue_aggregated(new),
                                      self._enqueue_aggregated)

    async def run(self) -> None:
        """Aggregate until cancelled."""
        await process(self._queue, self._sync, name="clusterrole-aggregation")

    def _enqueue_aggregated(self, changed: dict) -> None:
        # Any role may be selected by any aggregated role: re-check them all (as upstream does).
        for role in self._roles.lister.list():
            if role.get("aggregationRule") is not None:
                self._queue.add(role["metadata"]["name"])

    async def _sync(self, name: str) -> None:
        role = self._roles.lister.get(None, name)
        if role is None:
            return
        try:
            rules = aggregated_rules(role, self._roles.lister.list())
        except SelectorError as exc:
            log.warning("clusterrole %s: invalid aggregation selector: %s", name, exc)
            return
        if rules is None or rules == (role.get("rules") or []):
            return
        body = {"apiVersion": f"{CLUSTER_ROLES.group}/v1", "kind": "ClusterRole", "metadata": {"name": name},
                "rules": rules}
        try:
            await self._api.patch(CLUSTER_ROLES, None, name, body, patch_type="apply", field_manager=FIELD_MANAGER,
                                  force=True)
        except NotFound:
            pass
