"""Core ``v1`` strategies: Pod, Node, Namespace, Event, ConfigMap.

Only what the fake control plane and kubectl rely on: the defaults a real apiserver fills in,
name and reference formats, and Pod spec immutability (images, activeDeadlineSeconds,
tolerations additions and scheduling-gate removals are the mutable bits, as upstream).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from fakeapi.errors import FieldError, Forbidden, duplicate, forbidden, invalid, not_supported, required, status_details
from fakeapi.machinery.podresources import POD_LEVEL_RESOURCES, aggregate_container_requests
from fakeapi.machinery.quantity import (
    DECIMAL_SI,
    QuantityError,
    format_quantity,
    parse_quantity,
    parse_quantity_with_format,
)
from fakeapi.validation import names
from fakeapi.validation.common import (
    get,
    immutable,
    quantity_value,
    remember_valid,
    validate_immutable_data,
    validate_labels,
    validate_list,
)
from fakeapi.validation.ephemeral_containers import validate_ephemeral_containers_update
from fakeapi.validation.events import EventStrategy
from fakeapi.validation.pod_admission import admit_pod_create
from fakeapi.validation.priority import admit_pod_priority
from fakeapi.validation.strategy import AdmissionContext, Strategy

_SELECTOR_OPS = ["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"]
_TOLERATION_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
_RESTART_POLICIES = ["Always", "Never", "OnFailure"]
_DNS_POLICIES = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
# The NamespaceLifecycle admission plugin refuses to delete these.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


# --- shared building blocks ----------------------------------------------------------------

def _requirement(req: dict[str, Any], path: str, fields: bool) -> list[FieldError]:
    errs = names.check_required(f"{path}.key", req.get("key"), names.qualified_name) if not fields else \
        ([required(f"{path}.key")] if not req.get("key") else [])
    op, values = req.get("operator", ""), req.get("values") or []
    if op in ("In", "NotIn") and not values:
        errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt") and (len(values) != 1 or not re.fullmatch(r"-?\d+", values[0])):
        errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    elif op not in _SELECTOR_OPS:
        errs.append(not_supported(f"{path}.operator", op, _SELECTOR_OPS))
    return errs


def validate_node_selector_term(term: dict[str, Any], path: str) -> list[FieldError]:
    """Match expressions on labels and match fields (metadata.name only)."""
    errs = validate_list(term.get("matchExpressions"), f"{path}.matchExpressions", -1,
                         lambda r, p: _requirement(r, p, False))
    for i, req in enumerate(term.get("matchFields") or []):
        p = f"{path}.matchFields[{i}]"
        errs += _requirement(req, p, True)
        if req.get("key") != "metadata.name":
            errs.append(invalid(f"{p}.key", req.get("key"), "not a valid field selector key"))
    return errs


def validate_node_selector(selector: dict[str, Any], path: str) -> list[FieldError]:
    """A core NodeSelector: at least one term."""
    terms = selector.get("nodeSelectorTerms") or []
    if not terms:
        return [required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    return validate_list(terms, f"{path}.nodeSelectorTerms", -1, validate_node_selector_term)


def _toleration(tol: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if tol.get("key"):
        errs += names.check(f"{path}.key", tol["key"], names.qualified_name)
    op = tol.get("operator", "Equal")
    if op == "Exists" and tol.get("value"):
        errs.append(invalid(f"{path}.operator", tol, "value must be empty when `operator` is 'Exists'"))
    elif op == "Equal":
        if not tol.get("key"):
            errs.append(invalid(f"{path}.operator", op, "operator must be Exists when `key` is empty, "
                                                        "which means \"match all values and all keys\""))
        errs += names.check(f"{path}.value", tol.get("value", ""), names.label_value)
    elif op not in ("Equal", "Exists"):
        errs.append(not_supported(f"{path}.operator", op, ["Equal", "Exists"]))
    effect = tol.get("effect")
    if effect and effect not in _TOLERATION_EFFECTS:
        errs.append(not_supported(f"{path}.effect", effect, _TOLERATION_EFFECTS))
    if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
        errs.append(invalid(f"{path}.effect", effect or "",
                            "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    return errs


# --- pod -----------------------------------------------------------------------------------

def _image_pull_policy(image: str) -> str:
    tag = image.rsplit("/", 1)[-1]
    if "@" in tag:
        return "IfNotPresent"
    return "Always" if ":" not in tag or tag.endswith(":latest") else "IfNotPresent"


def _default_container(c: dict[str, Any]) -> None:
    c.setdefault("imagePullPolicy", _image_pull_policy(c.get("image", "")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")


# The resources a pod's QoS class looks at (upstream's supportedQoSComputeResources).
QOS_RESOURCES = ("cpu", "memory")


_QUANTITY_TYPES = (str, int, float)  # anything else (validation refuses it) counts as no quantity


@lru_cache(maxsize=1024, typed=True)  # the same few quantities come back on every pod
def _positive_nanos(quantity: str | int | float) -> int:
    """A quantity's value in billionths (exact: quantities are rounded up to nano) when above
    zero, else 0 (zero, negative, or unreadable: validation refuses the last two after defaulting)."""
    try:
        value = parse_quantity(quantity)
    except QuantityError:
        return 0
    return int(value * 1_000_000_000) if value > 0 else 0


def _qos_class(spec: dict[str, Any]) -> str:
    """``ComputePodQOS`` over the containers and init containers: only cpu and memory count, and
    only quantities above zero; BestEffort with none requested or limited; Guaranteed when every
    container limits both and the summed requests equal the summed limits; else Burstable.
    One loop without helpers or generators beyond the quantity's: it runs on every pod write."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for containers in (spec.get("containers"), spec.get("initContainers")):
        for c in containers or ():
            resources = c.get("resources") if isinstance(c, dict) else None
            req = (resources.get("requests") if isinstance(resources, dict) else None) or {}
            lim = (resources.get("limits") if isinstance(resources, dict) else None) or {}
            limited = 0
            for name in QOS_RESOURCES:
                quantity = req.get(name)
                if type(quantity) in _QUANTITY_TYPES and (value := _positive_nanos(quantity)):
                    requests[name] = requests.get(name, 0) + value
                quantity = lim.get(name)
                if type(quantity) in _QUANTITY_TYPES and (value := _positive_nanos(quantity)):
                    limits[name] = limits.get(name, 0) + value
                    limited += 1
            if limited < len(QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed and requests == limits else "Burstable"


def _resource_list(resources: Any, kind: str) -> dict[str, Any]:
    """``resources[kind]`` (``requests`` or ``limits``) when both are maps, else an empty map."""
    values = get(resources, kind)
    return values if isinstance(values, dict) else {}


def _requirements_qos(resources: dict[str, Any]) -> str:
    """Upstream's ``requirementsQOS`` for one set of requirements (pod-level resources): per cpu
    and memory, Guaranteed when requested as limited above zero, BestEffort when neither, else
    Burstable; a mismatch between the two is Burstable."""
    req, lim = _resource_list(resources, "requests"), _resource_list(resources, "limits")
    if not req and not lim:
        return "BestEffort"
    classes = set()
    for name in QOS_RESOURCES:
        asked, limited = (_positive_nanos(q) if type(q) in _QUANTITY_TYPES else 0
                          for q in (req.get(name), lim.get(name)))
        classes.add("Burstable" if asked != limited else "BestEffort" if not asked else "Guaranteed")
    return classes.pop() if len(classes) == 1 else "Burstable"


def _cpu_memory_nanos(container: Mapping[str, Any]) -> dict[str, int]:
    requests = _resource_list(container.get("resources"), "requests")
    return {name: _positive_nanos(q) for name in POD_LEVEL_RESOURCES
            if type(q := requests.get(name)) in _QUANTITY_TYPES}


def _first_spelling(spec: dict[str, Any], name: str) -> str:
    """The format of the first container request of ``name`` (upstream's sum keeps its first term's)."""
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            quantity = get(c, "resources", "requests", name)
            if type(quantity) in _QUANTITY_TYPES:
                return parse_quantity_with_format(quantity)[1]
    return DECIMAL_SI


def _aggregate_text(spec: dict[str, Any], name: str, nanos: int) -> str:
    """The containers' aggregate request of ``name`` as a quantity, spelled as their first."""
    return format_quantity(Fraction(nanos, 1_000_000_000), _first_spelling(spec, name))


def _default_pod_requests(spec: dict[str, Any]) -> None:
    """``defaultPodRequests``: with pod-level limits, each unset pod-level request of cpu and
    memory becomes the containers' effective request, or else the pod-level limit."""
    resources = spec.get("resources")
    if resources is None:  # nearly every pod: no call on the create path
        return
    limits = _resource_list(resources, "limits")
    if not limits:
        return
    requests = dict(_resource_list(resources, "requests"))
    for name, value in aggregate_container_requests(spec, _cpu_memory_nanos).items():
        if name not in requests:
            requests[name] = _aggregate_text(spec, name, value)
    for name in POD_LEVEL_RESOURCES:
        if name not in requests and name in limits:
            requests[name] = limits[name]
    if requests:
        resources["requests"] = requests


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and its containers: what every pod spec gets, pod templates included."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        _default_container(c)
    for tol in spec.get("tolerations") or []:
        if tol.get("key") or tol.get("operator"):
            tol.setdefault("operator", "Equal")


def _requests_from_limits(containers: Any) -> None:
    """``SetDefaults_Pod``: a container's unset requests default to its limits (pods only, not pod
    templates; ephemeral containers have no resources)."""
    for c in containers or ():
        resources = c.get("resources") if isinstance(c, dict) else None
        limits = resources.get("limits") if isinstance(resources, dict) else None
        if not limits or not isinstance(limits, dict):
            continue
        requests = resources.get("requests")
        if requests is None:
            resources["requests"] = dict(limits)
        elif isinstance(requests, dict):
            for name, value in limits.items():
                requests.setdefault(name, value)


def default_pod(pod: dict[str, Any], pod_level_resources: bool = True) -> None:
    """Defaults a 1.37 apiserver fills into every pod (priority comes from the Priority admission
    plugin); ``pod_level_resources``: the gate PodLevelResources."""
    spec = pod.setdefault("spec", {})
    default_pod_spec(spec)
    _requests_from_limits(spec.get("containers"))
    _requests_from_limits(spec.get("initContainers"))
    if pod_level_resources:
        _default_pod_requests(spec)
    spec.setdefault("enableServiceLinks", True)
    for c in spec.get("ephemeralContainers") or []:
        _default_container(c)
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")
    pod_level = spec.get("resources")
    status.setdefault("qosClass", _requirements_qos(pod_level) if pod_level_resources and isinstance(pod_level, dict)
                      else _qos_class(spec))


def validate_claim_source(claim: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check_required(f"{path}.name", claim.get("name"), names.dns1123_label)
    by_name, by_template = claim.get("resourceClaimName"), claim.get("resourceClaimTemplateName")
    if by_name is None and by_template is None:
        errs.append(invalid(path, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
    elif by_name is not None and by_template is not None:
        errs.append(invalid(path, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                                         "may be specified"))
    else:
        key, value = (("resourceClaimName", by_name) if by_name is not None
                      else ("resourceClaimTemplateName", by_template))
        errs += names.check_required(f"{path}.{key}", value, names.dns1123_subdomain)
    return errs


# IsStandardContainerResourceName, besides the hugepages-<size> names.
_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
# IsStandardResourceName (standardResources), besides the hugepages names of quotas.
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps", "services.nodeports",
    "services.loadbalancers", "requests.storage"})
_HUGE_PAGES = "hugepages-"


def _native(name: str) -> bool:
    """IsNativeResource: no domain, or a kubernetes.io one (others are extended resources)."""
    return "/" not in name or "kubernetes.io/" in name


def validate_resource_name(name: str, field: str, pod_level: bool = False) -> list[FieldError]:
    """validateContainerResourceName, or validatePodResourceName at the pod level."""
    errs = names.check(field, name, names.qualified_name)
    if errs:
        return errs
    unqualified = "/" not in name
    if unqualified and name not in _STANDARD_RESOURCES and not name.startswith((_HUGE_PAGES, "requests.hugepages-")):
        errs.append(invalid(field, name, "must be a standard resource type or fully qualified"))
        if pod_level:
            return errs
    if pod_level:
        if name not in POD_LEVEL_RESOURCES and not name.startswith(_HUGE_PAGES):
            errs.append(not_supported(field, name, ["cpu", _HUGE_PAGES, "memory"]))
    elif unqualified and name not in _CONTAINER_RESOURCES and not name.startswith(_HUGE_PAGES):
        errs.append(invalid(field, name, "must be a standard resource for containers"))
    return errs


def _whole_pages(name: str, quantity: Fraction) -> bool:
    """IsHugePageResourceValueDivisible: ``quantity`` (rounded up to a whole number, as Go's
    ``Value()`` does) is a multiple of the page size ``hugepages-<size>`` names, a positive whole
    number of bytes.  Limits only: a hugepages request must equal its limit."""
    page = quantity_value(name.removeprefix(_HUGE_PAGES))
    if page is None or page <= 0 or page.denominator != 1:
        return False
    return math.ceil(quantity) % page == 0


def _resource_requirements(resources: Any, path: str, pod_level: bool = False) -> list[FieldError]:
    """Upstream's ValidateResourceRequirements (``path``: the requirements' own): resource names
    (a container's, or the pod level's cpu, memory and hugepages), values of at least zero (whole
    for extended resources), requests within the limits, resources that cannot be overcommitted
    (extended ones, hugepages) requested as limited, and hugepages only beside cpu or memory."""
    if not isinstance(resources, dict):
        return []
    errs: list[FieldError] = []
    limits, requests = _resource_list(resources, "limits"), _resource_list(resources, "requests")
    for kind, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            field = f"{path}.{kind}[{name}]"
            errs += validate_resource_name(name, field, pod_level)
            quantity = quantity_value(value)
            if quantity is not None and quantity < 0:
                errs.append(invalid(field, value, "must be greater than or equal to 0"))
            elif quantity is not None and not _native(name) and quantity.denominator != 1:
                errs.append(invalid(field, value, "must be an integer"))
            if kind == "limits" and name.startswith(_HUGE_PAGES) and quantity is not None \
                    and not _whole_pages(name, quantity):
                errs.append(invalid(field, value, f"{value} is not positive integer multiple of {name}"))
    for name, value in requests.items():
        overcommit = _native(name) and not name.startswith(_HUGE_PAGES)
        limit = limits.get(name)
        if limit is None:
            if not overcommit:
                errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
            continue
        request_value, limit_value = quantity_value(value), quantity_value(limit)
        if request_value is None or limit_value is None:
            continue
        if not overcommit and request_value != limit_value:
            errs.append(invalid(f"{path}.requests", value, f"must be equal to {name} limit of {limit}"))
        elif request_value > limit_value:
            errs.append(invalid(f"{path}.requests", value, f"must be less than or equal to {name} limit of {limit}"))
    named = {*limits, *requests}
    if any(n.startswith(_HUGE_PAGES) for n in named) and not named & set(QOS_RESOURCES):
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


def _pod_resources(spec: dict[str, Any]) -> list[FieldError]:
    """validatePodResources: the pod-level requirements, then their consistency with the
    containers' (requests cover the containers' busiest moment, no container limit above the pod's)."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    if get(spec, "os", "name") == "windows":
        return [forbidden("spec.resources", "may not be set for a windows pod")]
    errs = _resource_requirements(resources, "spec.resources", pod_level=True)
    requests, limits = _resource_list(resources, "requests"), _resource_list(resources, "limits")
    for name, aggregate in sorted(aggregate_container_requests(spec, _cpu_memory_nanos).items()):
        asked = quantity_value(requests.get(name)) if name in requests else None
        if asked is not None and Fraction(aggregate, 1_000_000_000) > asked:
            errs.append(invalid(f"spec.resources.requests[{name}]", requests[name],
                                "must be greater than or equal to aggregate container requests of "
                                + _aggregate_text(spec, name, aggregate)))
    for i, c in enumerate(spec.get("containers") or ()):
        for name, value in sorted(_resource_list(get(c, "resources"), "limits").items()):
            pod_limit = quantity_value(limits.get(name)) if name in limits and name in POD_LEVEL_RESOURCES else None
            mine = quantity_value(value)
            if pod_limit is not None and mine is not None and mine > pod_limit:
                # Upstream builds this path from the pod-level resources' path.
                errs.append(invalid(f"spec.resources.containers[{i}][{name}].limits", value,
                                    f"must be less than or equal to pod limits of {limits[name]}"))
    return errs


def _container(c: dict[str, Any], path: str, claim_names: set[str]) -> list[FieldError]:
    errs = names.check_required(f"{path}.name", c.get("name"), names.dns1123_label)
    if not c.get("image"):
        errs.append(required(f"{path}.image"))
    errs += _resource_requirements(c.get("resources"), f"{path}.resources")
    for i, claim in enumerate(get(c, "resources", "claims") or []):
        if claim.get("name") not in claim_names:
            detail = ("must be one of the names in pod.spec.resourceClaims"
                      + (": " + ", ".join(sorted(claim_names)) if claim_names else " which is empty"))
            errs.append(FieldError("FieldValueNotFound", f"{path}.resources.claims[{i}]", detail, claim.get("name")))
    return errs


def _group_reference(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    group, ref = spec.get("schedulingGroup"), spec.get("workloadRef")
    if group is not None:
        errs += names.check_required("spec.schedulingGroup.podGroupName", group.get("podGroupName"),
                                     names.dns1123_subdomain)
    if ref is not None:
        errs += names.check_required("spec.workloadRef.name", ref.get("name"), names.dns1123_subdomain)
        errs += names.check_required("spec.workloadRef.podGroup", ref.get("podGroup"), names.dns1123_label)
        if ref.get("podGroupReplicaKey"):
            errs += names.check("spec.workloadRef.podGroupReplicaKey", ref["podGroupReplicaKey"],
                                names.dns1123_label)
    if group is not None and ref is not None:
        errs.append(forbidden("spec.workloadRef", "may not be set together with `schedulingGroup`"))
    return errs


def validate_pod_spec(spec: dict[str, Any]) -> list[FieldError]:
    """The PodSpec rules the fake control plane depends on."""
    claim_names = {c["name"] for c in spec.get("resourceClaims") or [] if c.get("name")}
    errs = validate_list(spec.get("resourceClaims"), "spec.resourceClaims", -1, validate_claim_source,
                         key=lambda c: c.get("name"))
    if not spec.get("containers"):
        errs.append(required("spec.containers"))
    for key in ("initContainers", "containers"):
        errs += validate_list(spec.get(key), f"spec.{key}", -1, lambda c, p: _container(c, p, claim_names))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            if c.get("name") in seen:
                errs.append(duplicate(f"spec.{key}[{i}].name", c.get("name")))
            seen.add(c.get("name"))
    if spec.get("restartPolicy") not in _RESTART_POLICIES:
        errs.append(not_supported("spec.restartPolicy", spec.get("restartPolicy", ""), _RESTART_POLICIES))
    if spec.get("dnsPolicy") not in _DNS_POLICIES:
        errs.append(not_supported("spec.dnsPolicy", spec.get("dnsPolicy", ""), _DNS_POLICIES))
    errs += validate_labels(spec.get("nodeSelector"), "spec.nodeSelector")
    errs += validate_list(spec.get("tolerations"), "spec.tolerations", -1, _toleration)
    required_affinity = get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if required_affinity is not None:
        errs += validate_node_selector(
            required_affinity, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    if spec.get("nodeName"):
        errs += names.check("spec.nodeName", spec["nodeName"], names.dns1123_subdomain)
    errs += validate_list(spec.get("schedulingGates"), "spec.schedulingGates", -1,
                          lambda g, p: names.check_required(f"{p}.name", g.get("name"), names.qualified_name),
                          key=lambda g: g.get("name"))
    return errs + _pod_resources(spec) + _group_reference(spec)


_valid_pod_spec = remember_valid(validate_pod_spec)


def _masked_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec without the fields a pod update may change."""
    masked = {k: v for k, v in spec.items() if k not in (
        "activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds",
        "schedulingGroup", "workloadRef")}
    for key in ("containers", "initContainers"):
        if key in masked:
            masked[key] = [{k: v for k, v in c.items() if k != "image"} for c in masked[key]]
    return masked


def validate_pod_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Pod spec immutability; the pod group reference has its own immutability error."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    for key in ("schedulingGroup", "workloadRef"):
        errs += immutable(spec.get(key), old_spec.get(key), f"spec.{key}")
    if _masked_spec(spec) != _masked_spec(old_spec):
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN))
    old_tolerations = old_spec.get("tolerations") or []
    if any(t not in (spec.get("tolerations") or []) for t in old_tolerations):
        errs.append(forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                  "tolerationSeconds"))
    old_gates = old_spec.get("schedulingGates") or []
    if any(g not in old_gates for g in spec.get("schedulingGates") or []):
        errs.append(forbidden("spec.schedulingGates", "only deletion is allowed, but found new scheduling gate"))
    return errs


