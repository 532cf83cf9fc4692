"""A stdio MCP server's processes: finding its group, and ending whatever is left of it.

The SDK starts a stdio server in a new session (``start_new_session``), so the server's pid is
also its process group's id, and every process it starts stays in that group unless it
leaves on purpose (``setsid``). The SDK does not expose the pid; :func:`child_with_stderr`
finds it as the child of ours whose stderr is the pipe we gave it.

Invariants:
- :func:`end_group` signals the group only while a live (non-zombie) member is in it, and
  returns when none is left or after :data:`KILL_WAIT_S` past SIGKILL; it never raises.
- A pid that names a group cannot be reused by the kernel while that group has members, so
  signalling the group by the server's pid reaches only the server's own processes.
- Without ``/proc`` (not Linux) these are no-ops: the SDK's own kill of the group stands.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

TERM_WAIT_S: Final = 1.0
"""How long what is left of a group gets after SIGTERM before SIGKILL."""
KILL_WAIT_S: Final = 1.0
"""How long :func:`end_group` waits for the group to vanish after SIGKILL."""
POLL_S: Final = 0.01


def child_with_stderr(pipe_inode: int) -> int | None:
    """The pid of this process's child whose fd 2 is the pipe with that inode, if any."""
    target = f"pipe:[{pipe_inode}]"
    for pid in _children():
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/2") == target:
                return pid
    return None


def _children() -> list[int]:
    """This process's children (from the kernel's list where it has one)."""
    try:
        return children_from_tasks()
    except OSError:
        return children_from_stat()


def children_from_tasks() -> list[int]:
    """This process's children, from ``/proc/self/task/*/children`` (raises OSError when
    the kernel does not provide it)."""
    return [
        int(pid)
        for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]


def children_from_stat() -> list[int]:
    """This process's children, found by each process's parent in ``/proc/*/stat``."""
    me = str(os.getpid())
    children: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            with contextlib.suppress(OSError, IndexError):
                if entry.isdigit() and _stat_fields(int(entry))[1] == me:
                    children.append(int(entry))
    return children


def _stat_fields(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` after the command: state, parent, group, session, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def watch_exit(pid: int, pipe_inode: int, on_exit: Callable[[], None]) -> Callable[[], None]:
    """Calls ``on_exit()`` (once, from the event loop) when the child ``pid`` exits.

    For a stdio server whose leader died while a grandchild still holds its stdout: no EOF
    ever comes then, so the exit itself must be watched. Uses a pidfd, checked after opening
    to still be our child on our pipe. Returns a function that stops watching. Without
    pidfds it watches nothing (the end of the server's stdout still tells).
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _nothing
    if child_with_stderr(pipe_inode) != pid:
        os.close(pidfd)
        return _nothing
    loop = asyncio.get_running_loop()
    closed = False

    def stop() -> None:
        nonlocal closed
        if not closed:
            closed = True
            loop.remove_reader(pidfd)
            os.close(pidfd)

    def exited() -> None:
        stop()
        on_exit()

    loop.add_reader(pidfd, exited)
    return stop


def _nothing() -> None:
    return None


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes whose process group is ``pgid``."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fields = _stat_fields(int(entry))
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


async def end_group(pgid: int) -> None:
    """SIGTERM what is left of the group, SIGKILL it after :data:`TERM_WAIT_S`."""
    for sig, wait in ((signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, KILL_WAIT_S)):
        if not group_members(pgid):
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            if not group_members(pgid):
                return
