"""PodGroup protection (kube-controller-manager's ``podgroupprotection`` loop).

The API server's admission adds the ``scheduling.k8s.io/podgroup-protection`` finalizer to new
PodGroups.  Once a PodGroup is being deleted, this loop removes the finalizer — letting the
deletion finish — only when no non-terminal pod of the namespace still names the group in
``spec.schedulingGroup.podGroupName``.  Pod deletions, pods turning terminal and the group's own
updates re-check it.
"""

from __future__ import annotations

import logging

from fakeapi.scheduler.client import PODGROUPS, PODS, ApiClient
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules.podgroups import PodGroupInstance, pod_group_instance
from fakeapi.scheduler.rules.pods import is_pod_terminal
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import NotFound
from fakeapi.machinery.finalizers import PODGROUP_PROTECTION_FINALIZER

log = logging.getLogger(__name__)

_GROUP_INDEX = "podgroup-protection/podgroup"


def _pod_group_keys(pod: dict) -> list[str]:
    instance = pod_group_instance(pod)
    return [instance.key] if instance is not None and not instance.is_workload_shape else []


class PodGroupProtectionController:
    """Releases the protection finalizer of deleted PodGroups whose pods are all gone or done."""

    def __init__(self, api: ApiClient, factory: InformerFactory) -> None:
        self._api = api
        self._queue: WorkQueue[tuple[str, str]] = WorkQueue()
        self._groups = factory.informer(PODGROUPS)
        self._pods = factory.informer(PODS)
        self._pods.add_index(_GROUP_INDEX, _pod_group_keys)
        self._groups.add_event_handler(self._on_group, lambda old, new: self._on_group(new))
        self._pods.add_event_handler(on_update=self._on_pod_update, on_delete=self._on_pod)

    async def run(self) -> None:
        """Process PodGroups until cancelled."""
        await process(self._queue, lambda key: self._sync(*key), name="podgroup-protection")

    def _on_group(self, group: dict) -> None:
        meta = group["metadata"]
        if meta.get("deletionTimestamp") and PODGROUP_PROTECTION_FINALIZER in (meta.get("finalizers") or []):
            self._queue.add((meta["namespace"], meta["name"]))

    def _on_pod_update(self, old: dict, pod: dict) -> None:
        if is_pod_terminal(pod):   # a terminal pod no longer keeps its group alive
            self._on_pod(pod)

    def _on_pod(self, pod: dict) -> None:
        instance = pod_group_instance(pod)
        if instance is not None and not instance.is_workload_shape:
            self._queue.add((instance.namespace, instance.pod_group))

    async def _sync(self, namespace: str, name: str) -> None:
        group = self._groups.lister.get(namespace, name)
        if group is None:
            return
        meta = group["metadata"]
        finalizers = meta.get("finalizers") or []
        if not meta.get("deletionTimestamp") or PODGROUP_PROTECTION_FINALIZER not in finalizers:
            return
        pods = self._pods.lister.by_index(_GROUP_INDEX, PodGroupInstance(namespace, name).key)
        if not all(is_pod_terminal(p) for p in pods):
            return
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"],
                              "finalizers": [f for f in finalizers if f != PODGROUP_PROTECTION_FINALIZER]}}
        try:
            await self._api.patch(PODGROUPS, namespace, name, patch)
        except NotFound:
            pass
