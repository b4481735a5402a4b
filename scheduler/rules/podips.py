"""Pod IPs of the emulated pod network: every pod its own address, the lowest free one first.

The kubelet emulation hands each started pod an address and must never give one to two pods.
Scanning the addresses in use for every new pod made starting N pods cost O(N²) (at 5,000 pods
it was most of the control plane's CPU time); :class:`PodIPs` keeps how many holders each address
has, a high-water mark and a heap of the addresses freed below it, so an assignment costs
O(log n) and still picks the lowest free address.
"""

from __future__ import annotations

import heapq
import ipaddress

# Where pods get their IPs (kind's default pod subnet).
POD_NETWORK = ipaddress.ip_network("10.244.0.0/16")


class PodIPs:
    """Addresses by pod UID: what the emulation handed out (:meth:`assign`, kept until
    :meth:`release`) and what each pod's status shows (:meth:`show`, written by anyone).

    An address is in use while any pod holds or shows it.
    """

    def __init__(self, network: ipaddress.IPv4Network = POD_NETWORK) -> None:
        self._network = network
        # The network and broadcast addresses are never a pod's.
        self._first, self._last = int(network.network_address) + 1, int(network.broadcast_address) - 1
        self._holders: dict[int, int] = {}     # address -> pods that hold or show it
        self._assigned: dict[str, int] = {}    # uid -> address handed out
        self._shown: dict[str, tuple[str, int | None]] = {}   # uid -> (status.podIP, its address)
        self._next = self._first               # every address below was in use once;
        self._freed: list[int] = []            # those freed since are here (maybe stale)

    def assign(self, uid: str) -> str:
        """The address handed to ``uid`` (the same on every call until it is released)."""
        address = self._assigned.get(uid)
        if address is None:
            address = self._assigned[uid] = self._lowest_free()
            self._hold(address)
        return str(ipaddress.IPv4Address(address))

    def show(self, uid: str, pod_ip: str | None) -> None:
        """The pod's ``status.podIP`` is now ``pod_ip`` (None or '' when it shows none)."""
        old = self._shown.get(uid)
        if (old[0] if old else None) == (pod_ip or None):
            return
        if old is not None and old[1] is not None:
            self._drop(old[1])
        if not pod_ip:
            self._shown.pop(uid, None)
            return
        address = self._parse(pod_ip)
        self._shown[uid] = (pod_ip, address)
        if address is not None:
            self._hold(address)

    def release(self, uid: str) -> None:
        """The pod is gone: what it held and showed is free unless another pod has it."""
        self.show(uid, None)
        address = self._assigned.pop(uid, None)
        if address is not None:
            self._drop(address)

    def _parse(self, pod_ip: str) -> int | None:
        """The address inside this network, or None (another network's addresses never collide)."""
        try:
            address = ipaddress.ip_address(pod_ip)
        except ValueError:
            return None
        return int(address) if address in self._network else None

    def _hold(self, address: int) -> None:
        self._holders[address] = self._holders.get(address, 0) + 1

    def _drop(self, address: int) -> None:
        count = self._holders[address] - 1
        if count:
            self._holders[address] = count
            return
        del self._holders[address]
        if address < self._next:
            heapq.heappush(self._freed, address)

    def _lowest_free(self) -> int:
        while self._freed:   # entries taken again since they were freed are skipped
            address = heapq.heappop(self._freed)
            if address not in self._holders:
                return address
        while self._next in self._holders:   # shown by pods, never handed out by us
            self._next += 1
        if self._next > self._last:
            raise ValueError(f"no IP addresses available in range set: "
                             f"{ipaddress.IPv4Address(self._first)}-{ipaddress.IPv4Address(self._last)}")
        self._next += 1
        return self._next - 1
