"""Ending what one command started — its whole process tree, daemons included — and nothing else.

Invariants:
- A process is the call's when it is in the call's session, or a descendant of the sidecar
  (a subreaper) carrying the call's token or the call's parent. Nothing else is signalled.
- Signals and reaps go through a pidfd checked against the start time (no reused pid is hit);
  reaping is by pid, never ``waitpid(-1)`` (asyncio's child watcher would lose exit codes).
Limits: see SECURITY.md (a process that leaves the session *and* scrubs its environment…).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import threading
import time
from collections.abc import Mapping

import attrs

CALL_VARIABLE = "ACP_SIDECAR_CALL"
"""The environment variable that carries a call's token into everything it starts."""
POLL_S = 0.05
"""How often the grace checks whether the call's processes are gone (each check is a scan)."""
SWEEP_S = 1.0
"""How often the sweeper thread looks for orphaned zombies."""
ORPHAN_AGE_S = 5.0
"""How long a zombie child of the sidecar must stay one before :func:`sweep_orphans` reaps
it: an owner that waits for it has long collected it by then."""
KILL_ROUNDS = 50
"""SIGKILL rounds (each followed by a fresh scan) before giving up on a process that forks
faster than it is killed."""
SETTLE_S = 0.5
"""How long the end of a call waits for the processes it killed to die, to reap them (the
registry gives a cancelled call 2 s in all: 1 s of SIGTERM grace, then this)."""

_adopted: set[tuple[int, int]] = set()
"""Processes of calls, killed or found dead, that no end of a call has seen reaped yet:
``(pid, start time)``. Each end of a call reaps the ones now dead children of the sidecar."""

_zombies_seen: dict[tuple[int, int], float] = {}
"""Zombie children of the sidecar, ``(pid, start time)``, with when a sweep first saw them."""
_sweep_lock = threading.Lock()
_tree_walk = False
"""Whether scans walk the sidecar's tree (it is a subreaper: nothing of a call leaves it)."""


@attrs.frozen
class ProcessInfo:
    """One line of ``/proc/<pid>/stat``, the fields used here."""

    pid: int
    parent: int
    group: int
    session: int
    dead: bool
    """A zombie (or being reaped): it holds nothing and cannot be signalled."""
    started: int
    """Clock ticks after boot; with the pid, names the process for good."""


def read_process(pid: int) -> ProcessInfo | None:
    """The process ``pid`` as ``/proc`` shows it, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            line = stat_file.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields start after the last ")".
    fields = line.rsplit(b")", 1)[-1].split()
    try:
        return ProcessInfo(
            pid=pid,
            parent=int(fields[1]),
            group=int(fields[2]),
            session=int(fields[3]),
            dead=fields[0] in (b"Z", b"X", b"x"),
            started=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def snapshot() -> dict[int, ProcessInfo] | None:
    """Every process ``/proc`` shows, by pid; None without ``/proc``."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, ProcessInfo] = {}
    for name in names:
        if name.isdigit():
            info = read_process(int(name))
            if info is not None:
                table[info.pid] = info
    return table


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (of all its threads); [] when it is gone."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as children_file:
                found.extend(int(child) for child in children_file.read().split())
        except (OSError, ValueError):
            continue
    return found


def tree(root: int) -> dict[int, ProcessInfo]:
    """``root``'s descendants, by pid, walking ``/proc/<pid>/task/*/children``."""
    table: dict[int, ProcessInfo] = {}
    queue = [root]
    while queue:
        for child in _children(queue.pop()):
            if child not in table and child != root:
                info = read_process(child)
                if info is not None:
                    table[child] = info
                    queue.append(child)
    return table


def use_tree_walk() -> bool:
    """Scan the sidecar's own tree from now on (call once it is a subreaper); whether the
    kernel shows children lists (``CONFIG_PROC_CHILDREN``)."""
    global _tree_walk
    _tree_walk = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    return _tree_walk


