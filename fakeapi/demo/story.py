"""``fakeapi demo``: a scenario end to end on an embedded cluster, as a person watches it.

Each step of the scenario (:mod:`fakeapi.demo.scenarios`) acts through the public API, then the
demo re-reads the cluster until the step's promised state holds, refreshing the live view
(``rich``) as objects change, and checks what must hold then; a failed check or a step that
never completes exits 1.  ``--no-live`` (the default when standard output is not a terminal,
as in CI and ``make demo`` piped) prints each step and its tables once.  At the end the
placement pictures go to a self-contained HTML page whose path is printed; ``--keep-serving``
then leaves the server up for kubectl until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.live import Live

from fakeapi.cluster import FakeCluster
from fakeapi.config import FeatureGates
from fakeapi.demo.render import Picture, html_page, live_view, tables
from fakeapi.demo.scenarios import Scenario, Snapshot
from fakeapi.kube import WaitTimeout

STEP_TIMEOUT = 30.0
REFRESH = 0.05  # seconds between re-reads while a step is under way


class StoryFailed(Exception):
    """The cluster did something a real one would not; the demo exits non-zero."""


@dataclass
class DemoOptions:
    scenario: Scenario
    live: bool
    pace: float
    html: Path | None
    keep_serving: bool
    gates: FeatureGates


class _Screen:
    """The live view, or the plain log of ``--no-live``."""

    def __init__(self, scenario: Scenario, console: Console, live: bool) -> None:
        self.scenario = scenario
        self.console = console
        self._live = Live(console=console, refresh_per_second=12, transient=False) if live else None

    def __enter__(self) -> _Screen:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def starting(self, index: int, snapshot: Snapshot) -> None:
        if self._live is None:
            self.console.print(f"\n==> {index + 1}. {self.scenario.steps[index].title}", highlight=False)
        else:
            # Drawn now: a step that completes between two automatic refreshes still shows it began.
            self._live.update(live_view(self.scenario, index, snapshot), refresh=True)

    def progress(self, index: int, snapshot: Snapshot) -> None:
        if self._live is not None:
            self._live.update(live_view(self.scenario, index, snapshot))

    def finished(self, index: int, snapshot: Snapshot, seconds: float) -> None:
        if self._live is None:
            for table in tables(snapshot):
                self.console.print(table)
            self.console.print(f"    done in {seconds:.2f}s", highlight=False)
        else:
            self._live.update(live_view(self.scenario, index + 1, snapshot, done=index + 1 == len(self.scenario.steps)))


async def run_story(cluster: FakeCluster, options: DemoOptions, console: Console) -> list[Picture]:
    """Play every step; return the pictures the steps asked for."""
    scenario = options.scenario
    pictures: list[Picture] = []
    snapshot = await Snapshot.read(cluster)
    with _Screen(scenario, console, options.live) as screen:
        for index, step in enumerate(scenario.steps):
            screen.starting(index, snapshot)
            started = time.perf_counter()
            await step.action(cluster, snapshot)
            deadline = started + STEP_TIMEOUT
            while True:
                snapshot = await Snapshot.read(cluster)
                screen.progress(index, snapshot)
                if step.until(snapshot):
                    break
                if time.perf_counter() > deadline:
                    raise WaitTimeout(f"step {index + 1} ({step.title}) did not complete in {STEP_TIMEOUT:.0f}s")
                await asyncio.sleep(REFRESH)
            problems = step.check(snapshot)
            if problems:
                raise StoryFailed(f"step {index + 1}: " + "; ".join(problems))
            screen.finished(index, snapshot, time.perf_counter() - started)
            if step.picture:
                pictures.append(Picture(f"After step {index + 1}: {step.picture}", snapshot))
            await asyncio.sleep(options.pace)
    return pictures


async def _serve_until_interrupted(cluster: FakeCluster, console: Console) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    console.print(f"serving on {cluster.url}; try: KUBECONFIG={cluster.kubeconfig_path} kubectl get "
                  "pods,resourceclaims,podgroups -A   (Ctrl-C stops)", highlight=False)
    await stop.wait()


async def run_demo(options: DemoOptions, console: Console | None = None) -> int:
    """Start an embedded cluster, play the scenario, write the page; return the exit code."""
    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal:  # a log file or pipe: wide enough for the tables
            console = Console(highlight=False, width=120)
    started = time.perf_counter()
    async with FakeCluster(feature_gates=options.gates) as cluster:
        console.print(f"fakeapi serving on {cluster.url} (kubeconfig {cluster.kubeconfig_path})")
        try:
            pictures = await run_story(cluster, options, console)
        except (StoryFailed, WaitTimeout) as exc:
            print(f"\nstory failed: {exc}", file=sys.stderr)
            return 1
        elapsed = time.perf_counter() - started
        path = options.html or Path(tempfile.gettempdir()) / f"fakeapi-demo-{options.scenario.name}.html"
        path.write_text(html_page(options.scenario, pictures, elapsed))
        console.print(f"\n{options.scenario.title}: story complete in {elapsed:.2f}s")
        console.print(f"placement picture: {path}")
        if options.keep_serving:
            await _serve_until_interrupted(cluster, console)
    return 0
