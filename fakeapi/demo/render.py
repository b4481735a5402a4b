"""A plain-text picture of device placement: which claim holds which device, which pods run where."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def placement(nodes: list[dict[str, Any]], slices: list[dict[str, Any]], claims: list[dict[str, Any]],
              pods: list[dict[str, Any]]) -> str:
    holder: dict[tuple[str, str], str] = {}
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or []:
            holder[(result["pool"], result["device"])] = claim["metadata"]["name"]
    pods_on: dict[str, list[str]] = defaultdict(list)
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            pods_on[node].append(pod["metadata"]["name"])
    lines = []
    for node in sorted(n["metadata"]["name"] for n in nodes):
        lines.append(f"    {node}   pods: {', '.join(sorted(pods_on[node])) or '-'}")
        for s in slices:
            if s["spec"].get("nodeName") != node:
                continue
            pool = s["spec"]["pool"]["name"]
            for device in s["spec"].get("devices") or []:
                model = ((device.get("attributes") or {}).get("model") or {}).get("string", "")
                owner = holder.get((pool, device["name"]))
                mark = f"[x] {owner}" if owner else "[ ] free"
                lines.append(f"      {device['name']:<8} {model:<6} {mark}")
    return "\n".join(lines)
