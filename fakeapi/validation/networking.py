"""``networking.k8s.io/v1`` strategies: Ingress (and its status), IngressClass, NetworkPolicy.

Defaults follow ``pkg/apis/networking/v1/defaults.go``, validation
``pkg/apis/networking/validation/validation.go`` (field paths and messages), and Ingress creation
runs the ``DefaultIngressClass`` admission plugin.  Gates as in a 1.37 apiserver:
RelaxedServiceNameValidation and StrictIPCIDRValidation are alpha (off), so backend Service names
are DNS-1035 labels and CIDRs parse sloppily (host bits may be set).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required, too_long
from fakeapi.machinery.servicenet import is_ip, parse_ip
from fakeapi.validation import names
from fakeapi.validation.common import get, immutable, newest
from fakeapi.validation.services import PROTOCOLS, port_name_problems, port_number_problems, validate_ip
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import validate_label_selector

GROUP = "networking.k8s.io"
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
POLICY_TYPES = ["Ingress", "Egress"]
SCOPES = ["Cluster", "Namespace"]
MAX_CONTROLLER_LEN = 250
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
_NOT_AN_IP = "must be a DNS name, not an IP address"
# RFC 3986 path characters (IsDomainPrefixedPath's part after the domain).
_HTTP_PATH = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_RE = re.compile(f"^{_HTTP_PATH}\\Z")


def _host(host: str, path: str) -> list[FieldError]:
    """A precise or wildcard host (rules' hosts, TLS hosts)."""
    checker = names.wildcard_dns1123_subdomain if "*" in host else names.dns1123_subdomain
    return names.check(path, host, checker)


# --- Ingress -----------------------------------------------------------------------------------


def _typed_reference(ref: dict[str, Any], path: str) -> list[FieldError]:
    """``validateIngressTypedLocalObjectReference`` (and the common part of a class's parameters)."""
    errs: list[FieldError] = []
    if ref.get("apiGroup") is not None:
        errs += names.check(f"{path}.apiGroup", ref["apiGroup"], names.dns1123_subdomain)
    for key in ("kind", "name"):
        errs += names.check_required(f"{path}.{key}", ref.get(key), names.path_segment_name)
    return errs


def _service_backend(service: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check_required(f"{path}.service.name", service.get("name"), names.dns1035_label)
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [invalid(f"{path}.service.port.name", port_name, m) for m in port_name_problems(port_name)]
    elif number:
        errs += [invalid(f"{path}.service.port.number", number, m) for m in port_number_problems(number)]
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _backend(backend: dict[str, Any], path: str) -> list[FieldError]:
    """``validateIngressBackend``: a Service (name, port name XOR number) or a resource, not both."""
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _typed_reference(resource, f"{path}.resource")
    if service is not None:
        return _service_backend(service, path)
    return [invalid(path, "", "resource or service backend is required")]


def _http_path(item: dict[str, Any], path: str) -> list[FieldError]:
    """``validateHTTPIngressPath``: the path type's rules for the path, then the backend."""
    path_type, value = item.get("pathType"), item.get("path") or ""
    if path_type is None:
        return [required(f"{path}.pathType", "pathType must be specified")]
    errs: list[FieldError] = []
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
        errs += [invalid(f"{path}.path", value, f"must not contain '{seq}'")
                 for seq in _INVALID_PATH_SEQUENCES if seq in value]
        errs += [invalid(f"{path}.path", value, f"cannot end with '{suffix}'")
                 for suffix in _INVALID_PATH_SUFFIXES if value.endswith(suffix)]
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        errs.append(not_supported(f"{path}.pathType", path_type, PATH_TYPES))
    return errs + _backend(item.get("backend") or {}, f"{path}.backend")


def _rule(rule: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    host = rule.get("host") or ""
    if host:
        if is_ip(host):
            errs.append(invalid(f"{path}.host", host, _NOT_AN_IP))
        errs += _host(host, f"{path}.host")
    http = rule.get("http")
    if http is not None:
        paths = http.get("paths") or []
        if not paths:
            errs.append(required(f"{path}.http.paths"))
        for i, item in enumerate(paths):
            errs += _http_path(item, f"{path}.http.paths[{i}]")
    return errs


def validate_ingress_spec(spec: dict[str, Any]) -> list[FieldError]:
    """``ValidateIngressSpec``: a default backend or rules, valid backends, hosts, TLS and class."""
    errs: list[FieldError] = []
    rules = spec.get("rules")
    if not rules and spec.get("defaultBackend") is None:
        errs.append(invalid("spec", rules, "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs += _backend(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(rules or []):
        errs += _rule(rule, f"spec.rules[{i}]")
    for i, tls in enumerate(spec.get("tls") or []):
        for j, host in enumerate(tls.get("hosts") or []):
            errs += _host(host, f"spec.tls[{i}].hosts[{j}]")
        if tls.get("secretName"):
            errs += names.check(f"spec.tls[{i}].secretName", tls["secretName"], names.dns1123_subdomain)
    if spec.get("ingressClassName") is not None:
        errs += names.check("spec.ingressClassName", spec["ingressClassName"], names.dns1123_subdomain)
    return errs


def validate_load_balancer_status(status: dict[str, Any]) -> list[FieldError]:
    """``ValidateIngressLoadBalancerStatus``: ingress points' IPs and (DNS, not IP) hostnames."""
    errs: list[FieldError] = []
    for i, point in enumerate(get(status, "loadBalancer", "ingress") or []):
        path = f"status.loadBalancer.ingress[{i}]"
        if point.get("ip"):
            errs += validate_ip(point["ip"], f"{path}.ip")
        hostname = point.get("hostname")
        if hostname:
            errs += names.check(f"{path}.hostname", hostname, names.dns1123_subdomain)
            if is_ip(hostname):
                errs.append(invalid(f"{path}.hostname", hostname, _NOT_AN_IP))
    return errs


def default_class(classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The IngressClass annotated as the default; the newest wins (then the first name), as upstream
    picks when several claim it."""
    return newest([c for c in classes if get(c, "metadata", "annotations", DEFAULT_CLASS_ANNOTATION) == "true"])


class IngressStrategy(Strategy):
    """Ingresses: ``ValidateIngressCreate``/``Update``, status writes, DefaultIngressClass."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        obj.setdefault("status", {}).setdefault("loadBalancer", {})

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        # DefaultIngressClass: creates only; a class set by field or by the legacy annotation stays.
        if old is not None or ctx.subresource:
            return
        spec = obj.setdefault("spec", {})
        if spec.get("ingressClassName") is not None or \
                INGRESS_CLASS_ANNOTATION in (get(obj, "metadata", "annotations") or {}):
            return
        chosen = default_class(ctx.list_all(GROUP, "ingressclasses"))
        if chosen is not None:
            spec["ingressClassName"] = chosen["metadata"]["name"]

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = validate_ingress_spec(obj.get("spec") or {})
        annotation = (get(obj, "metadata", "annotations") or {}).get(INGRESS_CLASS_ANNOTATION)
        class_name = get(obj, "spec", "ingressClassName")
        # Create only, as upstream: the annotation path has no "metadata." prefix there either.
        if annotation is not None and class_name is not None and annotation != class_name:
            errs.append(invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                                "must match `ingressClassName` when both are specified"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_ingress_spec(new.get("spec") or {})

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return validate_load_balancer_status(new.get("status") or {})


# --- IngressClass ------------------------------------------------------------------------------


def _domain_prefixed_path(value: str, path: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``acme.io/foo``, a DNS subdomain then RFC 3986 path characters."""
    domain, sep, rest = value.partition("/")
    if not sep or not domain or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, domain, m) for m in names.dns1123_subdomain(domain)]
    if not _HTTP_PATH_RE.match(rest):
        errs.append(invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH}')"))
    return errs


def _parameters(params: dict[str, Any], path: str) -> list[FieldError]:
    """``validateIngressClassParametersReference``: the reference, then scope and namespace."""
    errs = _typed_reference(params, path)
    scope, namespace = params.get("scope"), params.get("namespace")
    if scope is None:
        return [*errs, required(f"{path}.scope")]
    if scope not in SCOPES:
        return [*errs, not_supported(f"{path}.scope", scope, SCOPES)]
    if scope == "Namespace":
        if namespace is None:
            errs.append(required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += names.check(f"{path}.namespace", namespace, names.dns1123_label)
    elif namespace is not None:
        errs.append(forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class_spec(spec: dict[str, Any]) -> list[FieldError]:
    """``validateIngressClassSpec``: a domain-prefixed controller of at most 250 bytes, parameters."""
    errs: list[FieldError] = []
    controller = spec.get("controller") or ""
    if not controller:
        errs.append(required("spec.controller"))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LEN:
            errs.append(too_long("spec.controller", MAX_CONTROLLER_LEN))
        errs += _domain_prefixed_path(controller, "spec.controller")
    if spec.get("parameters") is not None:
        errs += _parameters(spec["parameters"], "spec.parameters")
    return errs


class IngressClassStrategy(Strategy):
    """IngressClasses: parameters scope defaults to Cluster; the controller is immutable."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        params = get(obj, "spec", "parameters")
        if isinstance(params, dict):
            params.setdefault("scope", "Cluster")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_ingress_class_spec(obj.get("spec") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = immutable(get(new, "spec", "controller") or "", get(old, "spec", "controller") or "",
                         "spec.controller")
        return errs + self.validate(new, ctx)


# --- NetworkPolicy -----------------------------------------------------------------------------


def _policy_port(port: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateNetworkPolicyPort``: protocol, a port number or name, an end port after a number."""
    errs: list[FieldError] = []
    protocol, number, end = port.get("protocol"), port.get("port"), port.get("endPort")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, ["TCP", "UDP", "SCTP"]))
    if isinstance(number, int):
        errs += [invalid(f"{path}.port", number, m) for m in port_number_problems(number)]
        if end is not None:
            if end < number:
                errs.append(invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
            errs += [invalid(f"{path}.endPort", end, m) for m in port_number_problems(end)]
    elif isinstance(number, str):
        if end is not None:
            errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        errs += [invalid(f"{path}.port", number, m) for m in port_name_problems(number)]
    elif end is not None:
        errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    return errs


def _cidr(value: str, path: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network | None, list[FieldError]]:
    """``IsValidCIDRForLegacyField`` without strict validation: ``address/prefix``, host bits allowed."""
    address, sep, prefix = value.partition("/")
    try:
        ip = parse_ip(address)
        if ip is None or not sep or not (prefix.isascii() and prefix.isdigit()):
            raise ValueError(value)
        return ipaddress.ip_network(f"{ip}/{int(prefix)}", strict=False), []
    except ValueError:
        return None, [invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]


def _ip_block(block: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateIPBlock``: a CIDR, and excepts that are strict subsets of it."""
    if not block.get("cidr"):
        return [required(f"{path}.cidr")]
    network, errs = _cidr(block["cidr"], f"{path}.cidr")
    if network is None:
        return errs
    for i, text in enumerate(block.get("except") or []):
        excluded, problems = _cidr(text, f"{path}.except[{i}]")
        errs += problems
        if excluded is not None and (excluded.version != network.version or
                                     excluded.network_address not in network or
                                     network.prefixlen >= excluded.prefixlen):
            errs.append(invalid(f"{path}.except[{i}]", text, "must be a strict subset of `cidr`"))
    return errs


def _peer(peer: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateNetworkPolicyPeer``: at least one of the selectors and ipBlock; ipBlock alone."""
    errs: list[FieldError] = []
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            errs += validate_label_selector(peer[key], f"{path}.{key}")
    if peer.get("ipBlock") is not None:
        errs += _ip_block(peer["ipBlock"], f"{path}.ipBlock")
    count = sum(peer.get(key) is not None for key in ("podSelector", "namespaceSelector", "ipBlock"))
    if count == 0:
        errs.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def validate_network_policy_spec(spec: dict[str, Any]) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``: selectors, every rule's ports and peers, the policy types."""
    errs = validate_label_selector(spec.get("podSelector"), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            path = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or []):
                errs += _policy_port(port, f"{path}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers) or []):
                errs += _peer(peer, f"{path}.{peers}[{j}]")
    types = spec.get("policyTypes") or []
    if len(types) > len(POLICY_TYPES):
        return [*errs, invalid("spec.policyTypes", types, "may not specify more than two policyTypes")]
    errs += [not_supported(f"spec.policyTypes[{i}]", t, POLICY_TYPES)
             for i, t in enumerate(types) if t not in POLICY_TYPES]
    return errs


class NetworkPolicyStrategy(Strategy):
    """NetworkPolicies: ports default to TCP; policyTypes to Ingress, plus Egress with egress rules."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction) or []:
                for port in rule.get("ports") or []:
                    port.setdefault("protocol", "TCP")
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_network_policy_spec(obj.get("spec") or {})


STRATEGIES: dict[str, Strategy] = {"Ingress": IngressStrategy(), "IngressClass": IngressClassStrategy(),
                                   "NetworkPolicy": NetworkPolicyStrategy()}
