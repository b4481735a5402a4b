"""``discovery.k8s.io/v1`` EndpointSlice strategy (``ValidateEndpointSlice``): address type
(immutable), endpoint addresses of that type, port names and protocols, and the size limits."""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, not_supported, too_many
from fakeapi.machinery.servicenet import parse_ip
from fakeapi.validation import names
from fakeapi.validation.common import immutable, validate_list
from fakeapi.validation.services import PROTOCOLS, port_number_problems
from fakeapi.validation.strategy import AdmissionContext, Strategy

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
MAX_ENDPOINTS = 1000
MAX_PORTS = 100
MAX_ADDRESSES = 100


def _address(address: str, address_type: str, path: str) -> list[FieldError]:
    if address_type == "FQDN":
        return names.check(path, address, names.dns1123_subdomain)
    # IsValidIPv4Address / IsValidIPv6Address: Go's To4() counts an IPv4-mapped IPv6 address as IPv4.
    parsed = parse_ip(address)
    ipv4 = parsed is not None and (parsed.version == 4 or getattr(parsed, "ipv4_mapped", None) is not None)
    valid = ipv4 if address_type == "IPv4" else parsed is not None and not ipv4
    return [] if valid else [invalid(path, address, f"must be a valid {address_type} address")]


def _endpoint(endpoint: dict[str, Any], path: str, address_type: str) -> list[FieldError]:
    addresses = endpoint.get("addresses") or []
    if not 1 <= len(addresses) <= MAX_ADDRESSES:
        return [invalid(f"{path}.addresses", len(addresses), f"must have at least 1 and at most {MAX_ADDRESSES} items")]
    errs: list[FieldError] = []
    for i, address in enumerate(addresses):
        errs += _address(address, address_type, f"{path}.addresses[{i}]")
    if endpoint.get("hostname"):
        errs += names.check(f"{path}.hostname", endpoint["hostname"], names.dns1123_label)
    if endpoint.get("nodeName"):
        errs += names.check(f"{path}.nodeName", endpoint["nodeName"], names.dns1123_subdomain)
    return errs


def _port(port: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check(f"{path}.name", port["name"], names.dns1123_label) if port.get("name") else []
    if port.get("protocol") not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", port.get("protocol", ""), PROTOCOLS))
    if port.get("port") is not None:
        errs += [invalid(f"{path}.port", port["port"], m) for m in port_number_problems(port["port"])]
    return errs


def validate_endpoint_slice(obj: dict[str, Any]) -> list[FieldError]:
    """The slice's address type, endpoints and ports."""
    address_type = obj.get("addressType", "")
    if address_type not in ADDRESS_TYPES:
        return [not_supported("addressType", address_type, ADDRESS_TYPES)]
    endpoints, ports = obj.get("endpoints") or [], obj.get("ports") or []
    if len(endpoints) > MAX_ENDPOINTS:
        return [too_many("endpoints", len(endpoints), MAX_ENDPOINTS)]
    errs = validate_list(endpoints, "endpoints", -1, lambda e, p: _endpoint(e, p, address_type))
    return errs + validate_list(ports, "ports", MAX_PORTS, _port, key=lambda p: p.get("name") or "")


class EndpointSliceStrategy(Strategy):
    """EndpointSlices."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        for port in obj.get("ports") or []:
            port.setdefault("protocol", "TCP")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_endpoint_slice(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_endpoint_slice(new) + immutable(new.get("addressType"), old.get("addressType"), "addressType")


STRATEGIES: dict[str, Strategy] = {"EndpointSlice": EndpointSliceStrategy()}
