"""fakeapi: a fake Kubernetes control plane in one Python process, for testing DRA and workloads."""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["FakeCluster", "__version__"]

if TYPE_CHECKING:
    from fakeapi.cluster import FakeCluster


def __getattr__(name: str) -> object:
    # Lazy, so `import fakeapi.errors` (used by the control plane) doesn't pull in the server.
    if name == "FakeCluster":
        from fakeapi.cluster import FakeCluster

        return FakeCluster
    raise AttributeError(name)
