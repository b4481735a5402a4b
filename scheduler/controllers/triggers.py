"""Controllers that start with their first object, when the API server shares the process.

A ``FakeCluster`` whose control plane shares its process hands it a :class:`Presence`: the
server's word, without a watch, on whether an object of a resource exists.  The loops below act
only on objects of their ``TRIGGERS`` (a Deployment, a Job, a Service...), so the control plane
builds each, with its informers, once such an object first exists: a test that makes none pays
neither their watches nor their start (a third of an enter + exit with every controller,
BENCHMARKS.md).  What a client sees is the same: controllers act on what they watch once their
first list holds it, as a controller that was running all along would.  A control plane
elsewhere (``fakeapi serve``, a child process) has no Presence and starts every loop at once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol

from fakeapi.scheduler.controllers import names

Resource = tuple[str, str]
"""(API group, plural)."""

# Each loop's work starts with a change to one of these: the deployment controller's with a
# Deployment, the disruption controller's with a PodDisruptionBudget, the endpoints controllers'
# with a Service (the API server's own ``default/kubernetes`` is none of theirs), the
# serviceaccount controller's with a new namespace or a deleted account (the server made the
# bootstrap namespaces' accounts), clusterrole aggregation's with a ClusterRole (the server
# aggregated its bootstrap roles).
TRIGGERS: dict[str, tuple[Resource, ...]] = {
    names.SERVICE_ACCOUNT: (("", "namespaces"), ("", "serviceaccounts")),
    names.CLUSTER_ROLE_AGGREGATION: (("rbac.authorization.k8s.io", "clusterroles"),),
    names.DEPLOYMENT: (("apps", "deployments"),),
    names.REPLICA_SET: (("apps", "replicasets"),),
    names.STATEFUL_SET: (("apps", "statefulsets"),),
    names.DAEMON_SET: (("apps", "daemonsets"),),
    names.JOB: (("batch", "jobs"),),
    names.TTL_AFTER_FINISHED: (("batch", "jobs"),),
    names.CRON_JOB: (("batch", "cronjobs"),),
    names.DISRUPTION: (("policy", "poddisruptionbudgets"),),
    names.ENDPOINTS: (("", "services"),),
}


class Presence(Protocol):
    """Whether objects of some resources changed since the server's bootstrap."""

    def present(self, resources: Collection[Resource]) -> bool:
        """Whether an object of one of ``resources`` was created or changed since the bootstrap."""
        ...

    def when_present(self, resources: Collection[Resource], callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once, synchronously, right after the next commit (a create, update
        or delete) of an object of one of ``resources``; returns a function that cancels the call."""
        ...
