"""The commands that report on stdout: ``tools``, ``sessions``, ``replay`` (and its exports)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from acp_sidecar.command_line.serving import tools_provider

if TYPE_CHECKING:
    import argparse

    from acp_sidecar.bridge.translate import ToolLookup
    from acp_sidecar.store import SessionStore


def run_tools(args: argparse.Namespace) -> int:
    """``acp-sidecar tools``: every registered tool with its JSON Schema; the exit status is 1
    when a tool module failed to load (the tools that loaded are still listed)."""
    import json

    provider = tools_provider(args)
    schemas = provider.registry.schemas()
    status = 1 if provider.problems else 0
    if args.json:
        sys.stdout.write(json.dumps(schemas, indent=2) + "\n")
        return status
    for schema in schemas:
        sys.stdout.write(f"{schema['name']}\n")
        for line in schema["description"].strip().splitlines():
            sys.stdout.write(f"  {line}\n")
        parameters = json.dumps(schema["parameters"], indent=2).splitlines()
        sys.stdout.write("  parameters:\n" + "".join(f"    {line}\n" for line in parameters))
        sys.stdout.write("\n")
    return status


def report(message: str, status: int = 1) -> int:
    sys.stderr.write(f"acp-sidecar: {message}\n")
    return status


def run_sessions(args: argparse.Namespace) -> int:
    """``acp-sidecar sessions``: the stored sessions in a table."""
    import os

    from acp_sidecar.console import output_console
    from acp_sidecar.render.sessions import sessions_table
    from acp_sidecar.store import SessionStore, SessionSummary, StoreError

    store = SessionStore(args.store)
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    summaries: list[SessionSummary] = []
    cursor = None
    try:
        while True:
            page = store.list(cwd=cwd, cursor=cursor)
            summaries.extend(page.sessions)
            cursor = page.next_cursor
            if cursor is None:
                break
    except StoreError as exc:
        return report(str(exc))
    console = output_console(frames=True)
    if not summaries:
        where = f" for {cwd}" if cwd else ""
        console.print(f"No stored sessions{where} in {store.directory}.")
        return 0
    console.print(sessions_table(summaries))
    return 0


def run_export(args: argparse.Namespace, store: SessionStore, lookup: ToolLookup) -> int:
    """``acp-sidecar replay SESSION --html|--markdown [OUT]``: a transcript to share."""
    from acp_sidecar.export.command import Format, write_export
    from acp_sidecar.export.source import StoredSession
    from acp_sidecar.store import StoreError

    fmt: Format = "html" if args.html is not None else "markdown"
    out: str = args.html if args.html is not None else args.markdown
    try:
        path = store.locate(args.session)
        with StoredSession(
            path,
            lookup,
            terminal_output=args.terminal_output,
            notices=args.notices,
            compaction=args.compaction,
        ) as session:
            written = write_export(session, fmt, out)
    except StoreError as exc:
        return report(str(exc))
    except BrokenPipeError:
        return 0  # the reader of stdout went away (``| head``): nothing more to say
    except OSError as exc:
        return report(f"cannot write the {fmt} export: {exc}")
    if written is not None:
        sys.stderr.write(f"wrote {written}\n")
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """``acp-sidecar replay``: a stored session as the editor drew it (or its NDJSON)."""
    from acp_sidecar.agent.model.task import with_task_cards
    from acp_sidecar.console import output_console
    from acp_sidecar.export.replaying import replay_session
    from acp_sidecar.store import SessionStore, StoreError

    store = SessionStore(args.store)
    lookup = with_task_cards(tools_provider(args).registry.get)
    if args.html is not None or args.markdown is not None:
        return run_export(args, store, lookup)
    try:
        path = store.locate(args.session)
        return replay_session(
            path,
            lookup,
            as_json=args.json,
            terminal_output=args.terminal_output,
            notices=args.notices,
            compaction=args.compaction,
            console=output_console(frames=True),
        )
    except StoreError as exc:
        return report(str(exc))
