"""Assume cache (claims, pending allocations, allocated state) and the node cache (assumed pods)."""

from __future__ import annotations

from fakeapi.scheduler.assume_cache import ClaimAssumeCache
from fakeapi.scheduler.snapshot import NodeCache

from .builders import allocation, claim, node, pod

DEV0 = ("gpu.example.com", "n1", "gpu-0")
DEV1 = ("gpu.example.com", "n1", "gpu-1")


def test_informer_allocation_is_counted_once() -> None:
    cache = ClaimAssumeCache()
    cache.on_upsert(claim("c", allocation=allocation("gpu-0"), rv="2"))
    cache.on_upsert(claim("c", allocation=allocation("gpu-0"), rv="3"))
    assert cache.allocated.is_allocated(DEV0)
    cache.on_upsert(claim("c", rv="4"))   # deallocated
    assert not cache.allocated.is_allocated(DEV0)


def test_pending_allocation_then_written_then_informed() -> None:
    cache = ClaimAssumeCache()
    cache.on_upsert(claim("c", rv="1"))
    cache.signal_pending(claim("c", allocation=allocation("gpu-0")))
    assert cache.has_pending("claim-c") and cache.allocated.is_allocated(DEV0)
    written = claim("c", allocation=allocation("gpu-0"), rv="5")
    cache.assume(written)
    assert cache.remove_pending("claim-c")
    assert cache.allocated.is_allocated(DEV0)             # the assumed object still counts
    assert cache.get("default", "c") is written
    cache.on_upsert(claim("c", allocation=allocation("gpu-0"), rv="4"))   # older than assumed
    assert cache.get("default", "c") is written
    informed = claim("c", allocation=allocation("gpu-0"), rv="5")
    cache.on_upsert(informed)
    assert cache.get("default", "c") is informed
    cache.on_delete(informed)
    assert not cache.allocated.is_allocated(DEV0)


def test_the_same_allocation_in_a_new_object_leaves_the_pool_generation() -> None:
    cache = ClaimAssumeCache()
    pool = ("gpu.example.com", "n1")
    cache.on_upsert(claim("c", rv="1"))
    cache.signal_pending(claim("c", allocation=allocation("gpu-0")))
    chosen = cache.allocated.pool_generation(pool)
    cache.assume(claim("c", allocation=allocation("gpu-0"), rv="5"))     # written as chosen
    cache.remove_pending("claim-c")
    cache.on_upsert(claim("c", allocation=allocation("gpu-0"), rv="5"))  # informed as written
    assert cache.allocated.pool_generation(pool) == chosen and cache.allocated.is_allocated(DEV0)
    cache.on_upsert(claim("c", allocation=allocation("gpu-1"), rv="6"))  # another device: a change
    assert cache.allocated.pool_generation(pool) > chosen
    assert cache.allocated.is_allocated(DEV1) and not cache.allocated.is_allocated(DEV0)


def test_unreserve_restores_informer_view() -> None:
    cache = ClaimAssumeCache()
    original = claim("c", rv="1")
    cache.on_upsert(original)
    cache.signal_pending(claim("c", allocation=allocation("gpu-1")))
    assert cache.allocated.is_allocated(DEV1)
    cache.remove_pending("claim-c")
    cache.restore("default", "c")
    assert cache.get("default", "c") is original
    assert not cache.allocated.is_allocated(DEV1)


def test_assumed_pod_counts_until_forgotten() -> None:
    nodes = NodeCache()
    nodes.set_node(node("n1", allocatable={"cpu": "1", "pods": "10"}))
    p = pod("p", requests={"cpu": "600m"})
    nodes.assume_pod(p, "n1")
    info = nodes.get("n1")
    assert info is not None and info.requested["cpu"] == 600 and info.pod_count == 1
    nodes.forget_pod(p["metadata"]["uid"])
    assert info.requested["cpu"] == 0 and info.pod_count == 0


def test_confirmed_binding_survives_forget_and_terminal_pods_free_resources() -> None:
    nodes = NodeCache()
    nodes.set_node(node("n1", allocatable={"cpu": "1"}))
    p = pod("p", requests={"cpu": "600m"})
    nodes.assume_pod(p, "n1")
    bound = {**p, "spec": {**p["spec"], "nodeName": "n1"}}
    nodes.set_pod(bound)
    nodes.forget_pod(p["metadata"]["uid"])          # too late: the binding was observed
    assert nodes.get("n1").requested["cpu"] == 600
    nodes.set_pod({**bound, "status": {"phase": "Succeeded"}})
    assert nodes.get("n1").requested["cpu"] == 0


def test_node_order_is_stable_and_cached() -> None:
    nodes = NodeCache()
    for name in ("b", "a", "c"):
        nodes.set_node(node(name))
    assert [i.name for i in nodes.nodes()] == ["a", "b", "c"]
    assert nodes.nodes() is nodes.nodes()
    nodes.remove_node("b")
    assert [i.name for i in nodes.nodes()] == ["a", "c"]
