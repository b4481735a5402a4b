"""The demo's scenarios in-process, and its page as a real browser renders it.

The page is checked in headless Chromium (Debian's ``chromium`` package, installed by
``.ci/run``): the DOM the browser builds holds a card per node and a cell per device, each held
device coloured and labelled with its group, and a screenshot is taken (look at it with
``FAKEAPI_KEEP_SCREENSHOT=path``).  Without Chromium the browser test is skipped, saying so.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from fakeapi.config import FeatureGates
from fakeapi.demo.scenarios import build
from fakeapi.demo.story import DemoOptions, run_demo

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]


async def play(name: str, page: Path, **sizes: int | None) -> str:
    options = {"nodes": 2, "groups": 1, "pods_per_group": None, **sizes}
    out = io.StringIO()
    code = await run_demo(DemoOptions(build(name, **options), live=False, pace=0.0, html=page, keep_serving=False,
                                      gates=FeatureGates()), Console(file=out, width=140))
    assert code == 0, out.getvalue()
    return out.getvalue()


def held_by(page: str) -> list[str]:
    return re.findall(r'<div class="dev" style="background:#[0-9a-f]{6};color:#fff">.*?<i>([^<]+)</i>', page)


async def test_gang_one_wins_whole_then_the_other(tmp_path: Path) -> None:
    page = tmp_path / "gang.html"
    log = await play("gang", page)
    assert "Two gangs of 5 pods, one GPU each, want 10 of 8 GPUs" in log
    first, second = page.read_text().split("After step 3")
    assert len(held_by(first)) == 5 and len(set(held_by(first))) == 1
    assert len(held_by(second)) == 5 and set(held_by(second)) != set(held_by(first))


@pytest.mark.parametrize(("name", "sizes", "holders"), [
    ("constraint", {"nodes": 3, "groups": 2, "pods_per_group": 3}, {"training/workers[r0]": 3,
                                                                    "training/workers[r1]": 3}),
    ("deployment", {"nodes": 2}, {"training/workers": 2}),
], ids=["constraint", "deployment"])
async def test_scenarios_place_each_group_in_one_block(tmp_path: Path, name, sizes, holders) -> None:
    page = tmp_path / f"{name}.html"
    await play(name, page, **sizes)
    text = page.read_text()
    assert {h: held_by(text).count(h) for h in set(held_by(text))} == holders
    blocks = re.findall(r'<span>[AH]100 · (block-\d)</span><i>([^<]+)</i>', text)
    held = {(block, holder) for block, holder in blocks if holder != "free"}
    assert len({holder for _, holder in held}) == len(held)  # each group's devices in one block


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install chromium; "
                                             ".ci/run installs it)")
def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "kep5729.html"
    asyncio.run(play("kep5729", page, groups=2))
    assert CHROMIUM is not None
    common = [CHROMIUM, *HEADLESS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900"]
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    assert dom.count('class="node"') == 2 and dom.count('class="dev"') == 8
    assert sorted(held_by(dom)) == ["training-0"] * 2 + ["training-1"] * 2
    shot = tmp_path / "page.png"
    subprocess.run([*common, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=60, check=True)
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == (1200, 900)
    if os.environ.get("FAKEAPI_KEEP_SCREENSHOT"):
        shutil.copy(shot, os.environ["FAKEAPI_KEEP_SCREENSHOT"])


async def test_live_view_on_a_terminal(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=140)
    options = DemoOptions(build("kep5729", nodes=2, groups=1, pods_per_group=2), live=True, pace=0.0,
                          html=tmp_path / "p.html", keep_serving=False, gates=FeatureGates())
    assert await run_demo(options, console) == 0
    screen = out.getvalue()
    assert "▶ 3. 2 pods join each group" in screen and "✔ 5. The PodGroups are deleted" in screen
    assert "nodes and devices" in screen and "reservedFor" in screen
