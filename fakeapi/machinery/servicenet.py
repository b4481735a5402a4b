"""The service network: cluster IPs and node ports a Service may get, and which are free.

kube-apiserver's ``--service-cluster-ip-range`` and ``--service-node-port-range``.  Allocation is
deterministic (the lowest free address or port) where upstream's is random; the errors for a
requested value outside the range or already taken read as upstream's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_CLUSTER_IP_RANGE = "10.96.0.0/12"
DEFAULT_NODE_PORT_RANGE = "30000-32767"


class RangeFull(Exception):
    """No free address or port is left."""


@dataclass(frozen=True)
class ServiceNetwork:
    """A parsed cluster IP range and node port range."""

    cluster_ips: ipaddress.IPv4Network | ipaddress.IPv6Network
    node_ports: range

    @classmethod
    def parse(cls, cluster_ip_range: str = DEFAULT_CLUSTER_IP_RANGE,
              node_port_range: str = DEFAULT_NODE_PORT_RANGE) -> ServiceNetwork:
        """Parse the two flags' values; ValueError names the bad one."""
        try:
            network = ipaddress.ip_network(cluster_ip_range, strict=True)
        except ValueError as exc:
            raise ValueError(f"invalid service cluster IP range {cluster_ip_range!r}: {exc}") from None
        if network.num_addresses < 4:
            raise ValueError(f"service cluster IP range {cluster_ip_range!r} is too small")
        low, sep, high = node_port_range.partition("-")
        try:
            first, last = int(low), int(high if sep else low)
        except ValueError:
            raise ValueError(f"invalid service node port range {node_port_range!r}: want FROM-TO") from None
        if not 0 < first <= last <= 65535:
            raise ValueError(f"invalid service node port range {node_port_range!r}")
        return cls(network, range(first, last + 1))

    @property
    def family(self) -> str:
        """IPv4 or IPv6 (``spec.ipFamilies``)."""
        return "IPv4" if self.cluster_ips.version == 4 else "IPv6"

    @property
    def first_ip(self) -> str:
        """The first usable address: the ``kubernetes`` service's."""
        return str(self.cluster_ips.network_address + 1)

    def ip_problem(self, ip: str, used: Iterable[str]) -> str | None:
        """Why ``ip`` cannot be given to a service (upstream's allocator error), or None."""
        address = parse_ip(ip)
        if address is None:
            return f"failed to allocate IP {ip}: not a valid IP"
        if address not in self.cluster_ips or address in (self.cluster_ips.network_address,
                                                           self.cluster_ips.broadcast_address):
            return (f"failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. "
                    f"The range of valid IPs is {self.cluster_ips}")
        if ip in set(used):
            return f"failed to allocate IP {ip}: provided IP is already allocated"
        return None

    def free_ip(self, used: Iterable[str]) -> str:
        """The lowest unallocated address; RangeFull when none is left."""
        taken = {address for ip in used if (address := parse_ip(ip)) is not None}
        for address in self.cluster_ips.hosts():
            if address not in taken:
                return str(address)
        raise RangeFull("failed to allocate a serviceIP: range is full")

    def port_problem(self, port: int, used: Iterable[int]) -> str | None:
        """Why ``port`` cannot be a node port, or None."""
        if port not in self.node_ports:
            return (f"provided port is not in the valid range. The range of valid ports is "
                    f"{self.node_ports.start}-{self.node_ports.stop - 1}")
        if port in set(used):
            return "provided port is already allocated"
        return None

    def free_port(self, used: Iterable[int]) -> int:
        """The lowest unallocated node port; RangeFull when none is left."""
        taken = set(used)
        for port in self.node_ports:
            if port not in taken:
                return port
        raise RangeFull("failed to allocate a nodePort: range is full")


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(text: str) -> IPAddress | None:
    """``text`` as k8s.io/utils' ``ParseIPSloppy`` reads it, as legacy IP fields are validated
    while StrictIPCIDRValidation is off: Go's parser, whose IPv4 octets may have leading zeros
    (decimal, not octal), and no IPv6 zone; None when it is no address."""
    if "%" in text or not text.isascii():
        return None
    head, colon, last = text.rpartition(":")
    if "." in last:  # an IPv4 address, alone or ending an IPv6 one
        octets = last.split(".")
        # Any number of leading zeros, as Go's dtoi reads them (int() of thousands of digits raises).
        values = [o.lstrip("0") or "0" for o in octets]
        if len(octets) != 4 or not all(o.isdigit() for o in octets) or any(len(v) > 3 or int(v) > 255
                                                                              for v in values):
            return None
        text = head + colon + ".".join(values)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_ip(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address (:func:`parse_ip`)."""
    return parse_ip(text) is not None
