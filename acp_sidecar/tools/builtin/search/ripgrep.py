"""The ripgrep engine of ``grep``: the same results as the Python one, faster.

ripgrep never chooses files: it gets the walk's candidates as paths, in batches, with
``--no-config --no-ignore --text``. A pattern it rejects reruns in Python on the same files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import re
import signal as signals
import threading
from collections.abc import AsyncIterator, Iterable, Iterator

from acp_sidecar.tools.builtin.files.encoding import SNIFF_BYTES, sniff_encoding
from acp_sidecar.tools.builtin.search.grep_match import (
    Candidate,
    FileMatches,
    LineMatch,
    SearchResult,
)
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.environment import child_environment

_RG_FIRST_BATCH = 1024
"""Files in ripgrep's first run (small, so a common pattern stops early); then ×4 a run."""
_RG_MAX_BATCH = 8192
_RG_MAX_ARG_CHARS = 256 * 1024
"""Well under Linux's limit on a command line's total size (a quarter of the stack limit)."""


class RipgrepRejected(Exception):
    """ripgrep refused the pattern (its regex syntax is narrower); search in Python."""


def _batches(candidates: Iterable[Candidate]) -> Iterator[list[Candidate]]:
    size = _RG_FIRST_BATCH
    batch: list[Candidate] = []
    chars = 0
    for candidate in candidates:
        batch.append(candidate)
        chars += len(candidate.below) + 1
        if len(batch) >= size or chars >= _RG_MAX_ARG_CHARS:
            yield batch
            batch, chars, size = [], 0, min(size * 4, _RG_MAX_BATCH)
    if batch:
        yield batch


