"""Table columns of the ``networking.k8s.io/v1`` kinds (Ingress, IngressClass, NetworkPolicy), after
upstream's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.printers import label_selector
from fakeapi.registry.resource import AGE, Column

NONE = "<none>"
# Hosts beyond this many print as "+ N more...".
MAX_HOSTS = 3


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _hosts(ingress: dict[str, Any]) -> str:
    """``formatHosts``: the rules' hosts, ``*`` when none names one; once three are listed and
    another rule follows, "+ N more..." with N counted from every rule past the third."""
    rules = _spec(ingress).get("rules") or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == MAX_HOSTS
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - MAX_HOSTS} more..." if more else "")


def _address(ingress: dict[str, Any]) -> str:
    """``ingressLoadBalancerStatusStringer``: sorted unique IPs (else hostnames), whole, as the
    server's Tables are printed wide."""
    points = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return ",".join(sorted({p.get("ip") or p.get("hostname") for p in points if p.get("ip") or p.get("hostname")}))


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
