"""Device taints (KEP-5055): slice taints plus DeviceTaintRule taints, and tolerations.

Device tolerations follow the node toleration rules, so the shared node helper decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fakeapi.scheduler.rules.devicetaints import rule_matches
from fakeapi.scheduler.rules.keys import DeviceID

from fakeapi.machinery.nodeselector import taint_tolerated

_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def rule_taints(rules: Iterable[Mapping[str, Any]], device_id: DeviceID) -> tuple[dict[str, Any], ...]:
    """Taints that DeviceTaintRules add to one device."""
    return tuple((rule.get("spec") or {}).get("taint") or {} for rule in rules if rule_matches(rule, device_id))


def taints_block(taints: Iterable[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """True if some NoSchedule/NoExecute taint is not tolerated (other effects are ignored)."""
    return any(
        taint.get("effect") in _BLOCKING_EFFECTS
        and not taint_tolerated(taint, tolerations)
        for taint in taints
    )
