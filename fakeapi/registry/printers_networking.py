"""Table columns of the ``networking.k8s.io/v1`` kinds (Ingress, IngressClass, NetworkPolicy), after
upstream's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.printers import label_selector
from fakeapi.registry.resource import AGE, Column

NONE = "<none>"
# Hosts beyond this many print as "+ N more..."; addresses are clipped to this width (not in -o wide).
MAX_HOSTS = 3
LOAD_BALANCER_WIDTH = 16


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _hosts(ingress: dict[str, Any]) -> str:
    """``formatHosts``: the rules' hosts, ``*`` when none names one."""
    rules = _spec(ingress).get("rules") or []
    hosts = [r["host"] for r in rules if r.get("host")][:MAX_HOSTS]
    if not hosts:
        return "*"
    # Upstream counts every rule past the third, hosted or not.
    more = len(rules) - MAX_HOSTS
    return ",".join(hosts) + (f" + {more} more..." if more > 0 else "")


def _address(ingress: dict[str, Any]) -> str:
    """``ingressLoadBalancerStatusStringer``: sorted unique IPs (else hostnames), clipped."""
    points = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    text = ",".join(sorted({p.get("ip") or p.get("hostname") for p in points if p.get("ip") or p.get("hostname")}))
    return text[:LOAD_BALANCER_WIDTH - 3] + "..." if len(text) > LOAD_BALANCER_WIDTH else text


def _parameters(ingress_class: dict[str, Any]) -> str:
    params = _spec(ingress_class).get("parameters")
    if not params:
        return NONE
    group = f".{params['apiGroup']}" if params.get("apiGroup") is not None else ""
    return f"{params.get('kind', '')}{group}/{params.get('name', '')}"


INGRESS_COLUMNS = (
    Column("Class", lambda i: _spec(i).get("ingressClassName") or NONE), Column("Hosts", _hosts),
    Column("Address", _address), Column("Ports", lambda i: "80, 443" if _spec(i).get("tls") else "80"), AGE,
)
INGRESS_CLASS_COLUMNS = (Column("Controller", lambda c: _spec(c).get("controller", "")),
                         Column("Parameters", _parameters), AGE)
NETWORK_POLICY_COLUMNS = (Column("Pod-Selector", label_selector("spec", "podSelector")), AGE)
