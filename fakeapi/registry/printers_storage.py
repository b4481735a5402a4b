"""Table columns of the ``storage.k8s.io/v1`` kinds, after upstream's
``pkg/printers/internalversion/printers.go`` (unset fields print as the defaults they stand for)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fakeapi.registry.printers import path
from fakeapi.registry.resource import AGE, NAME, Column
from fakeapi.validation.storageclass import is_default_class


def _class_name(sc: dict[str, Any]) -> str:
    name = (sc.get("metadata") or {}).get("name", "")
    return f"{name} (default)" if is_default_class(sc) else name


def _or(key: str, unset: Any) -> Callable[[dict[str, Any]], Any]:
    """The field ``key`` of an object, ``unset`` when absent."""
    def get(obj: dict[str, Any]) -> Any:
        value = obj.get(key)
        return unset if value is None else value
    return get


def _spec_or(key: str, unset: Any) -> Callable[[dict[str, Any]], Any]:
    field = _or(key, unset)
    return lambda obj: field(obj.get("spec") or {})


def _token_audiences(driver: dict[str, Any]) -> str:
    requests = (driver.get("spec") or {}).get("tokenRequests")
    return ",".join(r.get("audience", "") for r in requests) if requests else "<unset>"


def _modes(driver: dict[str, Any]) -> str:
    return ",".join((driver.get("spec") or {}).get("volumeLifecycleModes") or []) or "<none>"


STORAGE_CLASS_COLUMNS = (
    replace(NAME, getter=_class_name), Column("Provisioner", path("provisioner")),
    Column("ReclaimPolicy", _or("reclaimPolicy", "Delete")),
    Column("VolumeBindingMode", _or("volumeBindingMode", "Immediate")),
    Column("AllowVolumeExpansion", _or("allowVolumeExpansion", False)), AGE,
)
CSI_DRIVER_COLUMNS = (
    Column("AttachRequired", _spec_or("attachRequired", True), type="boolean"),
    Column("PodInfoOnMount", _spec_or("podInfoOnMount", False), type="boolean"),
    Column("StorageCapacity", _spec_or("storageCapacity", False), type="boolean"),
    Column("TokenRequests", _token_audiences),
    Column("RequiresRepublish", _spec_or("requiresRepublish", False), type="boolean"),
    Column("Modes", _modes), AGE,
)
CSI_NODE_COLUMNS = (Column("Drivers", lambda n: len((n.get("spec") or {}).get("drivers") or []), type="integer",
                           description="Drivers indicates the number of CSI drivers registered on the node"), AGE)
# Upstream prints no Age for capacities; listing Name makes this the whole list.
CSI_STORAGE_CAPACITY_COLUMNS = (NAME, Column("StorageClassName", path("storageClassName")),
                                Column("Capacity", _or("capacity", "<unset>")))
