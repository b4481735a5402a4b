"""Core ``v1`` PersistentVolume and PersistentVolumeClaim strategies: upstream's defaults, the
required fields, claim spec immutability (requests may grow; an unbound claim may be bound), and
the default StorageClass of a new claim (:mod:`.storageclass`).  No binder or provisioner runs:
phases change only when a client writes them."""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required
from fakeapi.models.core_v1_storage import PersistentVolumeSpec
from fakeapi.models.schema import struct_fields
from fakeapi.validation.common import get, quantity_value
from fakeapi.validation.storageclass import admit_claim_class
from fakeapi.validation.strategy import AdmissionContext, Strategy

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
VOLUME_MODES = ["Block", "Filesystem"]
CLAIM_SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and "
                        "volumeAttributesClassName for bound claims")


def _access_modes(modes: list[str] | None, path: str) -> list[FieldError]:
    if not modes:
        return [required(path, "at least 1 access mode is required")]
    return [not_supported(f"{path}[{i}]", mode, ACCESS_MODES) for i, mode in enumerate(modes)
            if mode not in ACCESS_MODES]


def _storage(values: dict[str, Any] | None, path: str) -> list[FieldError]:
    value = (values or {}).get("storage")
    if value is None:
        return [required(f"{path}[storage]")]
    quantity = quantity_value(value)
    if quantity is not None and quantity > 0:
        return []
    return [invalid(f"{path}[storage]", value, "must be greater than zero")]


def _volume_mode(spec: dict[str, Any]) -> list[FieldError]:
    mode = spec.get("volumeMode")
    return [] if mode in VOLUME_MODES else [not_supported("spec.volumeMode", mode or "", VOLUME_MODES)]


class PersistentVolumeStrategy(Strategy):
    """PersistentVolumes: capacity, access modes, one volume source."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {}).setdefault("phase", "Pending")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _storage(spec.get("capacity"), "spec.capacity") + _access_modes(spec.get("accessModes"),
                                                                               "spec.accessModes")
        if spec.get("persistentVolumeReclaimPolicy") not in RECLAIM_POLICIES:
            errs.append(not_supported("spec.persistentVolumeReclaimPolicy",
                                      spec.get("persistentVolumeReclaimPolicy", ""), RECLAIM_POLICIES))
        if not set(spec) - set(struct_fields(PersistentVolumeSpec)):
            errs.append(required("spec", "must specify a volume type"))
        return errs + _volume_mode(spec)


class PersistentVolumeClaimStrategy(Strategy):
    """PersistentVolumeClaims: access modes and a storage request; the spec is immutable but for
    larger requests, the attributes class, and binding an unbound claim."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {}).setdefault("phase", "Pending")

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if old is None:  # DefaultStorageClass admits creates only
            admit_claim_class(obj, ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        return (_access_modes(spec.get("accessModes"), "spec.accessModes")
                + _storage(get(spec, "resources", "requests"), "spec.resources") + _volume_mode(spec))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = self.validate(new, ctx)
        spec, old_spec = dict(new.get("spec") or {}), dict(old.get("spec") or {})
        if not old_spec.get("volumeName"):  # an unbound claim may be bound
            for s in (spec, old_spec):
                s.pop("volumeName", None)
        for s in (spec, old_spec):
            s.pop("volumeAttributesClassName", None)
            s["resources"] = {k: v for k, v in (s.get("resources") or {}).items() if k != "requests"}
        if spec != old_spec:
            errs.append(forbidden("spec", CLAIM_SPEC_IMMUTABLE))
        return errs


STRATEGIES: dict[str, Strategy] = {"PersistentVolume": PersistentVolumeStrategy(),
                                   "PersistentVolumeClaim": PersistentVolumeClaimStrategy()}
