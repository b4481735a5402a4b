"""``resource.k8s.io/v1`` devices: ResourceSlice and DeviceTaintRule strategies.

Split from :mod:`.resource` (claims and classes); rules and messages follow upstream
``pkg/apis/resource/validation``.
"""

from __future__ import annotations

import re
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required, too_long, too_many
from fakeapi.machinery.resourcelimits import (
    ATTRIBUTE_VALUE_MAX,
    ATTRIBUTES_AND_CAPACITIES_MAX,
    CONSUMES_COUNTERS_MAX,
    COUNTER_SETS_MAX,
    COUNTERS_PER_SET_MAX,
    DEVICES_MAX,
    DEVICES_MAX_WITH_TAINTS_OR_COUNTERS,
    TAINTS_MAX,
)
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.validation import names
from fakeapi.validation.common import (
    get,
    immutable,
    validate_list,
)
from fakeapi.validation.core import validate_node_selector
from fakeapi.validation.resource import (
    TAINT_EFFECTS,
    binding_conditions,
    dns_label,
    ensure_spec,
    pool_name,
    qualified_attribute,
)
from fakeapi.validation.strategy import AdmissionContext, Strategy

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
                     r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?\Z")


# --- slices --------------------------------------------------------------------------------

def _attribute(attr: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    set_fields = [k for k in ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")
                  if attr.get(k) is not None]
    for s in ([attr["string"]] if "string" in set_fields else []) + (attr.get("strings") or []):
        if len(s) > ATTRIBUTE_VALUE_MAX:
            errs.append(too_long(f"{path}.string", ATTRIBUTE_VALUE_MAX))
    for v in ([attr["version"]] if "version" in set_fields else []) + (attr.get("versions") or []):
        if not _SEMVER.match(v):
            errs.append(invalid(f"{path}.version", v, "must be a string compatible with semver.org spec 2.0.0"))
    if len(set_fields) != 1:
        errs.append(invalid(path, "" if not set_fields else attr, "exactly one value must be specified"))
    return errs


def _capacity(cap: dict[str, Any], path: str, multi: bool) -> list[FieldError]:
    policy = cap.get("requestPolicy")
    if policy is None:
        return []
    if not multi:
        return [forbidden(f"{path}.requestPolicy", "allowMultipleAllocations must be true")]
    ppath = f"{path}.requestPolicy"
    if policy.get("validValues") and policy.get("validRange"):
        return [forbidden(ppath, 'exactly one policy can be specified, cannot specify "validValues" and '
                                 '"validRange" at the same time')]
    for key in ("validValues", "validRange"):
        if policy.get(key) and policy.get("default") is None:
            return [required(f"{ppath}.default", f"required when {key} is defined")]
    return validate_list(policy.get("validValues"), f"{ppath}.validValues", 10)


def _taint(taint: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check_required(f"{path}.key", taint.get("key"), names.qualified_name)
    if taint.get("value"):
        errs += names.check(f"{path}.value", taint["value"], names.label_value)
    effect = taint.get("effect")
    if not effect:
        errs.append(required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def _counters(counters: dict[str, Any] | None, path: str, max_items: int) -> list[FieldError]:
    if not counters:
        return [required(path)]
    if len(counters) > max_items:
        return [too_many(path, len(counters), max_items)]
    errs: list[FieldError] = []
    for name in counters:
        errs += dns_label(f"{path}[{name}]", name)
    return errs


def _device(dev: dict[str, Any], path: str, per_device: bool) -> list[FieldError]:
    errs = dns_label(f"{path}.name", dev.get("name"))
    attrs, caps = dev.get("attributes") or {}, dev.get("capacity") or {}
    if len(attrs) + len(caps) > ATTRIBUTES_AND_CAPACITIES_MAX:
        errs.append(invalid(path, len(attrs) + len(caps), "the total number of attributes and capacities must "
                                                          f"not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}"))
    for name, attr in attrs.items():
        errs += qualified_attribute(f"{path}.attributes[{name}]", name)
        errs += _attribute(attr, f"{path}.attributes[{name}]")
    multi = bool(dev.get("allowMultipleAllocations"))
    for name, cap in caps.items():
        errs += qualified_attribute(f"{path}.capacity[{name}]", name)
        errs += _capacity(cap, f"{path}.capacity[{name}]", multi)
    errs += validate_list(dev.get("taints"), f"{path}.taints", TAINTS_MAX, _taint)

    def consumption(c: dict[str, Any], p: str) -> list[FieldError]:
        return dns_label(f"{p}.counterSet", c.get("counterSet")) + \
            _counters(c.get("counters"), f"{p}.counters", COUNTERS_PER_SET_MAX)

    errs += validate_list(dev.get("consumesCounters"), f"{path}.consumesCounters", CONSUMES_COUNTERS_MAX,
                          consumption, key=lambda c: c.get("counterSet"))
    errs += _device_node_selection(dev, path, per_device)
    return errs + binding_conditions(dev, path)


def _device_node_selection(dev: dict[str, Any], path: str, per_device: bool) -> list[FieldError]:
    present = [k for k in ("nodeName", "nodeSelector", "allNodes") if dev.get(k) is not None]
    if not per_device:
        if present:
            return [invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")]
        return []
    errs: list[FieldError] = []
    chosen: list[str] = []
    if dev.get("nodeName") is not None:
        if dev["nodeName"]:
            chosen.append("`nodeName`")
            errs += names.check(f"{path}.nodeName", dev["nodeName"], names.dns1123_subdomain)
        else:
            errs.append(invalid(f"{path}.nodeName", "", "must not be empty"))
    if dev.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        errs += validate_node_selector(dev["nodeSelector"], f"{path}.nodeSelector")
    if dev.get("allNodes") is not None:
        if dev["allNodes"]:
            chosen.append("`allNodes`")
        else:
            errs.append(invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    detail = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
              "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    if not chosen:
        errs.append(required(path, detail))
    elif len(chosen) > 1:
        errs.append(invalid(path, "{" + ", ".join(chosen) + "}", detail))
    return errs


def _slice_node_selection(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    chosen: list[str] = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            chosen.append("`nodeName`")
            errs += names.check("spec.nodeName", spec["nodeName"], names.dns1123_subdomain)
        else:
            errs.append(invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        errs += validate_node_selector(spec["nodeSelector"], "spec.nodeSelector")
        terms = spec["nodeSelector"].get("nodeSelectorTerms") or []
        if len(terms) != 1:
            errs.append(invalid("spec.nodeSelector.nodeSelectorTerms", terms,
                                "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is not None:
            if spec[key]:
                chosen.append(f"`{key}`")
            else:
                errs.append(invalid(f"spec.{key}", False, "must be either unset or set to true"))
    detail = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        errs.append(required("spec", detail))
    elif len(chosen) > 1:
        errs.append(invalid("spec", "{" + ", ".join(chosen) + "}", detail + ", but multiple fields are set"))
    return errs


def validate_slice_spec(spec: dict[str, Any]) -> list[FieldError]:
    """A ResourceSliceSpec: driver, pool, one node-selection mode, devices or counters."""
    errs = names.driver_name("spec.driver", spec.get("driver"))
    pool = spec.get("pool") or {}
    errs += pool_name("spec.pool.name", pool.get("name"))
    if (pool.get("resourceSliceCount") or 0) <= 0:
        errs.append(invalid("spec.pool.resourceSliceCount", pool.get("resourceSliceCount", 0),
                            "must be greater than zero"))
    if (pool.get("generation") or 0) < 0:
        errs.append(invalid("spec.pool.generation", pool["generation"], "must be greater than or equal to zero"))
    errs += _slice_node_selection(spec)
    devices, counter_sets = spec.get("devices"), spec.get("sharedCounters")
    if devices is not None and counter_sets is not None:
        errs.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    heavy = any(d.get("taints") or d.get("consumesCounters") for d in devices or [])
    per_device = bool(spec.get("perDeviceNodeSelection"))
    errs += validate_list(devices, "spec.devices", DEVICES_MAX_WITH_TAINTS_OR_COUNTERS if heavy else DEVICES_MAX,
                          lambda d, p: _device(d, p, per_device), key=lambda d: d.get("name"))

    def counter_set(c: dict[str, Any], p: str) -> list[FieldError]:
        return dns_label(f"{p}.name", c.get("name")) + _counters(c.get("counters"), f"{p}.counters",
                                                              COUNTERS_PER_SET_MAX)

    errs += validate_list(counter_sets, "spec.sharedCounters", COUNTER_SETS_MAX, counter_set,
                          key=lambda c: c.get("name"))
    return errs


def drop_disabled_slice_fields(spec: dict[str, Any], old_spec: dict[str, Any] | None,
                               ctx: AdmissionContext) -> None:
    """Slice fields behind DRADeviceTaints, DRAPartitionableDevices and DRAConsumableCapacity."""
    gates = ctx.gates
    devices, old_devices = spec.get("devices") or [], get(old_spec, "devices") or []

    def used(*keys: str) -> bool:
        return any(d.get(k) is not None for d in old_devices for k in keys)

    if not gates.DRADeviceTaints and not used("taints"):
        for d in devices:
            d.pop("taints", None)
    if not gates.DRAPartitionableDevices:
        if not (old_spec or {}).get("sharedCounters"):
            spec.pop("sharedCounters", None)
        if not (old_spec or {}).get("perDeviceNodeSelection"):
            spec.pop("perDeviceNodeSelection", None)
        if not used("consumesCounters"):
            for d in devices:
                d.pop("consumesCounters", None)
        if not used("nodeName", "nodeSelector", "allNodes"):
            for d in devices:
                for k in ("nodeName", "nodeSelector", "allNodes"):
                    d.pop(k, None)
    if not gates.DRAConsumableCapacity and not used("allowMultipleAllocations"):
        for d in devices:
            d.pop("allowMultipleAllocations", None)
            for cap in (d.get("capacity") or {}).values():
                cap.pop("requestPolicy", None)


def _stamp_taints(taints: list[dict[str, Any]] | None) -> None:
    """Upstream sets a taint's ``timeAdded`` on create and update when the client left it out."""
    for taint in taints or ():
        if isinstance(taint, dict) and not taint.get("timeAdded"):
            taint["timeAdded"] = now_rfc3339()


class ResourceSliceStrategy(Strategy):
    """ResourceSlice: driver, pool name and nodeName immutable."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        for device in ensure_spec(obj).get("devices") or ():
            _stamp_taints(device.get("taints"))

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        drop_disabled_slice_fields(ensure_spec(new), get(old, "spec"), ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_slice_spec(obj.get("spec") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        errs = validate_slice_spec(new.get("spec") or {})
        errs += immutable(get(new, "spec", "pool", "name"), get(old, "spec", "pool", "name"), "spec.pool.name")
        errs += immutable(get(new, "spec", "driver"), get(old, "spec", "driver"), "spec.driver")
        return errs + immutable(get(new, "spec", "nodeName"), get(old, "spec", "nodeName"), "spec.nodeName")


class DeviceTaintRuleStrategy(Strategy):
    """DeviceTaintRule: selector names and the taint."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        taint = ensure_spec(obj).get("taint")
        if isinstance(taint, dict):
            _stamp_taints([taint])

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> None:
        # A new effect restarts the taint's clock (eviction counts from timeAdded), unless the
        # client chose a new time itself.
        taint, old_taint = get(new, "spec", "taint"), get(old, "spec", "taint") or {}
        if (not ctx.subresource and isinstance(taint, dict) and taint.get("effect") != old_taint.get("effect")
                and taint.get("timeAdded") == old_taint.get("timeAdded")):
            taint.pop("timeAdded", None)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs: list[FieldError] = []
        selector = get(obj, "spec", "deviceSelector") or {}
        if selector.get("driver") is not None:
            errs += names.driver_name("spec.deviceSelector.driver", selector["driver"])
        if selector.get("pool") is not None:
            errs += pool_name("spec.deviceSelector.pool", selector["pool"])
        if selector.get("device") is not None:
            errs += dns_label("spec.deviceSelector.device", selector["device"])
        return errs + _taint(get(obj, "spec", "taint") or {}, "spec.taint")


STRATEGIES: dict[str, Strategy] = {
    "ResourceSlice": ResourceSliceStrategy(), "DeviceTaintRule": DeviceTaintRuleStrategy(),
}
