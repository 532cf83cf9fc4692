"""The held-log set and the recorder's release: which log is released, and what the user hears."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.updates import AgentMessageChunk
from acp_sidecar.server.held import HeldLogs
from acp_sidecar.server.recording import SessionRecorder
from acp_sidecar.store import SessionStore


class Log:
    def __init__(self, name: str, released: list[str], *, busy: bool = False) -> None:
        self.name = name
        self.busy = busy
        self._released = released

    def release(self) -> None:
        self._released.append(self.name)


def test_a_log_mid_turn_is_released_after_idle_ones() -> None:
    released: list[str] = []
    held = HeldLogs(2)
    streaming, idle, other = (Log(n, released) for n in ("streaming", "idle", "other"))
    streaming.busy = True
    held.touch(streaming)
    held.touch(idle)
    held.touch(other)  # the least recently used is mid-turn: the idle one goes instead
    assert released == ["idle"]
    held.touch(Log("new", released, busy=True))
    assert released == ["idle", "other"]


def test_when_every_log_is_mid_turn_the_least_recent_goes_but_never_the_one_used() -> None:
    released: list[str] = []
    held = HeldLogs(1)
    first, second = Log("first", released, busy=True), Log("second", released, busy=True)
    held.touch(first)
    held.touch(second)
    assert released == ["first"]
    held.touch(second)
    assert released == ["first"] and len(held) == 1


def test_a_failed_write_while_released_for_another_session_is_told_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(tmp_path)
    held = HeldLogs(1)
    told: dict[str, list[str]] = {"a": [], "b": []}
    a, b = (
        SessionRecorder(
            lambda: store, f"{n:032x}", str(tmp_path), "ask", held=held, tell=told[name].append
        )
        for n, name in ((1, "a"), (2, "b"))
    )
    a.prompt([TextContentBlock(text="hi")])
    a.update(AgentMessageChunk(content=TextContentBlock(text="pending text")))
    writer = a.writer()
    assert writer is not None

    def disk_full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer, "end_message", disk_full)
    b.prompt([TextContentBlock(text="hi")])  # a's log is released to hold b's: its write fails
    assert len(told["a"]) == 1 and "not being recorded" in told["a"][0], told
    assert "No space left on device" in told["a"][0]
    assert told["b"] == []
    a.close()
    b.close()
