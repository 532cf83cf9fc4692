"""Daemons a command starts end with its call — and nothing else does — over the wire.

The sidecar runs as a subprocess with the console driver in ``auto`` mode; a ``!`` command
starts a daemon that leaves the call's session and its parent (a double fork under
``setsid``), writing its pid to a file. When the call ends — normally, by ``session/cancel``,
by its timeout, or because SIGHUP stopped the sidecar — that daemon must be gone (killed and,
while the sidecar lives, reaped), while a command of another session keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.server.wire import WireClient, initialized

# Daemons of the sidecar process (it reaps them), SIGHUP. One sidecar serves the module's tests
# (a session each), but the one that stops it.
pytestmark = [pytest.mark.process, pytest.mark.asyncio(loop_scope="module")]

BOUND = 20.0
"""Generous: each wait ends as soon as its condition holds."""


def daemon(name: str) -> str:
    """Shell text that starts a double-forked ``setsid`` daemon, its pid written to ``name``,
    and waits until it is written."""
    return (
        f"(setsid sh -c 'echo $$ > {name}.tmp && mv {name}.tmp {name}; exec sleep 1000' &); "
        f"until [ -e {name} ]; do sleep 0.05; done"
    )


def foreground(name: str) -> str:
    """Shell text that runs a long ``sleep`` in the call itself, its pid written to ``name``."""
    return f"sh -c 'echo $$ > {name}.tmp && mv {name}.tmp {name}; exec sleep 1000'"


async def pid_in(path: Path) -> int:
    """The pid written to ``path``, once it is there."""
    for _ in range(int(BOUND / 0.05)):
        if path.exists():
            return int(path.read_text())
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path.name} was never written")


def state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``Z`` for a zombie), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat.rsplit(b")", 1)[1].split()[0].decode()


def gone(pid: int) -> bool:
    """Whether ``pid`` is gone for good: killed and reaped."""
    return state(pid) is None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead)."""
    return state(pid) not in (None, "Z", "X")


async def until(condition: Any, what: str) -> None:
    for _ in range(int(BOUND / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(what)


@contextlib.contextmanager
def killed_afterwards(*paths: Path) -> Iterator[None]:
    """Kill what the pid files name when the test ends, passed or failed."""
    try:
        yield
    finally:
        for path in paths:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(path.read_text()), signal.SIGKILL)


def console(store: Path) -> AbstractAsyncContextManager[tuple[WireClient, Process]]:
    """A sidecar with the console driver, initialized."""
    return initialized("--store", str(store / "store"), stderr=asyncio.subprocess.DEVNULL)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[WireClient]:
    """The module's sidecar (console driver, initialized); each test clears its updates."""
    async with console(tmp_path_factory.mktemp("daemons")) as (client, _process):
        yield client


@pytest.fixture
def client(shared: WireClient) -> WireClient:
    shared.updates.clear()
    return shared


async def auto_session(client: WireClient, cwd: Path) -> str:
    session = await client.new_session(str(cwd))
    await client.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    return session


def bash(command: str, **arguments: Any) -> str:
    return "/bash " + json.dumps({"command": command, **arguments})


async def test_a_daemon_is_gone_when_its_call_ends(tmp_path: Path, client: WireClient) -> None:
    with killed_afterwards(tmp_path / "d.pid"):
        session = await auto_session(client, tmp_path)
        prompt = await client.start_prompt(session, f"!{daemon('d.pid')}; echo started")
        response = await client.next_response(prompt, timeout=BOUND)
        assert response["result"]["stopReason"] == "end_turn"
        pid = await pid_in(tmp_path / "d.pid")
        # Killed and reaped by the sidecar: not even a zombie is left.
        await until(lambda: gone(pid), "the daemon outlived its call")


async def test_a_daemon_is_gone_after_cancel(tmp_path: Path, client: WireClient) -> None:
    with killed_afterwards(tmp_path / "d.pid"):
        session = await auto_session(client, tmp_path)
        prompt = await client.start_prompt(session, f"!{daemon('d.pid')}; sleep 1000")
        pid = await pid_in(tmp_path / "d.pid")
        await client.notify("session/cancel", {"sessionId": session})
        response = await client.next_response(prompt, timeout=BOUND)
        assert response["result"]["stopReason"] == "cancelled"
        await until(lambda: gone(pid), "the daemon outlived the cancel")


async def test_a_daemon_is_gone_after_a_timeout(tmp_path: Path, client: WireClient) -> None:
    with killed_afterwards(tmp_path / "d.pid"):
        session = await auto_session(client, tmp_path)
        command = bash(f"{daemon('d.pid')}; sleep 1000", timeout_ms=1500)
        prompt = await client.start_prompt(session, command)
        response = await client.next_response(prompt, timeout=BOUND)
        assert response["result"]["stopReason"] == "end_turn"
        assert any("Timed out" in json.dumps(update) for update in client.updates)
        pid = await pid_in(tmp_path / "d.pid")
        await until(lambda: gone(pid), "the daemon outlived the timeout")


async def test_another_sessions_command_keeps_running(tmp_path: Path, client: WireClient) -> None:
    with killed_afterwards(tmp_path / "a.pid", tmp_path / "b.pid", tmp_path / "c.pid"):
        first = await auto_session(client, tmp_path)
        second = await auto_session(client, tmp_path)
        running = await client.start_prompt(
            first, f"!{foreground('a.pid')} & {daemon('b.pid')}; wait"
        )
        long_runner = await pid_in(tmp_path / "a.pid")
        its_daemon = await pid_in(tmp_path / "b.pid")
        # The second session's call ends, normally and by cancel, while the first runs.
        ended = await client.start_prompt(second, f"!{daemon('c.pid')}; echo ok")
        await client.next_response(ended, timeout=BOUND)
        short_daemon = await pid_in(tmp_path / "c.pid")
        await until(lambda: gone(short_daemon), "its own daemon was left")
        cancelled = await client.start_prompt(second, "!sleep 1000")
        await asyncio.sleep(0.5)
        await client.notify("session/cancel", {"sessionId": second})
        await client.next_response(cancelled, timeout=BOUND)
        await asyncio.sleep(0.5)  # room for a wrong kill to land
        assert alive(long_runner) and alive(its_daemon)
        # Its own end still takes its own daemon.
        await client.notify("session/cancel", {"sessionId": first})
        response = await client.next_response(running, timeout=BOUND)
        assert response["result"]["stopReason"] == "cancelled"
        await until(lambda: not alive(long_runner), "the first call's command was left")
        await until(lambda: gone(its_daemon), "its daemon was left")


async def test_sighup_stops_the_sidecar_gracefully_and_leaves_no_command(tmp_path: Path) -> None:
    with killed_afterwards(tmp_path / "d.pid", tmp_path / "c.pid"):
        async with console(tmp_path) as (client, process):
            session = await auto_session(client, tmp_path)
            prompt = await client.start_prompt(
                session, f"!{daemon('d.pid')}; {foreground('c.pid')}"
            )
            daemon_pid = await pid_in(tmp_path / "d.pid")
            command_pid = await pid_in(tmp_path / "c.pid")
            process.send_signal(signal.SIGHUP)
            response = await client.next_response(prompt, timeout=BOUND)
            assert response["result"]["stopReason"] == "cancelled"
            assert await asyncio.wait_for(process.wait(), BOUND) == 0
            # Dead; once the sidecar is gone, reaping them is its parent's business.
            await until(lambda: not alive(daemon_pid), "the daemon outlived the sidecar")
            await until(lambda: not alive(command_pid), "the command outlived the sidecar")
