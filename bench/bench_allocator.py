"""Allocator micro-benchmark: the scheduler_perf DRA shape (500 nodes x 10 devices, one
single-device claim per pod, class selector on the driver).

Prints the cold CEL cost (first evaluation of the class selector on every device) and the
median microseconds of one warm ``allocate(node, [claim])``.  Run:
``.venv/bin/python bench/bench_allocator.py``.
"""

from __future__ import annotations

import statistics
import time

from fakeapi.scheduler.dra.allocator import AllocatedState, Allocator, DeviceIndex, Features

DRIVER = "test-driver.cdi.k8s.io"
NODES, DEVICES = 500, 10


def _slice(n: int) -> dict:
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                  "driverVersion": {"version": "1.2.3"}, "numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}} for i in range(DEVICES)]
    return {"metadata": {"name": f"slice-{n}", "resourceVersion": "1"},
            "spec": {"driver": DRIVER, "nodeName": f"node-{n}", "pool": {"name": f"node-{n}", "generation": 1,
                                                                        "resourceSliceCount": 1},
                     "devices": devices}}


def main() -> None:
    index = DeviceIndex(Features())
    for n in range(NODES):
        index.set_slice(_slice(n))
    index.set_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    nodes = [{"metadata": {"name": f"node-{n}", "labels": {}}} for n in range(NODES)]
    claim = {"metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}

    start = time.perf_counter()
    allocator = Allocator(index, AllocatedState())
    for n in nodes:
        allocator.allocate(n, [claim])
    cold = time.perf_counter() - start
    print(f"cold pass over {NODES} nodes (pools + CEL on first device of each): {cold * 1e3:.1f} ms")

    samples = []
    for _ in range(5):
        allocator = Allocator(index, AllocatedState())  # one per pod, as the scheduler does
        t0 = time.perf_counter()
        for n in nodes:
            allocator.allocate(n, [claim])
        samples.append((time.perf_counter() - t0) / NODES)
    print(f"warm allocate(node, [claim]): median {statistics.median(samples) * 1e6:.1f} us")

    # Cluster 90 % full: the first 9 devices of every node are allocated.
    state = AllocatedState()
    for n in range(NODES):
        state.add_allocation({"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": f"node-{n}", "device": f"gpu-{i}"} for i in range(9)]}})
    samples = []
    for _ in range(5):
        allocator = Allocator(index, state)
        t0 = time.perf_counter()
        for n in nodes:
            allocator.allocate(n, [claim])
        samples.append((time.perf_counter() - t0) / NODES)
    print(f"warm allocate, 9 of 10 devices in use: median {statistics.median(samples) * 1e6:.1f} us")

    expressions = [f'device.attributes["{DRIVER}"].numa == {i} && device.capacity["{DRIVER}"].memory'
                   f'.compareTo(quantity("512Mi")) >= 0' for i in range(3)]
    index.set_class({"metadata": {"name": "sel"}, "spec": {"selectors": [
        {"cel": {"expression": e}} for e in expressions]}})
    sel_claim = {"metadata": {"name": "s", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "sel"}}]}}}
    t0 = time.perf_counter()
    allocator = Allocator(index, AllocatedState())
    for n in nodes:
        allocator.allocate(n, [sel_claim])
    evaluations = NODES * DEVICES  # numa == 0 fails on 9 of 10 devices, so all are visited
    print(f"cold CEL (quantity selector, {evaluations} devices): "
          f"{(time.perf_counter() - t0) / evaluations * 1e6:.1f} us per device")


if __name__ == "__main__":
    main()
