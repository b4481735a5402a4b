"""The control plane: scheduler, controllers and kubelet emulation, talking to the API over HTTP.

Only :class:`ControlPlane` is public; it is imported lazily so that ``import fakeapi.scheduler.client``
(or any pure helper) does not pull in every loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakeapi.scheduler.controlplane import ControlPlane

__all__ = ["ControlPlane"]


def __getattr__(name: str) -> Any:
    if name == "ControlPlane":
        from fakeapi.scheduler.controlplane import ControlPlane

        return ControlPlane
    raise AttributeError(f"module 'fakeapi.scheduler' has no attribute {name!r}")
