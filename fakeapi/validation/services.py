"""Core ``v1`` Service and Endpoints: ``SetDefaults_Service``, the service REST storage's
allocation of cluster IPs and node ports (``pkg/registry/core/service/storage/alloc.go``), and
``ValidateService``/``ValidateEndpoints`` for what clients rely on.

Allocation scans the stored Services for addresses and ports in use (the write pipeline is
synchronous, so the scan and the commit cannot interleave with another write): a deleted
Service frees its IP and ports at once.
"""

from __future__ import annotations

import re
from typing import Any

from fakeapi.errors import (
    FieldError,
    duplicate,
    forbidden,
    internal_error,
    invalid,
    invalid_object,
    not_supported,
    required,
)
from fakeapi.machinery.servicenet import RangeFull, ServiceNetwork, is_ip
from fakeapi.validation import names
from fakeapi.validation.common import get, validate_labels, validate_list
from fakeapi.validation.strategy import AdmissionContext, Strategy

SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
AFFINITIES = ["ClientIP", "None"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
HEADLESS = "None"
DEFAULT_CLIENT_IP_TIMEOUT = 10800
_PORT_NAME = re.compile(r"^[-a-z0-9]+\Z")


def port_number_problems(port: int) -> list[str]:
    """``IsValidPortNum``: 1 to 65535."""
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name_problems(name: str) -> list[str]:
    """``IsValidPortName`` (an IANA service name, as a container port name or a targetPort)."""
    errs = ["must be no more than 15 characters"] if len(name) > 15 else []
    if not _PORT_NAME.match(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    elif not re.search("[a-z]", name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _needs_node_ports(spec: dict[str, Any]) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True))


def _externally_accessible(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("LoadBalancer", "NodePort") or (
        spec.get("type") == "ClusterIP" and bool(spec.get("externalIPs")))


def default_service(svc: dict[str, Any]) -> None:
    """``SetDefaults_Service``: type, session affinity, port protocols and target ports, policies."""
    spec = svc.setdefault("spec", {})
    spec.setdefault("sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP" and get(spec, "sessionAffinityConfig", "clientIP",
                                                        "timeoutSeconds") is None:
        spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}
    spec.setdefault("type", "ClusterIP")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if _externally_accessible(spec):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


def keep_allocations(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """An update that leaves out what the server allocated keeps it (``patchAllocatedValues``):
    the cluster IPs, and node ports of ports with the same name."""
    keeps_ip = spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName"
    if keeps_ip and not spec.get("clusterIP") and not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIP"], spec["clusterIPs"] = old_spec.get("clusterIP"), list(old_spec["clusterIPs"])
        for key in ("ipFamilies", "ipFamilyPolicy"):
            if key in old_spec:
                spec.setdefault(key, old_spec[key])
    if _needs_node_ports(spec) and _needs_node_ports(old_spec):
        old_ports = {p.get("name", ""): p.get("nodePort") for p in old_spec.get("ports") or []}
        in_use = {p.get("nodePort") for p in spec.get("ports") or []}
        for port in spec.get("ports") or []:
            kept = old_ports.get(port.get("name", ""))
            if not port.get("nodePort") and kept and kept not in in_use:
                port["nodePort"] = kept
    elif not _needs_node_ports(spec):
        # Node ports the client did not change go with a type that no longer has them.
        old_ports = {p.get("nodePort") for p in old_spec.get("ports") or []}
        for port in spec.get("ports") or []:
            if port.get("nodePort") in old_ports:
                port.pop("nodePort", None)
    if spec.get("type") == "ExternalName" and spec.get("clusterIPs") == old_spec.get("clusterIPs"):
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            spec.pop(key, None)


def _in_use(services: list[dict[str, Any]], skip_uid: str) -> tuple[set[str], set[int]]:
    ips: set[str] = set()
    ports: set[int] = set()
    for svc in services:
        if (svc.get("metadata") or {}).get("uid") == skip_uid:
            continue
        spec = svc.get("spec") or {}
        ips.update(ip for ip in spec.get("clusterIPs") or [] if ip != HEADLESS)
        ports.update(p["nodePort"] for p in spec.get("ports") or [] if p.get("nodePort"))
        if spec.get("healthCheckNodePort"):
            ports.add(spec["healthCheckNodePort"])
    return ips, ports


def allocate(spec: dict[str, Any], network: ServiceNetwork, services: list[dict[str, Any]],
             uid: str = "") -> list[FieldError]:
    """Give ``spec`` its cluster IP, IP family fields and node ports, or say why not (a requested
    address or port outside the range or taken).  Raises :class:`RangeFull` when nothing is left.

    ``services`` are the stored Services (the one being updated, ``uid``, does not count as
    holding its own allocations)."""
    if spec.get("type") == "ExternalName":
        return []
    used_ips, used_ports = _in_use(services, uid)
    errs: list[FieldError] = []
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    if not ips:
        ips = [network.free_ip(used_ips)]
    elif ips[0] != HEADLESS and (problem := network.ip_problem(ips[0], used_ips)) is not None:
        errs.append(invalid("spec.clusterIPs[0]", ips[0], problem))
    spec["clusterIP"], spec["clusterIPs"] = ips[0], ips
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("ipFamilies", [network.family])
    if _needs_node_ports(spec):
        mine = {p.get("nodePort") for p in spec.get("ports") or []}
        for i, port in enumerate(spec.get("ports") or []):
            wanted = port.get("nodePort")
            if not wanted:
                port["nodePort"] = network.free_port(used_ports | mine)
                mine.add(port["nodePort"])
                continue
            taken = used_ports | {p.get("nodePort") for p in spec["ports"][:i]}
            if (problem := network.port_problem(wanted, taken)) is not None:
                errs.append(invalid(f"spec.ports[{i}].nodePort", wanted, problem))
    return errs


def _service_port(port: dict[str, Any], path: str, *, named: bool, service_type: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = port.get("name")
    if named and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs += names.check(f"{path}.name", name, names.dns1123_label)
    errs += [invalid(f"{path}.port", port.get("port", 0), m) for m in port_number_problems(port.get("port") or 0)]
    if port.get("protocol") not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", port.get("protocol", ""), PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, int):
        errs += [invalid(f"{path}.targetPort", target, m) for m in port_number_problems(target)]
    elif isinstance(target, str):
        errs += [invalid(f"{path}.targetPort", target, m) for m in port_name_problems(target)]
    node_port = port.get("nodePort")
    if node_port and service_type == "ClusterIP":
        errs.append(forbidden(f"{path}.nodePort", "may not be used when `type` is 'ClusterIP'"))
    elif node_port is not None:
        errs += [invalid(f"{path}.nodePort", node_port, m) for m in port_number_problems(node_port)]
    return errs


def validate_ip(ip: str, path: str) -> list[FieldError]:
    """``IsValidIPForLegacyField`` (StrictIPCIDRValidation off, as in 1.37): an IPv4 or IPv6 address."""
    return [] if is_ip(ip) else [invalid(path, ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]


def _cluster_ip(ip: str | None, path: str) -> list[FieldError]:
    return [] if not ip or ip == HEADLESS else validate_ip(ip, path)


def validate_service(svc: dict[str, Any]) -> list[FieldError]:
    """``ValidateService`` for the fields clients set."""
    spec = svc.get("spec") or {}
    kind = spec.get("type", "")
    errs: list[FieldError] = []
    if kind not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, SERVICE_TYPES))
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == HEADLESS
    if not ports and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    errs += validate_list(ports, "spec.ports", -1,
                          lambda p, path: _service_port(p, path, named=len(ports) > 1, service_type=kind))
    seen: set[str] = set()
    for i, port in enumerate(ports):
        if port.get("name") and port["name"] in seen:
            errs.append(duplicate(f"spec.ports[{i}].name", port["name"]))
        seen.add(port.get("name") or "")
    errs += validate_labels(spec.get("selector"), "spec.selector")
    if kind == "ExternalName":
        errs += names.check_required("spec.externalName", spec.get("externalName"), names.dns1123_subdomain)
        if spec.get("clusterIP") or spec.get("clusterIPs"):
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    else:
        ips = spec.get("clusterIPs") or []
        if spec.get("clusterIP") and ips and ips[0] != spec["clusterIP"]:
            errs.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
        errs += _cluster_ip(spec.get("clusterIP"), "spec.clusterIP")
    if spec.get("sessionAffinity") not in AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", spec.get("sessionAffinity", ""), AFFINITIES))
    timeout = get(spec, "sessionAffinityConfig", "clientIP", "timeoutSeconds")
    if timeout is not None and not 0 < timeout <= 86400:
        errs.append(invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout,
                            "must be greater than 0 and less than 86400"))
    for key in ("externalTrafficPolicy", "internalTrafficPolicy"):
        if spec.get(key) is not None and spec[key] not in TRAFFIC_POLICIES:
            errs.append(not_supported(f"spec.{key}", spec[key], TRAFFIC_POLICIES))
    for i, ip in enumerate(spec.get("externalIPs") or []):
        errs += _cluster_ip(ip, f"spec.externalIPs[{i}]")
    return errs


class ServiceStrategy(Strategy):
    """Services: defaults, allocation from the service network, validation; cluster IPs are
    immutable once set (unless the service turns into an ExternalName)."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        default_service(obj)
        obj.setdefault("status", {}).setdefault("loadBalancer", {})

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        if old is not None:
            keep_allocations(spec, old.get("spec") or {})
        if validate_service(obj):
            return  # validation reports the problems; nothing is allocated for an invalid service
        meta = obj.get("metadata") or {}
        try:
            errs = allocate(spec, ctx.service_network, ctx.list_all("", "services"),
                            ((old or {}).get("metadata") or {}).get("uid", ""))
        except RangeFull as exc:
            raise internal_error(str(exc)) from None
        if errs:
            raise invalid_object("Service", "", meta.get("name") or meta.get("generateName", ""), errs)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_service(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = self.validate(new, ctx)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if spec.get("type") != "ExternalName" and old_spec.get("clusterIPs") and \
                (spec.get("clusterIPs") or [None])[0] != old_spec["clusterIPs"][0]:
            errs.append(invalid("spec.clusterIPs[0]", (spec.get("clusterIPs") or [""])[0], "may not change once set"))
        return errs


def _endpoint_address(address: dict[str, Any], path: str) -> list[FieldError]:
    return _cluster_ip(address.get("ip"), f"{path}.ip") if address.get("ip") else [required(f"{path}.ip")]


def _endpoint_port(port: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check(f"{path}.name", port["name"], names.dns1123_label) if port.get("name") else []
    errs += [invalid(f"{path}.port", port.get("port", 0), m) for m in port_number_problems(port.get("port") or 0)]
    if port.get("protocol", "TCP") not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", port.get("protocol"), PROTOCOLS))
    return errs


class EndpointsStrategy(Strategy):
    """Endpoints: valid addresses and ports in every subset."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        for subset in obj.get("subsets") or []:
            for port in subset.get("ports") or []:
                port.setdefault("protocol", "TCP")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, subset in enumerate(obj.get("subsets") or []):
            path = f"subsets[{i}]"
            for key in ("addresses", "notReadyAddresses"):
                errs += validate_list(subset.get(key), f"{path}.{key}", -1, _endpoint_address)
            ports = subset.get("ports") or []
            errs += validate_list(ports, f"{path}.ports", -1, _endpoint_port)
            if len(ports) > 1:
                errs += [required(f"{path}.ports[{j}].name") for j, p in enumerate(ports) if not p.get("name")]
        return errs


STRATEGIES: dict[str, Strategy] = {"Service": ServiceStrategy(), "Endpoints": EndpointsStrategy()}
