"""The kept jobs of one sidecar process, on disk, so that the next start can stop them after a
crash; and that stop.

Invariants:
- One file per sidecar process (``<pid>-<start time>.json`` in the records directory), written
  atomically, removed once its last job is gone; a file whose owner still runs (same pid and
  start time) is never touched by another sidecar.
- Recovery signals only a process that is still the recorded one (pid *and* start time), or
  one that carries a recorded job's token in its environment; signals go through the
  reaper's pidfd check, so a reused pid is never hit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal as signals
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from acp_sidecar.tools.builtin.shell import reaper

RECOVERY_GRACE_S = 1.0
"""Between SIGTERM and SIGKILL for the processes of a crashed sidecar's jobs."""
_VERSION = 1


@attrs.frozen
class JobRecord:
    """What the next start needs to find one job's processes."""

    session_id: str
    number: int
    token: str
    """The job's call token (in the environment of everything it started)."""
    processes: tuple[tuple[int, int], ...]
    """Its processes when last scanned, as ``(pid, start time)``."""


def _identity(pid: int) -> tuple[int, int] | None:
    info = reaper.read_process(pid)
    return None if info is None else (pid, info.started)


class JobLedger:
    """This process's record file (module invariants); every change rewrites it whole."""

    def __init__(
        self, directory: Path | Callable[[], Path], owner: tuple[int, int] | None = None
    ) -> None:
        self._locate = directory
        self._owner = owner
        self._records: dict[tuple[str, int], JobRecord] = {}

    @property
    def directory(self) -> Path:
        """Where the records are (a callable given is asked when a job is first kept)."""
        if callable(self._locate):
            self._locate = self._locate()
        return self._locate

    @property
    def owner(self) -> tuple[int, int]:
        """The sidecar the records belong to, ``(pid, start time)``."""
        if self._owner is None:
            self._owner = _identity(os.getpid()) or (os.getpid(), 0)
        return self._owner

    @property
    def path(self) -> Path:
        """This process's record file."""
        return self.directory / f"{self.owner[0]}-{self.owner[1]}.json"

    def put(self, record: JobRecord) -> None:
        """Record (or refresh) one job."""
        self._records[(record.session_id, record.number)] = record
        self._write()

    def drop(self, session_id: str, number: int) -> None:
        """Forget one job (it was stopped, or it ended)."""
        if self._records.pop((session_id, number), None) is not None:
            self._write()

    def _write(self) -> None:
        try:
            if not self._records:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                return
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            body = {
                "version": _VERSION,
                "owner": list(self.owner),
                "jobs": [
                    {
                        "session": r.session_id,
                        "number": r.number,
                        "token": r.token,
                        "processes": [list(p) for p in r.processes],
                    }
                    for r in self._records.values()
                ],
            }
            fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    json.dump(body, file)
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError:
            # Recording is a safety net for a crash: a full disk must not fail the job.
            import logging

            logging.getLogger(__name__).warning("could not record kept jobs in %s", self.path)


def _owner_runs(owner: object) -> bool:
    if not (isinstance(owner, list) and len(owner) == 2 and all(type(n) is int for n in owner)):
        return False
    return _identity(owner[0]) == (owner[0], owner[1])


def _parse(path: Path) -> tuple[object, list[tuple[str, set[tuple[int, int]]]]] | None:
    """The owner and the jobs (token, processes) of a record file; None if unreadable."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        jobs = [
            (
                str(job["token"]),
                {(int(pid), int(started)) for pid, started in job["processes"]},
            )
            for job in body["jobs"]
        ]
        return body["owner"], jobs
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _targets(jobs: Iterable[tuple[str, set[tuple[int, int]]]]) -> list[reaper.ProcessInfo]:
    """The live processes that are the recorded ones (module invariants)."""
    table = reaper.snapshot() or {}
    recorded: set[tuple[int, int]] = set()
    entries: list[bytes] = []
    for token, processes in jobs:
        recorded |= processes
        entries.append(f"{reaper.CALL_VARIABLE}={token}".encode())
    me = os.getpid()
    return [
        info
        for info in table.values()
        if not info.dead
        and info.pid != me
        and (
            (info.pid, info.started) in recorded
            or any(reaper.carries(info.pid, entry) for entry in entries)
        )
    ]


def recover_jobs(directory: Path, grace: float = RECOVERY_GRACE_S) -> int:
    """Stop the jobs recorded by sidecars that are gone, and forget their records; how many
    processes were signalled. Blocking (a start runs it in a thread)."""
    try:
        if not directory.is_dir():
            return 0  # no sidecar kept a job here (a stat, not the glob's set-up: the cold start)
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return 0
    jobs: list[tuple[str, set[tuple[int, int]]]] = []
    finished: list[Path] = []
    for path in paths:
        parsed = _parse(path)
        if parsed is not None and _owner_runs(parsed[0]):
            continue  # another sidecar's, still running
        if parsed is not None:
            jobs.extend(parsed[1])
        finished.append(path)
    signalled = [info for info in _targets(jobs) if reaper.send(info, signals.SIGTERM)]
    deadline = time.monotonic() + grace
    left = signalled
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [info for info in left if _still(info)]
    for _ in range(reaper.KILL_ROUNDS):
        left = [info for info in left if _still(info)]
        if not left:
            break
        for info in left:
            reaper.send(info, signals.SIGKILL)
        time.sleep(0.05)
    for path in finished:
        with contextlib.suppress(OSError):
            path.unlink()
    return len(signalled)


def _still(info: reaper.ProcessInfo) -> bool:
    now = reaper.read_process(info.pid)
    return now is not None and now.started == info.started and not now.dead
