"""The event loop of the processes fakeapi owns: uvloop's when installed, asyncio's on request."""

from __future__ import annotations

import asyncio

import pytest

from fakeapi.config import new_event_loop, run_main

uvloop = pytest.importorskip("uvloop")


async def _loop_type() -> type:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize(("setting", "expected"), [(None, uvloop.Loop), ("1", uvloop.Loop),
                                                   ("0", asyncio.BaseEventLoop)],
                         ids=["default", "on", "off"])
def test_loop_choice(monkeypatch: pytest.MonkeyPatch, setting: str | None, expected: type) -> None:
    if setting is None:
        monkeypatch.delenv("FAKEAPI_UVLOOP", raising=False)
    else:
        monkeypatch.setenv("FAKEAPI_UVLOOP", setting)
    assert issubclass(run_main(_loop_type()), expected)
    loop = new_event_loop()
    try:
        assert isinstance(loop, expected)
        assert not isinstance(loop, uvloop.Loop) or setting != "0"
    finally:
        loop.close()
