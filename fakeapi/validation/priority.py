"""PriorityClass and the ``Priority`` admission plugin (``plugin/pkg/admission/priority``).

- PriorityClass: ``preemptionPolicy`` defaults to ``PreemptLowerPriority``; names with the
  ``system-`` prefix are reserved for the two built-in classes (created by the server at start);
  user values are at most 1,000,000,000; ``value`` and ``preemptionPolicy`` are immutable; at
  most one class may be ``globalDefault`` (a second one is refused with 403).
- Pods (create): ``spec.priority`` and ``spec.preemptionPolicy`` come from
  ``spec.priorityClassName``, or from the global default class (whose name the pod then gets),
  or are 0 and ``PreemptLowerPriority``; an unknown class is 403, and a priority or policy the
  client set that differs from the class's is 403.  Updates keep what create computed.
- PodGroups (create, 1.37): ``spec.priority`` from ``spec.priorityClassName`` by the same rules
  (upstream resolves workloads the same way), so a group and its pods agree.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, admission_forbidden, forbidden, not_supported
from fakeapi.validation.common import immutable
from fakeapi.validation.strategy import AdmissionContext, Strategy

GROUP, PLURAL = "scheduling.k8s.io", "priorityclasses"
PREEMPT_LOWER_PRIORITY, NEVER = "PreemptLowerPriority", "Never"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PREFIX = "system-"
# The built-in classes, as the apiserver creates them at start.
SYSTEM_PRIORITY_CLASSES: tuple[dict[str, Any], ...] = (
    {"metadata": {"name": "system-node-critical"}, "value": SYSTEM_CRITICAL_PRIORITY + 1000,
     "description": "Used for system critical pods that must not be moved from their current node."},
    {"metadata": {"name": "system-cluster-critical"}, "value": SYSTEM_CRITICAL_PRIORITY,
     "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
                    "node if necessary."},
)


def known_system_class_error(pc: dict[str, Any]) -> str:
    """Upstream ``IsKnownSystemPriorityClass``: why ``pc`` is not a built-in class ('' if it is)."""
    name = (pc.get("metadata") or {}).get("name")
    for system in SYSTEM_PRIORITY_CLASSES:
        if system["metadata"]["name"] == name:
            if pc.get("value") != system["value"]:
                return f"value of {name} PriorityClass must be {system['value']}"
            if bool(pc.get("globalDefault")) is not False:
                return f"globalDefault of {name} PriorityClass must be false"
            return ""
    return f"{name} is not a known system priority class"


def validate_priority_class(pc: dict[str, Any]) -> list[FieldError]:
    """``ValidatePriorityClass`` (ObjectMeta aside)."""
    errs: list[FieldError] = []
    name = (pc.get("metadata") or {}).get("name") or ""
    if name.startswith(SYSTEM_PREFIX):
        reason = known_system_class_error(pc)
        if reason:
            errs.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are "
                                                   f"reserved for system use only. error: {reason}"))
    elif (pc.get("value") or 0) > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value", f"maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    policy = pc.get("preemptionPolicy")
    if policy is not None and policy not in (PREEMPT_LOWER_PRIORITY, NEVER):
        errs.append(not_supported("preemptionPolicy", policy, [PREEMPT_LOWER_PRIORITY, NEVER]))
    return errs


def default_class(classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The global default class; the lowest value wins should a race have made two."""
    defaults = [pc for pc in classes if pc.get("globalDefault")]
    return min(defaults, key=lambda pc: pc.get("value") or 0) if defaults else None


def resolve_class(class_name: str, ctx: AdmissionContext) -> dict[str, Any] | None:
    """The class a pod or group gets (None: no class, priority 0); raises ValueError with the
    reason an unknown name is refused."""
    if not class_name:
        return default_class(ctx.list_all(GROUP, PLURAL))
    pc = ctx.lookup(GROUP, PLURAL, "", class_name)
    if pc is None:
        raise ValueError(f"no PriorityClass with name {class_name} was found")
    return pc


def admit_pod_priority(pod: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
    """The Priority plugin for pods: on create set ``priority``/``preemptionPolicy`` (403 on an
    unknown class or a value that differs from the class's), on update keep what create set."""
    spec = pod.setdefault("spec", {})
    if old is not None:
        old_spec = old.get("spec") or {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]
        return
    try:
        pc = resolve_class(spec.get("priorityClassName") or "", ctx)
    except ValueError as exc:
        raise admission_forbidden(pod, "pods", "", str(exc)) from None
    priority = int(pc.get("value") or 0) if pc else 0
    policy = (pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY) if pc else PREEMPT_LOWER_PRIORITY
    if pc is not None and not spec.get("priorityClassName"):
        spec["priorityClassName"] = pc["metadata"]["name"]
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise admission_forbidden(pod, "pods", "", f"the integer value of priority ({spec['priority']}) must not be "
                                  f"provided in pod spec; priority admission controller computed {priority} from "
                                  "the given PriorityClass name")
    spec["priority"] = priority
    if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
        raise admission_forbidden(pod, "pods", "", f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) "
                                  f"must not be provided in pod spec; priority admission controller computed {policy} "
                                  "from the given PriorityClass name")
    spec["preemptionPolicy"] = policy


def admit_group_priority(group: dict[str, Any], ctx: AdmissionContext) -> None:
    """``spec.priority`` of a new PodGroup from its class (or the default class, or 0)."""
    spec = group.setdefault("spec", {})
    try:
        pc = resolve_class(spec.get("priorityClassName") or "", ctx)
    except ValueError as exc:
        raise admission_forbidden(group, "podgroups", GROUP, str(exc)) from None
    if pc is not None and not spec.get("priorityClassName"):
        spec["priorityClassName"] = pc["metadata"]["name"]
    spec["priority"] = int(pc.get("value") or 0) if pc else 0


class PriorityClassStrategy(Strategy):
    """PriorityClasses: defaults, reserved names, immutable value and policy, one global default."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        obj.setdefault("preemptionPolicy", PREEMPT_LOWER_PRIORITY)

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if not obj.get("globalDefault"):
            return
        name = (obj.get("metadata") or {}).get("name")
        current = default_class(ctx.list_all(GROUP, PLURAL))
        if current is not None and (old is None or current["metadata"]["name"] != name):
            raise admission_forbidden(obj, PLURAL, GROUP, f"PriorityClass {current['metadata']['name']} is already "
                                      "marked as default. Only one default can exist")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_priority_class(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = validate_priority_class(new)
        if new.get("value") != old.get("value"):
            errs.append(forbidden("value", "may not be changed in an update."))
        return errs + immutable(new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy")


STRATEGIES: dict[str, Strategy] = {"PriorityClass": PriorityClassStrategy()}
