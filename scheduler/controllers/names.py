"""Which controller loops run: kube-controller-manager's ``--controllers`` list.

Entries, in order: ``*`` enables every controller that is on by default (all of fakeapi's are),
``name`` enables one, ``-name`` disables one; the first entry naming a controller decides, and
a controller no entry names runs only if ``*`` is there.  Names are upstream's canonical ones
(``cmd/kube-controller-manager/names``), and the short aliases upstream still accepts.

The endpoints and endpointslice controllers are one loop here: it runs while either name is
enabled.  The garbage collector and namespace controllers run inside fakeapi's API server and
cannot be switched off; the scheduler and the kubelet emulation are not controllers (the
kubelet has its own switch).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

RESOURCE_CLAIM = "resourceclaim-controller"
CLUSTER_ROLE_AGGREGATION = "clusterrole-aggregation-controller"
PODGROUP_PROTECTION = "podgroup-protection-controller"
REPLICA_SET = "replicaset-controller"
DEPLOYMENT = "deployment-controller"
JOB = "job-controller"
TTL_AFTER_FINISHED = "ttl-after-finished-controller"
CRON_JOB = "cronjob-controller"
STATEFUL_SET = "statefulset-controller"
DAEMON_SET = "daemonset-controller"
DISRUPTION = "disruption-controller"
ENDPOINTS = "endpoints-controller"
ENDPOINT_SLICE = "endpointslice-controller"
SERVICE_ACCOUNT = "serviceaccount-controller"
POD_GC = "pod-garbage-collector-controller"
DEVICE_TAINT_EVICTION = "device-taint-eviction-controller"
TAINT_EVICTION = "taint-eviction-controller"
NODE_LIFECYCLE = "node-lifecycle-controller"

KNOWN = frozenset({
    RESOURCE_CLAIM, CLUSTER_ROLE_AGGREGATION, PODGROUP_PROTECTION, REPLICA_SET, DEPLOYMENT, JOB,
    TTL_AFTER_FINISHED, CRON_JOB, STATEFUL_SET, DAEMON_SET, DISRUPTION, ENDPOINTS, ENDPOINT_SLICE,
    SERVICE_ACCOUNT, POD_GC, DEVICE_TAINT_EVICTION, TAINT_EVICTION, NODE_LIFECYCLE,
})
# Upstream's names from before the "-controller" suffix (ControllerDescriptor aliases).
_ALIASES = {"endpoint": ENDPOINTS, "endpointslice": ENDPOINT_SLICE, "serviceaccount": SERVICE_ACCOUNT,
            "daemonset": DAEMON_SET, "job": JOB, "deployment": DEPLOYMENT, "replicaset": REPLICA_SET,
            "disruption": DISRUPTION, "statefulset": STATEFUL_SET, "cronjob": CRON_JOB,
            "clusterrole-aggregation": CLUSTER_ROLE_AGGREGATION, "ttl-after-finished": TTL_AFTER_FINISHED,
            "resourceclaim": RESOURCE_CLAIM, "podgc": POD_GC, "nodelifecycle": NODE_LIFECYCLE}
_IN_THE_API_SERVER = frozenset({"garbage-collector-controller", "garbagecollector", "namespace-controller",
                                "namespace"})
ALL = ("*",)
FLAG_HELP = ("kube-controller-manager's list: '*' every controller, 'foo' enables one, '-foo' disables one "
             "(default '*')")


def _canonical(name: str) -> str:
    if name in _IN_THE_API_SERVER:
        raise ValueError(f'"{name}" runs inside fakeapi\'s API server and cannot be selected')
    canonical = _ALIASES.get(name, name)
    if canonical not in KNOWN:
        raise ValueError(f'"{name}" is not in the list of known controllers')
    return canonical


def controller_entries(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """The entries of a ``--controllers`` list, given as one comma-separated string or as names
    (None: the default, ``*``); ValueError names an unknown controller."""
    parts = ALL if value is None else value.split(",") if isinstance(value, str) else value
    entries = tuple(part.strip() for part in parts if part.strip())
    for entry in entries:
        if entry != "*":
            _canonical(entry.removeprefix("-"))
    return entries


def enabled_controllers(value: str | Iterable[str] | None = ALL) -> frozenset[str]:
    """The canonical names of the controllers that ``value`` (a ``--controllers`` list) turns on;
    ValueError names an unknown controller."""
    decided: dict[str, bool] = {}
    star = False
    for entry in controller_entries(value):
        if entry == "*":
            star = True
        else:
            decided.setdefault(_canonical(entry.removeprefix("-")), not entry.startswith("-"))
    return frozenset(name for name in KNOWN if decided.get(name, star))


def controllers_argument(text: str) -> tuple[str, ...]:
    """:func:`controller_entries` as an argparse ``type`` (``--controllers``)."""
    try:
        return controller_entries(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