def sweep_orphans(now: float | None = None) -> int:
    """Reap the zombie children of the sidecar that stayed zombies across sweeps at least
    :data:`ORPHAN_AGE_S` apart (module docstring); how many were reaped."""
    now = time.monotonic() if now is None else now
    me = os.getpid()
    reaped = 0
    with _sweep_lock:
        zombies: set[tuple[int, int]] = set()
        for pid in _children(me):
            info = read_process(pid)
            if info is not None and info.dead and info.parent == me:
                zombies.add((pid, info.started))
        for key in list(_zombies_seen):
            if key not in zombies:
                del _zombies_seen[key]  # collected by its owner, or reaped
        for key in zombies:
            first = _zombies_seen.setdefault(key, now)
            if now - first >= ORPHAN_AGE_S and _reap_exactly(*key):
                del _zombies_seen[key]
                reaped += 1
    return reaped


def _reap_exactly(pid: int, started: int) -> bool:
    """Reap the zombie ``pid`` if it is still the process started at ``started``."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False  # gone (or no pidfds: then never reap by a pid that may be reused)
    try:
        info = read_process(pid)
        if info is None or info.started != started or not info.dead:
            return False
        os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
        return True
    except ChildProcessError:
        return False  # its owner was quicker
    finally:
        os.close(pidfd)


def start_sweeper() -> threading.Thread:
    """Run :func:`sweep_orphans` every :data:`SWEEP_S` in a daemon thread."""

    def sweep_forever() -> None:
        while True:
            time.sleep(SWEEP_S)
            sweep_orphans()

    thread = threading.Thread(target=sweep_forever, name="orphan-sweeper", daemon=True)
    thread.start()
    return thread


def descendants(table: Mapping[int, ProcessInfo], root: int) -> list[ProcessInfo]:
    """The descendants of ``root`` in ``table``, each after its parent."""
    children: dict[int, list[ProcessInfo]] = {}
    for info in table.values():
        children.setdefault(info.parent, []).append(info)
    found: list[ProcessInfo] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(), ()):
            if child.pid != root:
                found.append(child)
                queue.append(child.pid)
    return found


def carries(pid: int, entry: bytes) -> bool:
    """Whether the environment ``pid`` was started with holds ``entry`` (``NAME=value``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ_file:
            environment = environ_file.read()
    except OSError:  # gone, another user's, or not dumpable
        return False
    return b"\0" + entry + b"\0" in b"\0" + environment + b"\0"


def send(info: ProcessInfo, sig: signals.Signals) -> bool:
    """Signal ``info``'s process if it is still the same process (same start time); whether
    it could be signalled (False when it is gone or another user's)."""
    try:
        pidfd = os.pidfd_open(info.pid)
    except ProcessLookupError:
        return False
    except OSError:  # no pidfds on this kernel: check, then signal by pid
        pidfd = None
    try:
        now = read_process(info.pid)
        if now is None or now.started != info.started:
            return False
        if pidfd is None:
            os.kill(info.pid, sig)
        else:
            signals.pidfd_send_signal(pidfd, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _reap(pending: set[tuple[int, int]]) -> bool:
    """Reap the processes in ``pending`` that died as children of the sidecar, and drop the
    ones that are gone; whether any is still alive. One dead under another parent stays in
    ``pending``: that parent reaps it, or dies and leaves it to the sidecar."""
    me = os.getpid()
    alive = False
    for pid, started in list(pending):
        info = read_process(pid)
        if info is None or info.started != started:
            pending.discard((pid, started))
        elif info.dead and info.parent == me:
            # A zombie's pid cannot be reused before it is reaped: this reaps exactly it.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            pending.discard((pid, started))
            _adopted.discard((pid, started))
        elif not info.dead:
            alive = True
    return alive


def _signallable(info: ProcessInfo) -> bool:
    """Whether the sidecar may signal ``info`` (it is there, and the same user's)."""
    try:
        os.kill(info.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member (when ``/proc`` cannot tell)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class CallProcesses:
    """The processes of one call: its environment tag, and ending them (module invariants)."""

    def __init__(self) -> None:
        import secrets  # at the first call: the reaper is imported at start-up

        self.token = secrets.token_hex(16)
        self._entry = f"{CALL_VARIABLE}={self.token}".encode()
        self.leader: int | None = None
        """The call's shell: its pid is the call's session and process group."""
        self._leader_started: int | None = None
        self._pending: set[tuple[int, int]] = set()
        """This call's processes that were signalled or found dead, not reaped yet."""
        self._ended = False

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with the call's tag, for the call's shell."""
        return {**base, CALL_VARIABLE: self.token}

    def started(self, pid: int) -> None:
        """The call's shell is running as ``pid``, leading a new session."""
        self.leader = pid
        info = read_process(pid)
        self._leader_started = info.started if info is not None else None

    def members(self) -> list[ProcessInfo] | None:
        """The call's processes now, dead ones included; None without ``/proc``."""
        table = tree(os.getpid()) if _tree_walk else snapshot()
        if table is None:
            return None
        leader = table.get(self.leader) if self.leader is not None else None
        # The call's session number cannot be reused while a process is in it; it can once
        # all are gone and the shell is reaped: then a new process of that pid is not ours.
        reused = leader is not None and leader.started != self._leader_started
        found = {
            info.pid: info for info in table.values() if info.session == self.leader and not reused
        }
        for info in descendants(table, os.getpid()):
            if info.pid not in found and (
                info.parent in found or (not info.dead and carries(info.pid, self._entry))
            ):
                found[info.pid] = info
        return list(found.values())

    def _signal_all(self, sig: signals.Signals) -> set[tuple[int, int]]:
        """Send ``sig`` to every live process of the call; the ones signalled, as
        ``(pid, start time)``."""
        members = self.members()
        if members is None:  # no /proc: the process group is all that can be found
            if self.leader is None or not _group_alive(self.leader):
                return set()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.leader, sig)
            return {(self.leader, 0)}
        signalled: set[tuple[int, int]] = set()
        for info in members:
            key = (info.pid, info.started)
            if not info.dead and send(info, sig):
                signalled.add(key)
            if info.pid != self.leader and (info.dead or key in signalled):
                self._pending.add(key)  # not the shell: asyncio reaps that one
        _adopted.update(self._pending)
        _reap(self._pending)
        return signalled

    async def end(self, grace: float) -> None:
        """SIGTERM every live process of the call, SIGKILL what is left after ``grace``;
        then reap what was killed (waiting at most :data:`SETTLE_S` for it to die)."""
        # The scans read /proc, process by process: in a worker thread, not on the loop.
        await asyncio.to_thread(_reap, _adopted)
        loop = asyncio.get_running_loop()
        if await asyncio.to_thread(self._signal_all, signals.SIGTERM):
            deadline = loop.time() + grace
            while True:
                await asyncio.sleep(POLL_S)
                if not await asyncio.to_thread(self.any_live):
                    break
                if loop.time() >= deadline:
                    for _ in range(KILL_ROUNDS):
                        if not await asyncio.to_thread(self._signal_all, signals.SIGKILL):
                            break
                        await asyncio.sleep(POLL_S)
                    break
        self._ended = True
        deadline = loop.time() + SETTLE_S
        while await asyncio.to_thread(_reap, self._pending) and loop.time() < deadline:
            await asyncio.sleep(POLL_S)
        await asyncio.to_thread(sweep_orphans)

    def any_live(self) -> bool:
        """Whether any process of the call still runs (one the sidecar may signal)."""
        members = self.members()
        if members is None:
            return self.leader is not None and _group_alive(self.leader)
        return any(not info.dead and _signallable(info) for info in members)

    def kill_now(self) -> None:
        """SIGKILL every process of the call at once (no grace, no waiting), unless
        :meth:`end` already ended them all."""
        if self._ended:
            return
        seen: set[tuple[int, int]] = set()
        for _ in range(KILL_ROUNDS):
            signalled = self._signal_all(signals.SIGKILL)
            if not signalled - seen:
                return  # nothing new was started since the last round
            seen |= signalled
