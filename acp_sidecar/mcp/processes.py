"""A stdio MCP server's process group: who is in it, and ending whatever is left of it.

A pid that names a group cannot be reused while the group has members, so signalling the
group by the server's pid reaches only its own processes. Without ``/proc`` it looks empty.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Final

TERM_WAIT_S: Final = 1.0
"""How long what is left of a group gets after SIGTERM before SIGKILL."""
KILL_WAIT_S: Final = 1.0
"""How long :func:`end_group` waits for the group to vanish after SIGKILL."""
POLL_S: Final = 0.01


def _stat_fields(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` after the command: state, parent, group, session, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


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


async def end_group(
    pgid: int, *, term_wait: float = TERM_WAIT_S, kill_wait: float = KILL_WAIT_S
) -> None:
    """SIGTERM what is left of the group, SIGKILL it after ``term_wait``; wait at most
    ``kill_wait`` for it to vanish."""
    for sig, wait in ((signal.SIGTERM, term_wait), (signal.SIGKILL, kill_wait)):
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
