"""Controllers that start with their first object, when the API server shares the process.

With a :class:`~fakeapi.scheduler.informers.presence.Presence`, the control plane builds the
loops below, with their informers, once an object of their ``TRIGGERS`` (a Deployment, a Job, a
Service...) is created, changed or deleted after the server's bootstrap: a test that makes none
pays neither their start nor their handlers (BENCHMARKS.md, Latency).  What a client sees is the
same: controllers act on what they watch once their first list holds it, as a controller that was
running all along would.  A control plane elsewhere (``fakeapi serve``, a child process) has no
Presence and starts every loop at once.
"""

from __future__ import annotations

from fakeapi.scheduler.controllers import names
from fakeapi.scheduler.informers.presence import Resource

# Each loop's work starts with a change to one of these: the deployment controller's with a
# Deployment, the disruption controller's with a PodDisruptionBudget, the endpoints controllers'
# with a Service (the API server's own ``default/kubernetes`` is none of theirs), the
# serviceaccount controller's with a new namespace or a deleted account (the server made the
# bootstrap namespaces' accounts), clusterrole aggregation's with a ClusterRole (the server
# aggregated its bootstrap roles).
TRIGGERS: dict[str, tuple[Resource, ...]] = {
    names.SERVICE_ACCOUNT: (("", "v1", "namespaces"), ("", "v1", "serviceaccounts")),
    names.CLUSTER_ROLE_AGGREGATION: (("rbac.authorization.k8s.io", "v1", "clusterroles"),),
    names.DEPLOYMENT: (("apps", "v1", "deployments"),),
    names.REPLICA_SET: (("apps", "v1", "replicasets"),),
    names.STATEFUL_SET: (("apps", "v1", "statefulsets"),),
    names.DAEMON_SET: (("apps", "v1", "daemonsets"),),
    names.JOB: (("batch", "v1", "jobs"),),
    names.TTL_AFTER_FINISHED: (("batch", "v1", "jobs"),),
    names.CRON_JOB: (("batch", "v1", "cronjobs"),),
    names.DISRUPTION: (("policy", "v1", "poddisruptionbudgets"),),
    names.ENDPOINTS: (("", "v1", "services"),),
}
