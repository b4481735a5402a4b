"""Pod IP assignment: every pod its own address, the lowest free one, held until the pod goes."""

import ipaddress
import random
import re

import pytest
from fakeapi.scheduler.rules.podips import PodIPs

# Operations: ("assign", uid, expected address) | ("show", uid, podIP) | ("release", uid).
CASES = {
    "sequential": [("assign", "a", "10.244.0.1"), ("assign", "b", "10.244.0.2"), ("assign", "c", "10.244.0.3")],
    "same-uid-same-address": [("assign", "a", "10.244.0.1"), ("assign", "a", "10.244.0.1"),
                              ("assign", "b", "10.244.0.2")],
    "released-address-reused-lowest-first": [
        ("assign", "a", "10.244.0.1"), ("assign", "b", "10.244.0.2"), ("assign", "c", "10.244.0.3"),
        ("release", "c"), ("release", "a"), ("assign", "d", "10.244.0.1"), ("assign", "e", "10.244.0.3"),
        ("assign", "f", "10.244.0.4")],
    "shown-address-skipped": [("show", "x", "10.244.0.1"), ("show", "y", "10.244.0.3"),
                              ("assign", "a", "10.244.0.2"), ("assign", "b", "10.244.0.4")],
    "freed-address-shown-again-is-skipped": [
        ("assign", "a", "10.244.0.1"), ("assign", "b", "10.244.0.2"), ("release", "a"),
        ("show", "x", "10.244.0.1"), ("assign", "c", "10.244.0.3")],
    "held-while-shown-by-another-pod": [
        ("assign", "a", "10.244.0.1"), ("show", "a", "10.244.0.1"), ("show", "x", "10.244.0.1"),
        ("release", "a"), ("assign", "b", "10.244.0.2"), ("release", "x"), ("assign", "c", "10.244.0.1")],
    "status-change-frees-the-old-shown-address": [
        ("show", "x", "10.244.0.1"), ("show", "x", "10.244.0.7"), ("assign", "a", "10.244.0.1")],
    "handed-out-address-held-after-status-shows-another": [
        ("assign", "a", "10.244.0.1"), ("show", "a", "10.244.0.9"), ("assign", "b", "10.244.0.2")],
    "status-cleared": [("show", "x", "10.244.0.1"), ("show", "x", None), ("assign", "a", "10.244.0.1")],
    "foreign-and-invalid-addresses-ignored": [
        ("show", "x", "192.168.0.1"), ("show", "y", "fd00::1"), ("show", "z", "not-an-ip"),
        ("assign", "a", "10.244.0.1"), ("release", "x"), ("release", "y"), ("release", "z"),
        ("assign", "b", "10.244.0.2")],
    "release-unknown-uid": [("release", "nobody"), ("assign", "a", "10.244.0.1")],
    "freed-above-high-water-mark": [
        ("show", "x", "10.244.0.2"), ("assign", "a", "10.244.0.1"), ("release", "x"),
        ("assign", "b", "10.244.0.2")],
}


def _run(ips, ops):
    for op in ops:
        if op[0] == "assign":
            assert ips.assign(op[1]) == op[2], op
        elif op[0] == "show":
            ips.show(op[1], op[2])
        else:
            ips.release(op[1])


@pytest.mark.parametrize("ops", list(CASES.values()), ids=list(CASES))
def test_pod_ips(ops):
    _run(PodIPs(), ops)


def test_matches_lowest_free_scan_under_churn():
    """Against the obvious definition (scan for the lowest address nobody holds or shows)."""
    rng = random.Random(7)
    ips, held, shown = PodIPs(), {}, {}
    hosts = list(ipaddress.ip_network("10.244.0.0/16").hosts())[:400]
    for step in range(3000):
        uid = f"p{rng.randrange(300)}"
        roll = rng.random()
        if roll < 0.5:
            used = set(held.values()) | set(shown.values())
            want = held.get(uid) or next(str(ip) for ip in hosts if str(ip) not in used)
            held[uid] = ips.assign(uid)
            assert held[uid] == want, step
        elif roll < 0.7:
            ip = str(rng.choice(hosts[:350]))
            ips.show(uid, ip)
            shown[uid] = ip
        else:
            ips.release(uid)
            held.pop(uid, None)
            shown.pop(uid, None)


def test_exhausted_network():
    ips = PodIPs(ipaddress.ip_network("10.0.0.0/30"))   # hosts .1 and .2
    assert [ips.assign("a"), ips.assign("b")] == ["10.0.0.1", "10.0.0.2"]
    with pytest.raises(ValueError, match=re.escape("no IP addresses available in range set: 10.0.0.1-10.0.0.2")):
        ips.assign("c")
    ips.release("a")
    assert ips.assign("c") == "10.0.0.1"
