"""``resource.k8s.io/v1`` strategies: defaulting, gate-dependent field dropping and validation.

Rules and messages follow upstream ``pkg/apis/resource/validation`` and the registry strategies.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required, too_long, too_many
from fakeapi.machinery.resourcelimits import (
    BINDING_CONDITIONS_MAX,
    CONFIG_MAX,
    CONSTRAINTS_MAX,
    ID_MAX,
    OPAQUE_PARAMETERS_MAX,
    POOL_NAME_MAX,
    REQUESTS_MAX,
    RESERVED_FOR_MAX_SIZE,
    RESULTS_MAX,
    SELECTORS_MAX,
    SUBREQUESTS_MAX,
    TOLERATIONS_MAX,
)
from fakeapi.validation import names
from fakeapi.validation.cel import check_selectors
from fakeapi.validation.common import (
    get,
    immutable,
    remember_valid,
    validate_annotations,
    validate_labels,
    validate_list,
)
from fakeapi.validation.core import validate_node_selector
from fakeapi.validation.strategy import AdmissionContext, Strategy

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_DENIED = (f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the "
                       "containing namespace")
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]


# --- names ---------------------------------------------------------------------------------

def dns_label(path: str, value: str | None) -> list[FieldError]:
    return names.check_required(path, value, names.dns1123_label)


def pool_name(path: str, value: str | None) -> list[FieldError]:
    if not value:
        return [required(path)]
    errs = [too_long(path, POOL_NAME_MAX)] if len(value) > POOL_NAME_MAX else []
    for part in value.split("/"):
        errs += names.check(path, part, names.dns1123_subdomain)
    return errs


def _c_identifier(path: str, value: str) -> list[FieldError]:
    errs = [too_long(path, ID_MAX)] if len(value) > ID_MAX else []
    return errs + names.check(path, value, names.c_identifier)


def qualified_attribute(path: str, value: str) -> list[FieldError]:
    """``C identifier`` or ``domain/C identifier`` (attribute and capacity names)."""
    parts = value.split("/")
    if len(parts) == 1:
        return _c_identifier(path, parts[0])
    errs = [invalid(path, "", "the domain must not be empty")] if not parts[0] else \
        names.driver_name(path, parts[0])
    errs += [invalid(path, "", "the name must not be empty")] if not parts[1] else _c_identifier(path, parts[1])
    return errs


def fully_qualified_attribute(path: str, value: str) -> list[FieldError]:
    """A qualified attribute name that must carry a domain (constraints' matchAttribute)."""
    errs = qualified_attribute(path, value)
    if "/" not in value:
        errs.append(invalid(path, value, "a fully qualified name must be a domain and a name separated by a slash"))
    return errs


# --- claim spec ----------------------------------------------------------------------------

def _request_names(devices: dict[str, Any]) -> dict[str, set[str] | None]:
    out: dict[str, set[str] | None] = {}
    for r in devices.get("requests") or []:
        subs = r.get("firstAvailable")
        out[r.get("name", "")] = {s.get("name", "") for s in subs} if subs else None
    return out


def _request_ref(path: str, ref: str, known: dict[str, set[str] | None]) -> list[FieldError]:
    msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
    segments = ref.split("/")
    if len(segments) > 2:
        return [invalid(path, ref, msg)]
    errs: list[FieldError] = []
    for seg in segments:
        errs += dns_label(path, seg)
    subs = known.get(segments[0], set())
    ok = segments[0] in known and (len(segments) == 1 or (subs is not None and segments[1] in subs))
    return errs if ok else [*errs, invalid(path, ref, msg)]


def _allocation_mode(req: dict[str, Any], path: str) -> list[FieldError]:
    mode, count = req.get("allocationMode"), req.get("count") or 0
    if mode == "All":
        return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")] \
            if count else []
    if mode == "ExactCount":
        return [] if count > 0 else [invalid(f"{path}.count", count, "must be greater than zero")]
    return [not_supported(f"{path}.allocationMode", mode or "", ["All", "ExactCount"])]


def _selectors(selectors: list[dict[str, Any]] | None, path: str, compile_cel: bool) -> list[FieldError]:
    def one(sel: dict[str, Any], p: str) -> list[FieldError]:
        if sel.get("cel") is None:
            return [required(f"{p}.cel")]
        if not sel["cel"].get("expression"):
            return [required(f"{p}.cel.expression")]
        return []

    errs = validate_list(selectors, path, SELECTORS_MAX, one)
    if not errs and compile_cel:
        errs += check_selectors(selectors or [], path)
    return errs


def _toleration(tol: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if tol.get("key"):
        errs += names.check(f"{path}.key", tol["key"], names.qualified_name)
    op, value = tol.get("operator", ""), tol.get("value", "")
    if op == "Exists":
        if value:
            errs.append(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs += names.check(f"{path}.value", value, names.label_value)
    elif not op:
        errs.append(required(f"{path}.operator"))
    else:
        errs.append(not_supported(f"{path}.operator", op, ["Equal", "Exists"]))
    effect = tol.get("effect")
    if effect and effect not in TAINT_EFFECTS:
        errs.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def _device_selection(req: dict[str, Any], path: str, compile_cel: bool) -> list[FieldError]:
    """Fields shared by ExactDeviceRequest and DeviceSubRequest."""
    errs = names.check_required(f"{path}.deviceClassName", req.get("deviceClassName"), names.dns1123_subdomain)
    errs += _selectors(req.get("selectors"), f"{path}.selectors", compile_cel)
    errs += _allocation_mode(req, path)
    errs += validate_list(req.get("tolerations"), f"{path}.tolerations", TOLERATIONS_MAX, _toleration)
    for name in (get(req, "capacity", "requests") or {}):
        errs += qualified_attribute(f"{path}.capacity.requests[{name}]", name)
    return errs


def _device_request(req: dict[str, Any], path: str, compile_cel: bool) -> list[FieldError]:
    errs = dns_label(f"{path}.name", req.get("name"))
    exactly, first = req.get("exactly"), req.get("firstAvailable")
    if exactly is None and not first:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif exactly is not None and first:
        errs.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, "
                                        "but multiple fields are set"))
    elif first:
        def sub(s: dict[str, Any], p: str) -> list[FieldError]:
            return dns_label(f"{p}.name", s.get("name")) + _device_selection(s, p, compile_cel)
        errs += validate_list(first, f"{path}.firstAvailable", SUBREQUESTS_MAX, sub, key=lambda s: s.get("name"))
    else:
        errs += _device_selection(exactly, f"{path}.exactly", compile_cel)
    return errs


def _constraint(c: dict[str, Any], path: str, known: dict[str, set[str] | None]) -> list[FieldError]:
    errs = validate_list(c.get("requests"), f"{path}.requests", REQUESTS_MAX,
                         lambda r, p: _request_ref(p, r, known), key=lambda r: r)
    match, distinct = c.get("matchAttribute"), c.get("distinctAttribute")
    if match is not None and distinct is not None:
        errs.append(invalid(path, None, 'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                                        "but multiple fields are set"))
    elif match is not None:
        errs += fully_qualified_attribute(f"{path}.matchAttribute", match)
    elif distinct is not None:
        errs += fully_qualified_attribute(f"{path}.distinctAttribute", distinct)
    else:
        errs.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required'))
    return errs


def _opaque(config: dict[str, Any], path: str) -> list[FieldError]:
    opaque = config.get("opaque")
    if opaque is None:
        return [required(f"{path}.opaque")]
    errs = names.driver_name(f"{path}.opaque.driver", opaque.get("driver"))
    params = opaque.get("parameters")
    if params is None:
        errs.append(required(f"{path}.opaque.parameters"))
    elif not isinstance(params, dict):
        errs.append(invalid(f"{path}.opaque.parameters", "<value omitted>", "must be a valid JSON object"))
    elif len(_json_len(params)) > OPAQUE_PARAMETERS_MAX:
        errs.append(too_long(f"{path}.opaque.parameters", OPAQUE_PARAMETERS_MAX))
    return errs


def _json_len(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def validate_claim_spec(spec: dict[str, Any] | None, path: str, compile_cel: bool = True) -> list[FieldError]:
    """A ResourceClaimSpec (also inside templates)."""
    devices = get(spec, "devices") or {}
    known = _request_names(devices)
    dpath = f"{path}.devices"
    errs = validate_list(devices.get("requests"), f"{dpath}.requests", REQUESTS_MAX,
                         lambda r, p: _device_request(r, p, compile_cel), key=lambda r: r.get("name"))
    errs += validate_list(devices.get("constraints"), f"{dpath}.constraints", CONSTRAINTS_MAX,
                          lambda c, p: _constraint(c, p, known))

    def config(c: dict[str, Any], p: str) -> list[FieldError]:
        refs = validate_list(c.get("requests"), f"{p}.requests", REQUESTS_MAX,
                             lambda r, rp: _request_ref(rp, r, known), key=lambda r: r)
        return refs + _opaque(c, p)

    errs += validate_list(devices.get("config"), f"{dpath}.config", CONFIG_MAX, config)
    return errs


_valid_claim_spec = remember_valid(lambda spec: validate_claim_spec(spec, "spec"))


def _uses_admin_access(spec: dict[str, Any] | None) -> bool:
    return any(get(r, "exactly", "adminAccess") for r in get(spec, "devices", "requests") or [])


def _admin_access_errors(spec: dict[str, Any] | None, path: str, ctx: AdmissionContext) -> list[FieldError]:
    if not ctx.gates.DRAAdminAccess or not _uses_admin_access(spec):
        return []
    if ctx.namespace_labels.get(ADMIN_ACCESS_LABEL) == "true":
        return []
    return [forbidden(path, ADMIN_ACCESS_DENIED)]


# --- claim status --------------------------------------------------------------------------

def _consumer(ref: dict[str, Any], path: str) -> list[FieldError]:
    return [required(f"{path}.{k}") for k in ("resource", "name", "uid") if not ref.get(k)]


def binding_conditions(item: dict[str, Any], path: str) -> list[FieldError]:
    conds, failures = item.get("bindingConditions") or [], item.get("bindingFailureConditions") or []
    errs: list[FieldError] = []
    for key, values in (("bindingConditions", conds), ("bindingFailureConditions", failures)):
        if len(values) > BINDING_CONDITIONS_MAX:
            errs.append(too_many(f"{path}.{key}", len(values), BINDING_CONDITIONS_MAX))
    if bool(conds) != bool(failures):
        missing = "bindingFailureConditions" if conds else "bindingConditions"
        other = "bindingConditions" if conds else "bindingFailureConditions"
        errs.append(invalid(f"{path}.{missing}", [], f"{missing} are required to use {other}"))
    for i, c in enumerate(failures):
        if c in conds:
            errs.append(invalid(f"{path}.bindingFailureConditions[{i}]", c,
                                "bindingFailureConditions must not overlap with bindingConditions"))
    return errs


def _allocation(alloc: dict[str, Any], path: str, known: dict[str, set[str] | None]) -> list[FieldError]:
    def result(r: dict[str, Any], p: str) -> list[FieldError]:
        errs = _request_ref(f"{p}.request", r.get("request", ""), known)
        errs += names.driver_name(f"{p}.driver", r.get("driver"))
        errs += pool_name(f"{p}.pool", r.get("pool"))
        errs += dns_label(f"{p}.device", r.get("device"))
        return errs + binding_conditions(r, p)

    def config(c: dict[str, Any], p: str) -> list[FieldError]:
        source = c.get("source")
        errs = [required(f"{p}.source")] if not source else \
            [] if source in ("FromClaim", "FromClass") else \
            [not_supported(f"{p}.source", source, ["FromClaim", "FromClass"])]
        errs += validate_list(c.get("requests"), f"{p}.requests", REQUESTS_MAX,
                              lambda x, rp: _request_ref(rp, x, known), key=lambda x: x)
        return errs + _opaque(c, p)

    devices = alloc.get("devices") or {}
    errs = validate_list(devices.get("results"), f"{path}.devices.results", RESULTS_MAX, result)
    errs += validate_list(devices.get("config"), f"{path}.devices.config", 2 * CONFIG_MAX, config)
    if alloc.get("nodeSelector") is not None:
        errs += validate_node_selector(alloc["nodeSelector"], f"{path}.nodeSelector")
    return errs


def _device_key(d: dict[str, Any]) -> tuple[str, str, str, str | None]:
    return (d.get("driver", ""), d.get("pool", ""), d.get("device", ""), d.get("shareID"))


def validate_claim_status_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Status invariants: reservedFor needs an allocation, allocations are write-once, no new
    consumers while the claim is being deleted."""
    status, old_status = new.get("status") or {}, old.get("status") or {}
    known = _request_names(get(new, "spec", "devices") or {})
    reserved = status.get("reservedFor") or []
    errs = validate_list(reserved, "status.reservedFor", RESERVED_FOR_MAX_SIZE, _consumer, key=lambda r: r.get("uid"))
    alloc, old_alloc = status.get("allocation"), old_status.get("allocation")
    allocated = {_device_key(r) for r in get(alloc, "devices", "results") or []}

    def device_status(d: dict[str, Any], p: str) -> list[FieldError]:
        if _device_key(d) in allocated:
            return []
        return [invalid(p, "/".join(x for x in _device_key(d) if x), "must be an allocated device in the claim")]

    errs += validate_list(status.get("devices"), "status.devices", -1, device_status, key=_device_key)
    if reserved:
        if alloc is None:
            errs.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif get(new, "metadata", "deletionTimestamp"):
            before = {_freeze(r) for r in old_status.get("reservedFor") or []}
            if any(_freeze(r) not in before for r in reserved):
                errs.append(forbidden("status.reservedFor", "new entries may not be added while "
                                                            "`deallocationRequested` or `deletionTimestamp` are set"))
    if alloc is not None and old_alloc is not None:
        errs += immutable(alloc, old_alloc, "status.allocation")
    elif alloc is not None:
        errs += _allocation(alloc, "status.allocation", known)
    return errs


def _freeze(ref: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(ref.items()))


# --- defaulting and feature gates ----------------------------------------------------------

def _default_selection(req: dict[str, Any]) -> None:
    req.setdefault("allocationMode", "ExactCount")
    if req["allocationMode"] == "ExactCount" and not req.get("count"):
        req["count"] = 1
    for tol in req.get("tolerations") or []:
        tol.setdefault("operator", "Equal")


def default_claim_spec(spec: dict[str, Any]) -> None:
    """allocationMode ExactCount, count 1 and toleration operator Equal, for requests and subrequests."""
    for req in get(spec, "devices", "requests") or []:
        if req.get("exactly") is not None:
            _default_selection(req["exactly"])
        for sub in req.get("firstAvailable") or []:
            _default_selection(sub)


def _selections(spec: dict[str, Any] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for req in get(spec, "devices", "requests") or []:
        if req.get("exactly") is not None:
            out.append(req["exactly"])
        out.extend(req.get("firstAvailable") or [])
    return out


def drop_disabled_claim_fields(spec: dict[str, Any], old_spec: dict[str, Any] | None,
                               ctx: AdmissionContext) -> None:
    """Clear fields of disabled DRA gates unless the old spec already used them (upstream dropDisabled*)."""
    gates = ctx.gates
    requests = get(spec, "devices", "requests") or []
    if not gates.DRAAdminAccess and not _uses_admin_access(old_spec):
        for req in requests:
            (req.get("exactly") or {}).pop("adminAccess", None)
    if not gates.DRAPrioritizedList and not any(r.get("firstAvailable") for r in
                                                get(old_spec, "devices", "requests") or []):
        for req in requests:
            req.pop("firstAvailable", None)
    if not gates.DRADeviceTaints and not any(s.get("tolerations") for s in _selections(old_spec)):
        for sel in _selections(spec):
            sel.pop("tolerations", None)
    if not gates.DRAConsumableCapacity:
        if not any(s.get("capacity") for s in _selections(old_spec)):
            for sel in _selections(spec):
                sel.pop("capacity", None)
        if not any(c.get("distinctAttribute") for c in get(old_spec, "devices", "constraints") or []):
            for c in get(spec, "devices", "constraints") or []:
                c.pop("distinctAttribute", None)


def ensure_spec(obj: dict[str, Any]) -> dict[str, Any]:
    # Go always serializes a non-pointer spec struct, so a missing spec is stored as {}.
    if not isinstance(obj.get("spec"), dict):
        obj["spec"] = {}
    return obj["spec"]


# --- strategies ----------------------------------------------------------------------------

class ResourceClaimStrategy(Strategy):
    """ResourceClaim: immutable spec, admin-access admission, status invariants."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        default_claim_spec(ensure_spec(obj))

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        drop_disabled_claim_fields(ensure_spec(new), get(old, "spec"), ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = _valid_claim_spec(obj.get("spec"))
        return errs + _admin_access_errors(obj.get("spec"), "spec", ctx)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return immutable(new.get("spec"), old.get("spec"), "spec")

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return validate_claim_status_update(new, old)


class ResourceClaimTemplateStrategy(Strategy):
    """ResourceClaimTemplate: like a claim's spec, one level down; immutable."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = ensure_spec(obj)
        if not isinstance(spec.get("spec"), dict):
            spec["spec"] = {}
        default_claim_spec(spec["spec"])

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        drop_disabled_claim_fields(get(new, "spec", "spec") or {}, get(old, "spec", "spec"), ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = _template_meta(get(obj, "spec", "metadata") or {})
        errs += validate_claim_spec(get(obj, "spec", "spec"), "spec.spec")
        return errs + _admin_access_errors(get(obj, "spec", "spec"), "spec.spec", ctx)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return immutable(new.get("spec"), old.get("spec"), "spec")


def _template_meta(meta: dict[str, Any]) -> list[FieldError]:
    errs = validate_labels(meta.get("labels"), "spec.metadata.labels")
    errs += validate_annotations(meta.get("annotations"), "spec.metadata.annotations")
    for key in ("name", "generateName", "namespace", "finalizers", "ownerReferences"):
        if meta.get(key):
            errs.append(forbidden(f"spec.metadata.{key}", "only labels and annotations may be set"))
    return errs


class DeviceClassStrategy(Strategy):
    """DeviceClass: selectors compiled on change, config validated; spec mutable."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        ensure_spec(obj)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return self._validate(obj, None)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self._validate(new, old)

    @staticmethod
    def _validate(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        spec = obj.get("spec") or {}
        # Unchanged selectors count as stored expressions: not recompiled (upstream "stored").
        recompile = old is None or get(old, "spec", "selectors") != spec.get("selectors")
        errs = _selectors(spec.get("selectors"), "spec.selectors", recompile)
        errs += validate_list(spec.get("config"), "spec.config", CONFIG_MAX, _opaque)
        return errs


STRATEGIES: dict[str, Strategy] = {
    "DeviceClass": DeviceClassStrategy(), "ResourceClaim": ResourceClaimStrategy(),
    "ResourceClaimTemplate": ResourceClaimTemplateStrategy(),
}
