"""Benchmark: what undo costs. The log's growth per edited byte (and the blob store's), and
``/undo`` of a turn that touched 100 files of 100 KiB beside a plain copy of the same files.

Run: ``.venv/bin/python benchmarks/bench_undo.py [--files 100] [--kib 100] [--rounds 7]``

The edits go through a real ``ToolRegistry`` with the session's file-effect keeper (the
before-image kept, the change recorded) into a real session log. The undo is the command's
own path: the log read back (:func:`read_rewinds`), the conflict check (every file hashed),
then one card, one permission judgement (``auto``) and one atomic write (fsync) per file,
each recorded. The baseline, measured in the same run and alternating with it, copies the
same before-images over the files with ``shutil.copyfile`` (no fsync, not atomic). Prints
medians in ms and their ratio; the machine is shared and noisy: trust medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.effects import keep_file_effects
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.policy import CallScope
from acp_sidecar.protocol.updates import SessionUpdate
from acp_sidecar.server.undo.apply import apply_plan
from acp_sidecar.server.undo.keeper import SessionEffects
from acp_sidecar.server.undo.plan import plan_revert
from acp_sidecar.store.blobs import BlobStore, blobs_path
from acp_sidecar.store.reader import SessionLog
from acp_sidecar.store.records import HeaderRecord, TurnEndRecord, UserMessageRecord, utc_now
from acp_sidecar.store.rewinds import read_rewinds
from acp_sidecar.store.writer import SessionWriter
from acp_sidecar.tools import ToolExecutionInput, ToolRegistry
from acp_sidecar.tools.builtin import edit_tool
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.json_values import FrozenDict


class _NoAsker:
    async def request_permission(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("auto mode asks no one")


async def _nothing(_update: SessionUpdate) -> None:
    return None


def _session(root: Path) -> tuple[SessionWriter, CallScope, BlobStore]:
    work = root / "work"
    work.mkdir(exist_ok=True)
    log = root / "store" / "bench.jsonl"
    writer = SessionWriter.create(
        log, HeaderRecord(session_id="bench", cwd=str(work), created_at=utc_now())
    )
    blobs = BlobStore(blobs_path(log))
    scope = CallScope(
        session_id="bench",
        cards=CardContext(cwd=str(work)),
        policy=SessionPolicy(mode="auto"),
        send=_nothing,
        asker=_NoAsker(),  # type: ignore[arg-type]
        signal=CancelSignal(),
    )
    keeper = SessionEffects(scope, blobs, writer.append)
    return writer, CallScope(**{**_fields(scope), "effects": keeper}), blobs


def _fields(scope: CallScope) -> dict[str, object]:
    import attrs

    return {field.name: getattr(scope, field.name) for field in attrs.fields(CallScope)}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(edit_tool)
    registry.on_execute(keep_file_effects(registry.get))
    return registry


async def _edit_turn(
    registry: ToolRegistry, writer: SessionWriter, scope: CallScope, names: list[str], new: str
) -> None:
    writer.append(UserMessageRecord(content=(FrozenDict({"type": "text", "text": "edit"}),)))
    for index, name in enumerate(names):
        arguments = {"path": name, "old_string": "OLD-MARK", "new_string": new}
        call_id = f"call_{index}"
        writer.tool_call(call_id, "edit", arguments)
        result = await registry.execute(
            ToolExecutionInput(call_id=call_id, name="edit", arguments=arguments, context=scope)
        )
        assert not result.is_error, result
        writer.tool_result(result)
    writer.append(TurnEndRecord(stop_reason="end_turn"))


def _make_files(work: Path, count: int, size: int) -> list[str]:
    names = []
    line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
    body = (line * (size // len(line) + 1))[: size - 9]
    for index in range(count):
        name = f"f{index:03d}.txt"
        own = f"{name}\n".encode() + body[: size // 2 - 9]  # no two alike: no blob shared
        (work / name).write_bytes(own + b"OLD-MARK\n" + body[size // 2 :])
        names.append(name)
    return names


async def growth(kib: int) -> None:
    """The log's and the blob store's growth per edited byte, for edits of a few sizes."""
    print(f"log growth per edited byte (one edit of a {kib} KiB file per turn):")
    for edited in (16, 1024, 16 * 1024):
        with tempfile.TemporaryDirectory() as tmp:
            writer, scope, blobs = _session(Path(tmp))
            names = _make_files(Path(scope.cwd), 10, kib * 1024)
            start = writer.path.stat().st_size
            registry = _registry()
            for name in names:
                await _edit_turn(registry, writer, scope, [name], "n" * edited)
            writer.sync()
            grown = writer.path.stat().st_size - start
            stored = sum(p.stat().st_size for p in blobs.directory.iterdir())
            writer.close()
            total = edited * len(names)
            print(
                f"  {edited:>6} bytes an edit: log {grown / total:8.2f} bytes/edited byte "
                f"({grown // len(names)} bytes an edit, of which a file_change line "
                f"~{_change_line(writer.path)} bytes); blobs {stored / total:8.1f} bytes/edited "
                "byte (the whole before-image)"
            )


def _change_line(log: Path) -> int:
    lines = [line for line in log.read_bytes().splitlines() if b'"file_change"' in line]
    return len(lines[0]) + 1 if lines else 0


async def undo_rounds(files: int, kib: int, rounds: int) -> None:
    undo_ms: list[float] = []
    copy_ms: list[float] = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            writer, scope, blobs = _session(root)
            work = Path(scope.cwd)
            names = _make_files(work, files, kib * 1024)
            saved = root / "saved"
            shutil.copytree(work, saved)
            await _edit_turn(_registry(), writer, scope, names, "NEW-MARK")
            writer.sync()

            began = time.perf_counter()
            with SessionLog(writer.path, "bench") as log:
                rewinds = read_rewinds(log)
            [turn] = rewinds.active()
            plan = await asyncio.to_thread(
                plan_revert, turn.changes, rewinds.last_hash, scope, blobs, frozenset()
            )
            applied = await apply_plan(plan.reverts, scope, blobs, writer.append, "Undo")
            undo_ms.append((time.perf_counter() - began) * 1000)
            assert len(applied.reverted) == files and not plan.conflicts
            for name in names:
                assert (work / name).read_bytes() == (saved / name).read_bytes()

            await _edit_turn(_registry(), writer, scope, names, "NEW-MARK")
            began = time.perf_counter()
            for name in names:
                shutil.copyfile(saved / name, work / name)
            copy_ms.append((time.perf_counter() - began) * 1000)
            writer.close()
    undo, copy = statistics.median(undo_ms), statistics.median(copy_ms)
    print(f"/undo of a turn that edited {files} files of {kib} KiB ({rounds} rounds):")
    print(
        f"  undo (read log, check, card, judge, atomic write + fsync, record): median {undo:8.1f} ms"
    )
    print(
        f"  plain copy of the same files (shutil.copyfile, no fsync):         median {copy:8.1f} ms"
    )
    print(f"  ratio: {undo / copy:.1f}x")


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--kib", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args(argv)
    await growth(options.kib)
    await undo_rounds(options.files, options.kib, options.rounds)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    asyncio.run(main())
