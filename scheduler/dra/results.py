"""Turning a found solution into AllocationResults shaped exactly like ``claim.status.allocation``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fakeapi.scheduler.dra.capacity import Consumption, status_name
from fakeapi.scheduler.dra.devices import Device


@dataclass(frozen=True)
class Picked:
    """One device picked for a (sub)request during the search."""

    request: str  # "req" or "req/sub"
    base_request: str
    sub_request: str
    device: Device
    admin: bool
    tolerations: tuple[dict[str, Any], ...]
    share_id: str | None
    consumption: Consumption | None


def device_result(pick: Picked) -> dict[str, Any]:
    """One ``devices.results[]`` entry (omitting empty optional fields, as the wire does)."""
    device = pick.device
    driver, pool, name = device.id
    result: dict[str, Any] = {"request": pick.request, "driver": driver, "pool": pool, "device": name}
    if pick.admin:
        result["adminAccess"] = True
    if pick.tolerations:
        result["tolerations"] = [dict(t) for t in pick.tolerations]
    if device.binding_conditions:
        result["bindingConditions"] = list(device.binding_conditions)
    if device.binding_failure_conditions:
        result["bindingFailureConditions"] = list(device.binding_failure_conditions)
    if pick.share_id:
        result["shareID"] = pick.share_id
    if pick.consumption:
        result["consumedCapacity"] = {status_name(fq, device): text for fq, (_, text) in pick.consumption.items()}
    return result


def build_config(claim: dict[str, Any], used: Sequence[tuple[str, dict[str, Any] | None]]) -> list[dict[str, Any]]:
    """``devices.config``: class configs once per class (FromClass), then claim configs (FromClaim).

    ``used`` lists per claim request (in order) the chosen ``req``/``req/sub`` name and its class.
    A config naming every request of the claim gets an empty ``requests`` ("applies to all").
    """
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for name, cls in used:
        if cls is None:
            continue
        class_name = cls["metadata"]["name"]
        if class_name in by_class:
            for entry in by_class[class_name]:
                entry["requests"].append(name)
            continue
        entries = [{"source": "FromClass", "requests": [name], **_configuration(c)}
                   for c in (cls.get("spec") or {}).get("config") or ()]
        by_class[class_name] = entries
        config.extend(entries)
    chosen = [name for name, _ in used]
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
    for entry in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
        names = list(entry.get("requests") or ())
        if not names:
            config.append({"source": "FromClaim", **_configuration(entry)})
            continue
        # Upstream appends the config once per matching request (a config naming two requests
        # appears twice); kept for identical results.
        for request, picked in zip(requests, chosen, strict=True):
            if request["name"] in names or (picked != request["name"] and picked in names):
                config.append({"source": "FromClaim", "requests": names, **_configuration(entry)})
    for entry in config:
        if len(entry.get("requests", ())) == len(requests):
            entry.pop("requests", None)
    return config


def _configuration(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("requests", "source")}


def node_selector(picks: Sequence[Picked], node_name: str) -> dict[str, Any] | None:
    """Where the allocation is usable: the node itself for node-local devices, else the merged
    slice/device selectors, else everywhere (None)."""
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for pick in picks:
        device, slice_ = pick.device, pick.device.slice
        if slice_.per_device:
            local, selector = device.node_name, device.node_selector
        else:
            local, selector = slice_.node_name, slice_.node_selector
        if local or device.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        terms = (selector or {}).get("nodeSelectorTerms") or ()
        if len(terms) == 1:
            _merge(terms[0].get("matchFields") or (), fields)
            _merge(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _merge(requirements: Sequence[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    for req in requirements:
        values = set(req.get("values") or ())
        if not any(r.get("key") == req.get("key") and r.get("operator") == req.get("operator")
                   and set(r.get("values") or ()) == values for r in into):
            into.append(dict(req))