def validate_pod_status(new: dict[str, Any]) -> list[FieldError]:
    """status.resourceClaimStatuses names must match spec.resourceClaims."""
    claim_names = {c.get("name") for c in get(new, "spec", "resourceClaims") or []}

    def entry(s: dict[str, Any], p: str) -> list[FieldError]:
        errs = [] if s.get("name") in claim_names else \
            [invalid(f"{p}.name", s.get("name"), "must match the name of an entry in `spec.resourceClaims`")]
        if s.get("resourceClaimName"):
            errs += names.check(f"{p}.resourceClaimName", s["resourceClaimName"], names.dns1123_subdomain)
        return errs

    errs = validate_list(get(new, "status", "resourceClaimStatuses"), "status.resourceClaimStatuses", -1, entry,
                         key=lambda s: s.get("name"))
    return errs + validate_list(get(new, "status", "conditions"), "status.conditions", -1,
                                key=lambda c: c.get("type"))


class PodStrategy(Strategy):
    """Pods: kubectl-visible defaults, spec validation, spec immutability."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        if not ctx.gates.PodLevelResources and ctx.operation == "CREATE":
            (obj.get("spec") or {}).pop("resources", None)  # dropDisabledPodLevelResourcesFields
        default_pod(obj, ctx.gates.PodLevelResources)

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if ctx.operation == "CREATE":
            admit_pod_create(obj)
        if not ctx.subresource:
            admit_pod_priority(obj, old, ctx)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return _valid_pod_spec(obj.get("spec") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        if ctx.subresource == "ephemeralcontainers":
            return validate_ephemeral_containers_update(new, old)
        return self.validate(new, ctx) + validate_pod_update(new, old)

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return validate_pod_status(new)

    def grace_period(self, obj: dict[str, Any], options: Mapping[str, Any]) -> int:
        # Only bound, running pods linger for the kubelet; everything else goes at once.
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        return max(int(grace), 0)


# --- node, namespace, event, configmap -----------------------------------------------------

def _taint(taint: dict[str, Any], path: str) -> list[FieldError]:
    errs = names.check_required(f"{path}.key", taint.get("key"), names.qualified_name)
    if taint.get("value"):
        errs += names.check(f"{path}.value", taint["value"], names.label_value)
    if not taint.get("effect"):
        errs.append(required(f"{path}.effect"))
    elif taint["effect"] not in _TOLERATION_EFFECTS:
        errs.append(not_supported(f"{path}.effect", taint["effect"], _TOLERATION_EFFECTS))
    return errs


class NodeStrategy(Strategy):
    """Nodes: status settable on create, allocatable defaults to capacity; taints unique by key and effect."""

    keeps_status_on_create = True

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        status = obj.get("status")
        if status and status.get("capacity") and "allocatable" not in status:
            status["allocatable"] = dict(status["capacity"])

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_list(get(obj, "spec", "taints"), "spec.taints", -1, _taint,
                             key=lambda t: f"{t.get('key')}:{t.get('effect')}")


class NamespaceStrategy(Strategy):
    """Namespaces: DNS-label names, the ``kubernetes`` finalizer, phase Active; deletion turns them
    Terminating until ``spec.finalizers`` is emptied (``namespaces/{name}/finalize``)."""

    def validate_name(self, name: str) -> list[str]:
        return names.dns1123_label(name)

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        if ctx.operation == "CREATE":
            # Upstream's PrepareForCreate: the kubernetes finalizer joins whatever the client gave.
            spec = obj.setdefault("spec", {})
            finalizers = spec.get("finalizers") or []
            if "kubernetes" not in finalizers:
                spec["finalizers"] = [*finalizers, "kubernetes"]
        obj.setdefault("status", {}).setdefault("phase", "Active")
        labels = obj.setdefault("metadata", {}).setdefault("labels", {})
        if obj["metadata"].get("name"):
            # The NamespaceDefaultLabelName gate (GA) stamps the name label on every namespace.
            labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]

    def admit_delete(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if name in IMMORTAL_NAMESPACES:
            raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                            details=status_details("namespaces", "", name))

    def prepare_delete(self, obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"

    def finalized(self, obj: dict[str, Any]) -> bool:
        return not get(obj, "spec", "finalizers")


class ConfigMapStrategy(Strategy):
    """ConfigMaps: valid keys, no key in both maps, immutable once ``immutable: true``."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        errs = [error for field_name, values in (("data", data), ("binaryData", binary)) for key in values
                for error in names.check_config_key(field_name, key)]
        if data and binary:
            errs += [invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
                     for key in data.keys() & binary.keys()]
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx) + validate_immutable_data(new, old, ("data", "binaryData"))


STRATEGIES: dict[str, Strategy] = {
    "Pod": PodStrategy(), "Node": NodeStrategy(), "Namespace": NamespaceStrategy(), "Event": EventStrategy(),
    "ConfigMap": ConfigMapStrategy(),
}
