"""A pod's containers at their busiest moment, sidecars included (AggregateContainerRequests)."""

from typing import Any

import pytest

from fakeapi.machinery.podresources import aggregate_container_requests


def c(cpu: int, **extra: Any) -> dict[str, Any]:
    return {"requests": {"cpu": cpu}, **extra}


def requests_of(container: dict[str, Any]) -> dict[str, int]:
    return container.get("requests") or {}


@pytest.mark.parametrize(("spec", "want"), [
    ({"containers": [c(1), c(2)]}, 3),
    ({"containers": [c(1)], "initContainers": [c(5)]}, 5),
    # KEP-753's example: sidecars run beside every later container, and on with the regular ones.
    ({"initContainers": [c(1), c(2, restartPolicy="Always"), c(5), c(3, restartPolicy="Always")],
      "containers": [c(2)]}, 7),
    ({"initContainers": [c(4, restartPolicy="Always"), c(3)], "containers": [c(1)]}, 7),
    ({"initContainers": [c(2, restartPolicy="Always")], "containers": []}, 2),
    ({"containers": [c(1), "not a container"]}, 1),
], ids=["containers-add-up", "an-init-container-alone", "kep-753", "init-beside-a-sidecar", "sidecar-only",
        "non-objects-skipped"])
def test_the_busiest_moment(spec: dict[str, Any], want: int) -> None:
    assert aggregate_container_requests(spec, requests_of).get("cpu", 0) == want