class BatchFeed:
    """Candidates handed over in growing batches by a walk that runs in a worker thread, so
    ripgrep searches one batch while the next is being found."""

    def __init__(self, candidates: Iterable[Candidate], stop: threading.Event) -> None:
        """``stop`` is set by :meth:`close`; the walk behind ``candidates`` should poll it."""
        self._source = candidates
        self._queue: queue.SimpleQueue[list[Candidate] | None] = queue.SimpleQueue()
        self._stop = stop
        self._handed: list[list[Candidate]] = []
        self._ended = False
        """The end of the walk was taken from the queue (nothing more will come)."""
        self._task: asyncio.Future[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(asyncio.to_thread(self._produce))

    def _produce(self) -> None:
        try:
            for batch in _batches(self._source):
                if self._stop.is_set():
                    return
                self._queue.put(batch)
        finally:
            self._queue.put(None)

    async def batches(self) -> AsyncIterator[list[Candidate]]:
        """The batches, in walk order."""
        while (batch := await asyncio.to_thread(self._queue.get)) is not None:
            self._handed.append(batch)
            yield batch
        self._ended = True

    def replay(self) -> Iterator[Candidate]:
        """Every candidate from the first, handed over or not (blocking: for a worker thread)."""
        for handed in self._handed:
            yield from handed
        while not self._ended and (batch := self._queue.get()) is not None:
            yield from batch
        self._ended = True

    async def close(self) -> None:
        """Stop the walk and wait for its thread (re-raising what it raised)."""
        self._stop.set()
        if self._task is not None:
            await self._task


class _RecordParser:
    """Parses ``rg --null --with-filename --line-number`` output: ``path NUL line : text LF``.

    The path is read up to its NUL (so it may hold a newline), the text up to the newline (so
    it may hold NULs). Linear in the output, however long one line is.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.found: dict[str, list[LineMatch]] = {}

    def feed(self, chunk: bytes) -> None:
        buffer = self._buffer
        buffer += chunk
        start = 0
        while True:
            nul = buffer.find(b"\0", start)
            if nul < 0:
                break
            colon = buffer.find(b":", nul)
            end = buffer.find(b"\n", colon) if colon >= 0 else -1
            if end < 0:
                break
            path = os.fsdecode(bytes(buffer[start:nul]))
            text = bytes(buffer[colon + 1 : end]).decode("utf-8", "replace")
            line = LineMatch.of(int(buffer[nul + 1 : colon]), text.removesuffix("\r"))
            self.found.setdefault(path, []).append(line)
            start = end + 1
        del buffer[:start]


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signals.SIGKILL)


async def _run_rg(
    rg: str, arguments: list[str], cwd: str, signal: CancelSignal | None
) -> dict[str, list[LineMatch]]:
    process = await asyncio.create_subprocess_exec(
        rg,
        *arguments,
        cwd=cwd,
        env=child_environment(),  # not the sidecar's secrets
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    parser = _RecordParser()
    # Cancellation kills ripgrep, which ends its output: the read loop needs no polling.
    remove = signal.add_callback(lambda _reason: _kill(process)) if signal else None
    try:
        errors = asyncio.ensure_future(process.stderr.read())
        while chunk := await process.stdout.read(1 << 20):
            parser.feed(chunk)
        code = await process.wait()
        stderr = await errors
    finally:
        if remove is not None:
            remove()
        if process.returncode is None:
            _kill(process)
            await process.wait()
    if code == 2 and not parser.found and b"regex" in stderr.lower():
        raise RipgrepRejected(stderr.decode("utf-8", "replace"))
    return parser.found


def _binaries(paths: list[str]) -> set[str]:
    """Which of ``paths`` are binary by the shared rule (or unreadable)."""
    found: set[str] = set()
    for path in paths:
        try:
            with open(path, "rb") as stream:
                encoding = sniff_encoding(stream.read(SNIFF_BYTES))
        except OSError:
            encoding = None
        if encoding is None or encoding.codec.startswith("utf-32"):
            found.add(path)
    return found


async def _matches_of(
    rg: str, options: list[str], batch: list[Candidate], base: str, signal: CancelSignal | None
) -> list[tuple[Candidate, list[LineMatch]]]:
    """One ripgrep run over ``batch``: its text files with matches, in batch order."""
    found = await _run_rg(rg, options + [c.below for c in batch], base, signal)
    matched = [c for c in batch if c.below in found]
    binary = await asyncio.to_thread(_binaries, [c.path for c in matched])
    return [
        (c, sorted(found[c.below], key=lambda m: m.line)) for c in matched if c.path not in binary
    ]


async def rg_search(
    rg: str,
    batches: AsyncIterator[list[Candidate]],
    base: str,
    regex: re.Pattern[str],
    max_results: int,
    *,
    signal: CancelSignal | None = None,
) -> SearchResult:
    """Search each batch of candidates (paths below ``base``) with ripgrep, in order.

    Runs are pipelined: the next batch is searched while this one's results are taken, and a
    run still going when enough lines are found is killed.

    Raises:
        RipgrepRejected: ripgrep does not accept the pattern.
    """
    options = ["--no-config", "--no-ignore", "--text", "--no-messages", "--color", "never"]
    options += ["--no-heading", "--with-filename", "--line-number", "--null"]
    options += ["--max-count", str(max_results + 1)]
    if regex.flags & re.IGNORECASE:
        options.append("--ignore-case")
    options += ["--regexp", regex.pattern, "--"]
    files: list[FileMatches] = []
    count = searched = 0
    runs: list[tuple[asyncio.Future[list[tuple[Candidate, list[LineMatch]]]], int]] = []

    async def take_next() -> bool:
        """Add the oldest run's matches; ``True`` when there are more than ``max_results``."""
        nonlocal count, searched
        run, size = runs.pop(0)
        matches = await run
        if signal is None or not signal.cancelled:
            searched += size  # a run that cancel killed may have left files unread
        for candidate, lines in matches:
            if count + len(lines) > max_results:
                files.append(FileMatches(candidate.shown, tuple(lines[: max_results - count])))
                return True
            files.append(FileMatches(candidate.shown, tuple(lines)))
            count += len(lines)
        return False

    def more() -> SearchResult:
        return SearchResult(tuple(f for f in files if f.lines), True, "rg", searched=searched)

    try:
        async for batch in batches:
            if signal is not None and signal.cancelled:
                break
            started = asyncio.ensure_future(_matches_of(rg, options, batch, base, signal))
            runs.append((started, len(batch)))
            if len(runs) > 1 and await take_next():
                return more()
        while runs:
            if await take_next():
                return more()
        return SearchResult(tuple(files), False, "rg", searched=searched)
    finally:
        for run, _size in runs:
            run.cancel()
        await asyncio.gather(*(run for run, _size in runs), return_exceptions=True)
