"""``FakeCluster(control_plane="process")`` when its child dies, or is stopped while starting.

A dead control plane is not restarted: the next API request answers 503 with the reason, the
exit is logged once, and ``stop()`` cleans up everything and then raises ``ControlPlaneExited``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest
from fakeapi.fixtures.waiting import wait_for

from fakeapi.cluster import ControlPlaneExited, FakeCluster

DEADLINE = 30.0


def proc_stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, ...); None once gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def control_plane_children(parent: int | None = None) -> list[int]:
    """Live (not yet reaped, zombies included) ``fakeapi.scheduler`` children of ``parent``
    (this process by default)."""
    parent = parent or os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = proc_stat(entry.name)
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if stat is not None and int(stat[1]) == parent and b"fakeapi.scheduler" in cmdline:
            found.append(int(entry.name))
    return found


async def only_child() -> int:
    [pid] = await wait_for(control_plane_children, timeout=DEADLINE, message="the control plane process")
    return pid


def assert_gone(pid: int) -> None:
    """Reaped: not even a zombie is left."""
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_killed_control_plane_fails_the_next_request_and_stop(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "fakeapi")
    cluster = await FakeCluster(control_plane="process").start()
    kubeconfig = cluster.kubeconfig_path
    pid = await only_child()
    os.kill(pid, signal.SIGKILL)
    async with aiohttp.ClientSession(base_url=cluster.url) as session:
        async def refused() -> dict | None:
            async with session.get("/api/v1/namespaces/default/pods") as resp:
                assert resp.status in (200, 503)
                return await resp.json() if resp.status == 503 else None

        status = await wait_for(refused, timeout=DEADLINE, message="503 once the supervisor noticed")
    assert status["reason"] == "ServiceUnavailable"
    assert f"control plane process (pid {pid}) was killed by SIGKILL" in status["message"]
    assert [r.getMessage() for r in caplog.records] == [status["message"]]
    with pytest.raises(ControlPlaneExited, match="was killed by SIGKILL"):
        await cluster.stop()
    assert_gone(pid)
    assert not kubeconfig.exists()
    await cluster.stop()  # a second stop has nothing left to do or report


async def test_stop_right_after_the_child_died_still_reports_it() -> None:
    cluster = await FakeCluster(control_plane="process").start()
    pid = await only_child()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ControlPlaneExited, match="was killed by SIGKILL"):
        await cluster.stop()
    assert_gone(pid)


async def test_a_normal_stop_raises_nothing_and_leaves_no_process() -> None:
    cluster = await FakeCluster(control_plane="process").start()
    pid = await only_child()
    await cluster.stop()
    assert_gone(pid)


@pytest.mark.parametrize("how", ["stop", "cancel"])
async def test_stopping_while_the_child_starts_leaves_nothing_behind(how: str) -> None:
    cluster = FakeCluster(control_plane="process")
    starting = asyncio.create_task(cluster.start())
    pid = await only_child()
    assert not starting.done()  # it has not printed its ready line yet
    if how == "stop":
        await cluster.stop()
        with pytest.raises(ControlPlaneExited, match="was stopped before it was ready"):
            await starting
    else:
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
    assert_gone(pid)
    with pytest.raises(aiohttp.ClientConnectionError):
        async with aiohttp.ClientSession() as session, session.get(f"{cluster.url}/version"):
            pass


async def test_a_child_that_cannot_start_fails_start_and_undoes_it(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"  # a path given is written at start (else when first read)
    cluster = FakeCluster(control_plane="process", kubeconfig_path=kubeconfig)
    monkeypatch.setattr(sys, "executable", "/bin/false")   # a child that exits at once, never ready
    with pytest.raises(ControlPlaneExited, match="exited with code 1 before it was ready"):
        await cluster.start()
    assert control_plane_children() == []
    assert not kubeconfig.exists()
    with pytest.raises(aiohttp.ClientConnectionError):
        async with aiohttp.ClientSession() as session, session.get(f"{cluster.url}/version"):
            pass


_ORPHANING_PARENT = """
import asyncio, os, sys
from fakeapi.cluster import FakeCluster

async def main():
    await FakeCluster(control_plane="process").start()
    print(os.getpid(), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its new parent to reap it does not)."""
    stat = proc_stat(pid)
    return stat is not None and stat[0] != "Z"


async def test_the_child_stops_when_its_parent_is_killed_without_cleanup() -> None:
    # SIGKILL leaves FakeCluster no chance to stop its child; the child notices it was orphaned.
    parent = await asyncio.create_subprocess_exec(sys.executable, "-c", _ORPHANING_PARENT,
                                                  stdout=asyncio.subprocess.PIPE)
    assert parent.stdout is not None
    line = await asyncio.wait_for(parent.stdout.readline(), DEADLINE)
    assert int(line) == parent.pid

    [child] = control_plane_children(parent.pid)
    parent.kill()
    await parent.wait()

    await wait_for(lambda: not _running(child), timeout=DEADLINE, message="the orphaned control plane to stop")
