"""``storage.k8s.io/v1`` CSIDriver, CSINode and CSIStorageCapacity strategies
(``pkg/apis/storage/validation``, ``pkg/apis/storage/v1/defaults.go``).

- CSIDriver: the 1.37 defaults (attach required, no pod info, no capacity tracking, the
  ReadWriteOnceWithFSType fsGroup policy, Persistent volumes, no republish, no SELinux mount);
  ``attachRequired`` and ``volumeLifecycleModes`` are immutable.
- CSINode: driver names as CSI driver names, node IDs of at most 256 characters, topology keys as
  qualified names; a registered driver may change only its allocatable count.
- CSIStorageCapacity: a DNS-subdomain class name, a non-negative capacity, a valid label
  selector; class and topology are immutable.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, duplicate, invalid, not_supported, required
from fakeapi.validation import names
from fakeapi.validation.common import immutable, quantity_value
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import IS_NEGATIVE, non_negative, validate_label_selector

FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Persistent", "Ephemeral"]
DRIVER_DEFAULTS: dict[str, Any] = {
    "attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
    "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False, "seLinuxMount": False,
}
MIN_TOKEN_SECONDS, MAX_TOKEN_SECONDS = 10 * 60, 1 << 32
MIN_ALLOCATABLE_UPDATE_PERIOD = 10
NODE_ID_MAX = 256  # upstream's strategies allow the longer node IDs


def _token_requests(requests: list[dict[str, Any]] | None, path: str) -> list[FieldError]:
    """``validateTokenRequests``: distinct audiences, expirations between 10 minutes and 2^32 s."""
    errs: list[FieldError] = []
    audiences: set[str] = set()
    for i, request in enumerate(requests or []):
        p, audience = f"{path}[{i}]", request.get("audience", "")
        if audience in audiences:
            errs.append(duplicate(f"{p}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if seconds is not None and seconds < MIN_TOKEN_SECONDS:
            errs.append(invalid(f"{p}.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
        if seconds is not None and seconds > MAX_TOKEN_SECONDS:
            errs.append(invalid(f"{p}.expirationSeconds", seconds, "may not specify a duration larger than 2^32 "
                                                                    "seconds"))
    return errs


def validate_csi_driver_spec(spec: dict[str, Any]) -> list[FieldError]:
    """``validateCSIDriverSpec``; upstream reports a missing ``attachRequired`` as ``attachedRequired``."""
    errs = [required(f"spec.{path}") for key, path in (
        ("attachRequired", "attachedRequired"), ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity")) if spec.get(key) is None]
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    errs += _token_requests(spec.get("tokenRequests"), "spec.tokenRequests")
    errs += [not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES)
             for mode in spec.get("volumeLifecycleModes") or [] if mode not in LIFECYCLE_MODES]
    if spec.get("seLinuxMount") is None:
        errs.append(required("spec.seLinuxMount"))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if period is not None and period < MIN_ALLOCATABLE_UPDATE_PERIOD:
        errs.append(invalid("spec.nodeAllocatableUpdatePeriodSeconds", period,
                            "must be greater than or equal to 10 seconds"))
    in_secrets = spec.get("serviceAccountTokenInSecrets")
    if in_secrets is not None and not spec.get("tokenRequests"):
        errs.append(invalid("spec.serviceAccountTokenInSecrets", in_secrets,
                            "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
    return errs


class CSIDriverStrategy(Strategy):
    """CSIDrivers: defaults, the spec's rules, immutable attach and lifecycle modes."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        for key, value in DRIVER_DEFAULTS.items():
            if spec.get(key) is None:
                spec[key] = value
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_csi_driver_spec(obj.get("spec") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        return (validate_csi_driver_spec(spec)
                + immutable(spec.get("attachRequired"), old_spec.get("attachRequired"), "spec.attachRequired")
                + immutable(spec.get("volumeLifecycleModes"), old_spec.get("volumeLifecycleModes"),
                            "spec.volumeLifecycleModes"))


def _csi_node_driver(driver: dict[str, Any], path: str, seen: set[str]) -> list[FieldError]:
    """``validateCSINodeDriver``; topology key errors are reported at the driver, as upstream does."""
    name = driver.get("name", "")
    errs = names.driver_name(f"{path}.name", name)
    node_id = driver.get("nodeID", "")
    if not node_id:
        errs.append(required(f"{path}.nodeID"))
    if len(node_id) > NODE_ID_MAX:
        errs.append(invalid(f"{path}.nodeID", node_id, f"must be {NODE_ID_MAX} characters or less"))
    errs += non_negative((driver.get("allocatable") or {}).get("count"), f"{path}.allocatable.count")
    if name in seen:
        errs.append(duplicate(f"{path}.name", name))
    seen.add(name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or []:
        if not key:
            errs.append(required(path))
        if key in keys:
            errs.append(duplicate(path, key))
        keys.add(key)
        errs += names.check(path, key, names.qualified_name)
    return errs


def validate_csi_node(obj: dict[str, Any]) -> list[FieldError]:
    """``validateCSINodeSpec``: each driver once, with valid names, node IDs and topology keys."""
    seen: set[str] = set()
    errs: list[FieldError] = []
    for i, driver in enumerate((obj.get("spec") or {}).get("drivers") or []):
        errs += _csi_node_driver(driver, f"spec.drivers[{i}]", seen)
    return errs


def _without_allocatable(driver: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in driver.items() if k != "allocatable"}


class CSINodeStrategy(Strategy):
    """CSINodes: a registered driver keeps all but its allocatable count (MutableCSINodeAllocatableCount)."""

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        # status.storageHealth is the alpha CSIVolumeHealth gate's, off by default in 1.37 (and
        # fakeapi serves no csinodes/status), so no stored node has it to keep.
        new.pop("status", None)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_csi_node(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = validate_csi_node(new)
        new_drivers = (new.get("spec") or {}).get("drivers") or []
        for old_driver in (old.get("spec") or {}).get("drivers") or []:
            for driver in new_drivers:
                if driver.get("name") == old_driver.get("name"):
                    errs += immutable(_without_allocatable(driver), _without_allocatable(old_driver), "spec.drivers")
        return errs


def validate_csi_storage_capacity(obj: dict[str, Any]) -> list[FieldError]:
    """``ValidateCSIStorageCapacity`` (ObjectMeta aside)."""
    errs = validate_label_selector(obj.get("nodeTopology"), "nodeTopology")
    errs += names.check("storageClassName", obj.get("storageClassName", ""), names.dns1123_subdomain)
    capacity = obj.get("capacity")
    if capacity is not None and (value := quantity_value(capacity)) is not None and value < 0:
        errs.append(invalid("capacity", capacity, IS_NEGATIVE))
    return errs


class CSIStorageCapacityStrategy(Strategy):
    """CSIStorageCapacities: class and topology are immutable (the inputs of the GetCapacity call)."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_csi_storage_capacity(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return (validate_csi_storage_capacity(new)
                + immutable(new.get("nodeTopology"), old.get("nodeTopology"), "nodeTopology")
                + immutable(new.get("storageClassName"), old.get("storageClassName"), "storageClassName"))


STRATEGIES: dict[str, Strategy] = {"CSIDriver": CSIDriverStrategy(), "CSINode": CSINodeStrategy(),
                                   "CSIStorageCapacity": CSIStorageCapacityStrategy()}
