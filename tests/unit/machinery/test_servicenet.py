"""The service network: allocation from the cluster IP and node port ranges, upstream's errors."""

from __future__ import annotations

import pytest

from fakeapi.machinery.servicenet import RangeFull, ServiceNetwork, parse_ip

NET = ServiceNetwork.parse("10.0.0.0/29", "30000-30002")


@pytest.mark.parametrize(("used", "free"), [
    (set(), "10.0.0.1"), ({"10.0.0.1"}, "10.0.0.2"), ({"10.0.0.1", "10.0.0.3", "None"}, "10.0.0.2"),
], ids=["empty", "first-taken", "gap"])
def test_the_lowest_free_address_is_given(used: set[str], free: str) -> None:
    assert NET.free_ip(used) == free


def test_a_full_range_says_so() -> None:
    with pytest.raises(RangeFull, match="failed to allocate a serviceIP: range is full"):
        NET.free_ip({f"10.0.0.{i}" for i in range(1, 7)})
    with pytest.raises(RangeFull, match="failed to allocate a nodePort: range is full"):
        NET.free_port({30000, 30001, 30002})


@pytest.mark.parametrize(("ip", "problem"), [
    ("10.0.0.5", None),
    ("10.0.0.2", "failed to allocate IP 10.0.0.2: provided IP is already allocated"),
    ("10.1.0.5", "failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. "
                 "The range of valid IPs is 10.0.0.0/29"),
    ("10.0.0.0", "failed to allocate IP 10.0.0.0: the provided IP (10.0.0.0) is not in the valid range. "
                 "The range of valid IPs is 10.0.0.0/29"),
], ids=["free", "taken", "outside", "network-address"])
def test_requested_addresses(ip: str, problem: str | None) -> None:
    assert NET.ip_problem(ip, {"10.0.0.2"}) == problem


@pytest.mark.parametrize(("port", "problem"), [
    (30001, None), (30000, "provided port is already allocated"),
    (80, "provided port is not in the valid range. The range of valid ports is 30000-30002"),
], ids=["free", "taken", "outside"])
def test_requested_node_ports(port: int, problem: str | None) -> None:
    assert NET.port_problem(port, {30000}) == problem


@pytest.mark.parametrize(("cidr", "ports"), [("10.0.0.0/33", "1-2"), ("10.0.0.1/24", "1-2"), ("10.0.0.0/31", "1-2"),
                                             ("10.0.0.0/24", "x"), ("10.0.0.0/24", "9-1")],
                         ids=["bad-prefix", "host-bits", "too-small", "ports-not-numbers", "ports-reversed"])
def test_bad_ranges_are_refused(cidr: str, ports: str) -> None:
    with pytest.raises(ValueError):
        ServiceNetwork.parse(cidr, ports)


def test_defaults_are_upstream_flags_defaults() -> None:
    net = ServiceNetwork.parse()
    assert (str(net.cluster_ips), net.node_ports, net.first_ip, net.family) == (
        "10.96.0.0/12", range(30000, 32768), "10.96.0.1", "IPv4")


@pytest.mark.parametrize(("text", "address"), [
    ("010.1.1.1", "10.1.1.1"), ("1.2.3." + "0" * 5000 + "7", "1.2.3.7"), ("::ffff:010.0.0.1", "::ffff:a00:1"),
    ("2001:db8::1", "2001:db8::1"), ("1.2.3." + "9" * 5000, None), ("1.2.3.256", None), ("fe80::1%eth0", None),
    ("\u0661.1.1.1", None), ("1.2.3", None),
], ids=["leading-zeros", "5000-zeros", "embedded-ipv4", "ipv6", "5000-digits", "over-255", "zone", "arabic-digit",
        "three-octets"])
def test_addresses_are_read_as_parse_ip_sloppy_reads_them(text: str, address: str | None) -> None:
    parsed = parse_ip(text)
    assert (None if parsed is None else str(parsed)) == address
