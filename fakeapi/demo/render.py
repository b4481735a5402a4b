"""What the demo shows: the live view (rich) of nodes and devices, claims and pods, with a line
per step; the same tables once per step for ``--no-live``; and the HTML page of which devices
each pod group got (:func:`html_page`, self-contained: inline CSS, no scripts, no fetches)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fakeapi.demo.scenarios import Scenario, Snapshot, claim_holder, devices_of, group_of

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f")
PHASE_STYLE = {"Running": "green", "Pending": "yellow", "Succeeded": "blue", "Failed": "red"}


def holders(snapshot: Snapshot) -> dict[tuple[str, str], str]:
    """(pool, device) -> the pod group (or pod) whose claim holds it."""
    return {device: claim_holder(claim, snapshot) for claim in snapshot.claims for device in devices_of(claim)}


def colours(names: Sequence[str]) -> dict[str, str]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(set(names)))}


def _attr(device: dict, name: str) -> str:
    value = (device.get("attributes") or {}).get(name) or {}
    return str(next(iter(value.values()), ""))


def tables(snapshot: Snapshot) -> list[Table]:
    held = holders(snapshot)
    colour = colours(list(held.values()))
    devices = Table(title="nodes and devices", title_justify="left")
    for column in ("node", "device", "model", "block", "held by"):
        devices.add_column(column)
    for s in sorted(snapshot.slices, key=lambda s: s["spec"].get("nodeName", "")):
        pool = s["spec"]["pool"]["name"]
        for d in s["spec"].get("devices") or []:
            holder = held.get((pool, d["name"]))
            devices.add_row(s["spec"].get("nodeName", ""), d["name"], _attr(d, "model"), _attr(d, "gpu/blockName"),
                            Text(holder, style=f"bold {colour[holder]}") if holder else Text("free", style="dim"))
    claims = Table(title="resource claims", title_justify="left")
    for column in ("claim", "owner", "devices", "reservedFor"):
        claims.add_column(column)
    for c in snapshot.claims:
        owners = ", ".join(f"{o['kind']}/{o['name']}" for o in c["metadata"].get("ownerReferences") or [])
        reserved = ", ".join(f"{r['resource']}/{r['name']}" for r in (c.get("status") or {}).get("reservedFor") or [])
        claims.add_row(c["metadata"]["name"], owners, ", ".join(f"{p}/{d}" for p, d in devices_of(c)) or "-",
                       reserved or "-")
    pods = Table(title="pods", title_justify="left")
    for column in ("pod", "group", "phase", "node"):
        pods.add_column(column)
    for p in snapshot.pods:
        phase = snapshot.phase(p)
        pods.add_row(p["metadata"]["name"], group_of(p), Text(phase, style=PHASE_STYLE.get(phase, "")),
                     (p.get("spec") or {}).get("nodeName") or "-")
    return [devices, claims, pods]


def step_lines(scenario: Scenario, current: int, done: bool) -> Text:
    text = Text(f"fakeapi demo: {scenario.title}\n", style="bold")
    for i, step in enumerate(scenario.steps):
        if i < current or done:
            mark, style = "✔", "green"
        else:
            mark, style = ("▶", "bold yellow") if i == current else ("·", "dim")
        text.append(f" {mark} {i + 1}. {step.title}\n", style=style)
    return text


def live_view(scenario: Scenario, current: int, snapshot: Snapshot, done: bool = False) -> RenderableType:
    return Group(step_lines(scenario, current, done), *tables(snapshot))


@dataclass
class Picture:
    """The placement at the end of one step, for the page."""

    caption: str
    snapshot: Snapshot


def _node_card(node: str, snapshot: Snapshot, held: dict[tuple[str, str], str], colour: dict[str, str]) -> str:
    cells = []
    for s in snapshot.slices:
        if s["spec"].get("nodeName") != node:
            continue
        pool = s["spec"]["pool"]["name"]
        for d in s["spec"].get("devices") or []:
            holder = held.get((pool, d["name"]))
            style = f' style="background:{colour[holder]};color:#fff"' if holder else ""
            label = html.escape(holder) if holder else "free"
            cells.append(f'<div class="dev"{style}><b>{html.escape(d["name"])}</b>'
                         f'<span>{html.escape(_attr(d, "model"))} · {html.escape(_attr(d, "gpu/blockName"))}</span>'
                         f"<i>{label}</i></div>")
    pods = [p["metadata"]["name"] for p in snapshot.pods if (p.get("spec") or {}).get("nodeName") == node]
    return (f'<section class="node"><h3>{html.escape(node)}</h3><div class="devs">{"".join(cells)}</div>'
            f'<p class="pods">pods: {html.escape(", ".join(sorted(pods)) or "none")}</p></section>')


def _picture(picture: Picture, colour: dict[str, str]) -> str:
    snapshot = picture.snapshot
    held = holders(snapshot)
    nodes = sorted(n["metadata"]["name"] for n in snapshot.nodes)
    legend = []
    for group in sorted(set(held.values())):
        devices = sorted(f"{pool}/{dev}" for (pool, dev), holder in held.items() if holder == group)
        members = sorted(p["metadata"]["name"] for p in snapshot.pods if group_of(p) == group)
        legend.append(f'<li><span class="swatch" style="background:{colour[group]}"></span><b>{html.escape(group)}</b>'
                      f" — {len(devices)} device(s): {html.escape(', '.join(devices))}"
                      f"<br><small>pods: {html.escape(', '.join(members) or '-')}</small></li>")
    return (f"<h2>{html.escape(picture.caption)}</h2><ul class=\"legend\">{''.join(legend)}</ul>"
            f'<div class="nodes">{"".join(_node_card(n, snapshot, held, colour) for n in nodes)}</div>')


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;background:#f6f7f9;color:#1d2330}
h1{margin:0 0 4px;font-size:22px} .sub{color:#5b6475;margin:0 0 16px}
h2{font-size:17px;margin:22px 0 8px}
.nodes{display:flex;flex-wrap:wrap;gap:14px}
.node{background:#fff;border:1px solid #d8dce3;border-radius:10px;padding:10px 12px;width:270px}
.node h3{margin:0 0 8px;font-size:15px}
.devs{display:grid;grid-template-columns:repeat(2,1fr);gap:8px}
.dev{border:1px solid #cfd5de;border-radius:8px;padding:6px 8px;background:#eef1f5;display:flex;flex-direction:column}
.dev span{font-size:12px;opacity:.85} .dev i{font-size:12px;font-style:normal;margin-top:2px}
.pods{font-size:12px;color:#5b6475;margin:8px 0 0}
.legend{list-style:none;padding:0;margin:0 0 10px} .legend li{margin:4px 0}
.swatch{display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:6px;vertical-align:-1px}
ol.steps{margin:6px 0 0;padding-left:20px;color:#38404f}
"""


def html_page(scenario: Scenario, pictures: Sequence[Picture], elapsed: float) -> str:
    """A self-contained page: the scenario's steps, then each picture (devices per pod group)."""
    steps = "".join(f"<li>{html.escape(step.title)}</li>" for step in scenario.steps)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    # One colour per group across the page, so a group looks the same in every picture.
    colour = colours([holder for p in pictures for holder in holders(p.snapshot).values()])
    body = "".join(_picture(p, colour) for p in pictures)
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fakeapi demo: "
            f"{html.escape(scenario.title)}</title><style>{CSS}</style></head><body>"
            f"<h1>fakeapi demo — {html.escape(scenario.title)}</h1>"
            f'<p class="sub">scenario <b>{scenario.name}</b>, {when}, {elapsed:.2f}s end to end</p>'
            f'<ol class="steps">{steps}</ol>{body}</body></html>\n')
